//===- compile.cpp - the level_zero plugin's compiler part ----------------===//
//
// libtessera_plugin_level_zero_compiler.so: Compiler_Compile for target
// "level_zero". Tile IR kernels -> one SPIR-V module per kernel for the
// OpenCL Kernel execution model (the SPIR-V lowering the vulkan plugin uses,
// ir/lib/Conversion/TileToSPIRV, with client-api=opencl: Kernel, Addresses,
// Physical64, buffers and scalars as entry-point parameters), each checked by
// SPIRV-Tools' validator, returned together as an "archive:spirv-kernel"
// executable (tessera/kernel_archive.hpp); or the same archive (emit spirv)
// or their disassembly (emit spirv-asm).
//
// Validation: SPIR-V 1.2 modules under the OpenCL 2.2 environment's rules;
// a kernel with subgroup operations is SPIR-V 1.3 (GroupNonUniform*, which
// OpenCL 3.0 drivers take through cl_khr_subgroup_*) and one with f16
// arithmetic needs cl_khr_fp16: those are checked under the universal rules
// of their version, since this SPIRV-Tools has no OpenCL 3.0 environment and
// its OpenCL ones assume no extension.
//
//===----------------------------------------------------------------------===//
#include <spirv-tools/libspirv.h>

#include "compile_targets.hpp"
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

// Whether the module declares capability `cap` (the OpCapability
// instructions after the 5-word header).
bool Declares(const std::vector<uint32_t>& words, uint32_t cap) {
  constexpr uint32_t kOpCapability = 17;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffffu;
    if (count == 0 || opcode != kOpCapability) break;
    if (count >= 2 && i + 1 < words.size() && words[i + 1] == cap) return true;
    i += count;
  }
  return false;
}

// The environment a module is validated in: OpenCL 2.2's rules for SPIR-V
// 1.2 without f16 arithmetic; the universal rules of its version otherwise
// (subgroup operations need SPIR-V 1.3, f16 arithmetic the device's
// cl_khr_fp16, which SPIRV-Tools' OpenCL environments do not assume).
spv_target_env EnvOf(const std::vector<uint32_t>& words) {
  constexpr uint32_t kFloat16 = 9;
  const uint32_t version = words.size() > 1 ? words[1] : 0;
  if (version <= 0x00010200u && !Declares(words, kFloat16)) return SPV_ENV_OPENCL_2_2;
  return version <= 0x00010200u ? SPV_ENV_UNIVERSAL_1_2 : SPV_ENV_UNIVERSAL_1_3;
}

const char* EnvName(spv_target_env env) {
  return env == SPV_ENV_OPENCL_2_2 ? "opencl2.2" : env == SPV_ENV_UNIVERSAL_1_2 ? "spv1.2" : "spv1.3";
}

// SPIRV-Tools on one module: "" when valid, else the validator's message.
std::string Validate(const std::vector<uint32_t>& words) {
  spv_context context = spvContextCreate(EnvOf(words));
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
  spv_context context = spvContextCreate(EnvOf(words));
  spv_text text = nullptr;
  spv_diagnostic diagnostic = nullptr;
  spv_result_t r = spvBinaryToText(context, words.data(), words.size(),
                                   SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT,
                                   &text, &diagnostic);
  std::string out = r == SPV_SUCCESS && text ? std::string(text->str, text->length)
                                             : std::string("; cannot disassemble: ") +
                                                   (diagnostic && diagnostic->error ? diagnostic->error : "?") + "\n";
  spvTextDestroy(text);
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return out;
}

TsErrorCode Lower(ModuleOp module, const CompileRequest& request, CompileResult* result, std::string* message) {
  tessera::spv::VulkanTargetOptions options;
  options.openclKernel = true;
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
        *message = "the SPIR-V of kernel '" + k.name + "' does not validate (" + EnvName(EnvOf(k.spirv)) +
                   "): " + why;
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
      spec.params = tessera::target::ParamsOfArguments(fn, "i64");  // index is size_t (Physical64)
    result->kernels.push_back(std::move(spec));
  }
  if (request.emit == "spirv-asm") {
    result->format = "spirv-asm";
    result->data = std::move(text);
  } else {
    result->format = "archive:spirv-kernel";
    result->data = tessera::WriteKernelArchive(entries);
  }
  return static_cast<TsErrorCode>(0);
}

TsError* Compile(TsCompiler_Compile_Args* args) noexcept {
  return tessera::target::RunCompile("level_zero", tessera::level_zero::kCompileTargets,
                                     tessera::level_zero::kNumCompileTargets, args, Lower);
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
