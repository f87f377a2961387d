//===- SPIRVCompile.cpp - the SPIR-V compiler parts' shared body ----------===//
//
// See SPIRVCompile.h. SPIRV-Tools is linked statically into each compiler
// part that uses this (never into the runtime plugins).
//===----------------------------------------------------------------------===//
#include "tessera/Target/SPIRVCompile.h"

#include <spirv-tools/libspirv.h>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tessera/Conversion/TileToSPIRV/Passes.h"
#include "tessera/kernel_archive.hpp"

using namespace mlir;

namespace tessera::target {
namespace {

// SPIRV-Tools on one module: "" when valid, else the validator's message.
std::string Validate(const std::vector<uint32_t>& words, spv_target_env env) {
  spv_context context = spvContextCreate(env);
  spv_diagnostic diagnostic = nullptr;
  spv_const_binary_t binary{words.data(), words.size()};
  spv_result_t r = spvValidate(context, &binary, &diagnostic);
  std::string out;
  if (r != SPV_SUCCESS) out = diagnostic && diagnostic->error ? diagnostic->error : "invalid SPIR-V";
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return out;
}

std::string Disassemble(const std::vector<uint32_t>& words, spv_target_env env) {
  spv_context context = spvContextCreate(env);
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

}  // namespace

bool DeclaresCapability(const std::vector<uint32_t>& words, uint32_t capability) {
  constexpr uint32_t kOpCapability = 17;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffffu;
    if (count == 0 || opcode != kOpCapability) break;  // capabilities come first
    if (count >= 2 && i + 1 < words.size() && words[i + 1] == capability) return true;
    i += count;
  }
  return false;
}

TsErrorCode CompileSPIRV(ModuleOp module, const CompileRequest& request, CompileResult* result,
                         std::string* message, const SPIRVFlavour& flavour) {
  tessera::spv::VulkanTargetOptions options;
  options.openclKernel = flavour.openclKernel;
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
    const char* envName = "";
    const auto env = static_cast<spv_target_env>(flavour.environment(k.spirv, &envName));
    if (validate) {
      std::string why = Validate(k.spirv, env);
      if (!why.empty()) {
        *message = "the SPIR-V of kernel '" + k.name + "' does not validate (" + envName + "): " + why;
        return TS_ERROR_INTERNAL;
      }
    }
    tessera::ArchiveEntry e;
    e.name = k.name;
    e.data.assign(reinterpret_cast<const char*>(k.spirv.data()), k.spirv.size() * sizeof(uint32_t));
    entries.push_back(std::move(e));
    if (request.emit == "spirv-asm") text += "; kernel " + k.name + "\n" + Disassemble(k.spirv, env) + "\n";
    KernelSpec spec;
    spec.name = k.name;
    for (int d = 0; d < 3; ++d) {
      spec.grid[d] = static_cast<uint32_t>(k.grid[d]);
      spec.group_size[d] = static_cast<uint32_t>(k.groupSize[d]);
    }
    if (auto fn = module.lookupSymbol<func::FuncOp>(k.name))
      spec.params = ParamsOfArguments(fn, flavour.indexType);
    result->kernels.push_back(std::move(spec));
  }
  if (request.emit == "spirv-asm") {
    result->format = "spirv-asm";
    result->data = std::move(text);
  } else {
    result->format = flavour.archiveFormat;
    result->data = tessera::WriteKernelArchive(entries);
  }
  return static_cast<TsErrorCode>(0);
}

}  // namespace tessera::target
