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
#include "plugin_support.hpp"
#include "tessera/Target/SPIRVCompile.h"

using namespace mlir;
using tessera::target::CompileRequest;
using tessera::target::CompileResult;

namespace {

// OpenCL 2.2's rules for SPIR-V 1.2 without f16 arithmetic; the universal
// rules of its version otherwise (subgroup operations need SPIR-V 1.3, f16
// arithmetic the device's cl_khr_fp16, which SPIRV-Tools' OpenCL
// environments do not assume).
int KernelEnvironment(const std::vector<uint32_t>& words, const char** name) {
  constexpr uint32_t kFloat16 = 9;
  const uint32_t version = words.size() > 1 ? words[1] : 0;
  if (version <= 0x00010200u && !tessera::target::DeclaresCapability(words, kFloat16)) {
    *name = "opencl2.2";
    return SPV_ENV_OPENCL_2_2;
  }
  *name = version <= 0x00010200u ? "spv1.2" : "spv1.3";
  return version <= 0x00010200u ? SPV_ENV_UNIVERSAL_1_2 : SPV_ENV_UNIVERSAL_1_3;
}

TsErrorCode Lower(ModuleOp module, const CompileRequest& request, CompileResult* result, std::string* message) {
  const tessera::target::SPIRVFlavour flavour{/*openclKernel=*/true, "archive:spirv-kernel",
                                              /*indexType=*/"i64",  // size_t (Physical64)
                                              &KernelEnvironment};
  return tessera::target::CompileSPIRV(module, request, result, message, flavour);
}

TsError* Compile(TsCompiler_Compile_Args* args) noexcept {
  return tessera::target::RunCompile("level_zero", tessera::level_zero::kCompileTargets,
                                     tessera::level_zero::kNumCompileTargets, args, Lower);
}

const TsPluginApi kApi = tessera::target::CompilerPartApi(&Compile);

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_compiler_get_api(void) { return &kApi; }
