//===- compile.cpp - the vulkan plugin's compiler part --------------------===//
//
// libtessera_plugin_vulkan_compiler.so: Compiler_Compile for target
// "vulkan".  Tile IR kernels -> one SPIR-V module per kernel (the shared
// lowering of ir/lib/Conversion/TileToSPIRV), each checked by SPIRV-Tools'
// validator for the Vulkan 1.1 environment, returned together as an
// "archive:spirv" executable (tessera/kernel_archive.hpp); or the same
// archive (emit spirv) or their disassembly (emit spirv-asm).
//
//===----------------------------------------------------------------------===//
#include <spirv-tools/libspirv.h>

#include "compile_targets.hpp"
#include "compiler_part.hpp"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "plugin_support.hpp"
#include "tessera/Conversion/TileToSPIRV/Passes.h"
#include "tessera/Target/PluginCompiler.h"
#include "tessera/kernel_archive.hpp"

using namespace mlir;
using tessera::target::CompileRequest;
using tessera::target::CompileResult;
using tessera::target::KernelSpec;

namespace {

// SPIRV-Tools on one module: "" when valid, else the validator's message.
std::string Validate(const std::vector<uint32_t>& words) {
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_1);
  spv_diagnostic diagnostic = nullptr;
  spv_const_binary_t binary{words.data(), words.size()};
  spv_result_t r = spvValidate(context, &binary, &diagnostic);
  std::string out;
  if (r != SPV_SUCCESS) out = diagnostic && diagnostic->error ? diagnostic->error : "invalid SPIR-V";
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return out;
}

std::string Disassemble(const std::vector<uint32_t>& words) {
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_1);
  spv_text text = nullptr;
  spv_diagnostic diagnostic = nullptr;
  spv_result_t r = spvBinaryToText(context, words.data(), words.size(),
                                   SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES |
                                       SPV_BINARY_TO_TEXT_OPTION_INDENT,
                                   &text, &diagnostic);
  std::string out = r == SPV_SUCCESS && text ? std::string(text->str, text->length)
                                             : std::string("; cannot disassemble: ") +
                                                   (diagnostic && diagnostic->error ? diagnostic->error : "?") + "\n";
  spvTextDestroy(text);
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return out;
}

TsErrorCode Lower(ModuleOp module, const CompileRequest& request, CompileResult* result,
                  std::string* message) {
  tessera::spv::VulkanTargetOptions options;
  const std::string add = request.options.String("float_atomic_add", "native");
  if (add != "native" && add != "cas") {
    *message = "float_atomic_add='" + add + "': write native or cas";
    return TS_ERROR_INVALID_ARGUMENT;
  }
  options.nativeFloatAtomicAdd = add == "native";
  std::vector<tessera::spv::VulkanKernel> kernels;
  if (failed(tessera::spv::compileForVulkan(module, &kernels, options))) return TS_ERROR_UNSUPPORTED;
  const bool validate = request.options.Bool("validate", true);
  std::vector<tessera::ArchiveEntry> entries;
  std::string text;
  for (const tessera::spv::VulkanKernel& k : kernels) {
    if (validate) {
      std::string why = Validate(k.spirv);
      if (!why.empty()) {
        *message = "the SPIR-V of kernel '" + k.name + "' does not validate (vulkan1.1): " + why;
        return TS_ERROR_INTERNAL;
      }
    }
    tessera::ArchiveEntry e;
    e.name = k.name;
    e.data.assign(reinterpret_cast<const char*>(k.spirv.data()), k.spirv.size() * sizeof(uint32_t));
    entries.push_back(std::move(e));
    if (request.emit == "spirv-asm") text += "; kernel " + k.name + "\n" + Disassemble(k.spirv) + "\n";
    KernelSpec spec;
    spec.name = k.name;
    for (int d = 0; d < 3; ++d) {
      spec.grid[d] = static_cast<uint32_t>(k.grid[d]);
      spec.group_size[d] = static_cast<uint32_t>(k.groupSize[d]);
    }
    if (auto fn = module.lookupSymbol<func::FuncOp>(k.name))
      spec.params = tessera::target::ParamsOfArguments(fn, "i32");  // index is 32-bit in SPIR-V
    result->kernels.push_back(std::move(spec));
  }
  if (request.emit == "spirv-asm") {
    result->format = "spirv-asm";
    result->data = std::move(text);
  } else {
    result->format = "archive:spirv";
    result->data = tessera::WriteKernelArchive(entries);
  }
  return static_cast<TsErrorCode>(0);
}

TsError* Compile(TsCompiler_Compile_Args* args) noexcept {
  return tessera::target::RunCompile("vulkan", tessera::vk::kCompileTargets, tessera::vk::kNumCompileTargets,
                                     args, Lower);
}

TsPluginApi MakeApi() {
  TsPluginApi api{};
  api.struct_size = TS_PLUGIN_API_STRUCT_SIZE;
  api.abi_version = TsAbiVersion{TESSERA_ABI_VERSION_MAJOR, TESSERA_ABI_VERSION_MINOR};
  api.Error_Destroy = &tessera::plugin_support::Error_Destroy;
  api.Error_Message = &tessera::plugin_support::Error_Message;
  api.Error_GetCode = &tessera::plugin_support::Error_GetCode;
  api.Compiler_Compile = &Compile;
  api.Compilation_Destroy = &tessera::target::DestroyCompilation;
  return api;
}
const TsPluginApi kApi = MakeApi();

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_compiler_get_api(void) { return &kApi; }
