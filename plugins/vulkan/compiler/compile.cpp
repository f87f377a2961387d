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
#include "plugin_support.hpp"
#include "tessera/Target/SPIRVCompile.h"

using namespace mlir;
using tessera::target::CompileRequest;
using tessera::target::CompileResult;

namespace {

// Every module under the Vulkan 1.1 environment's rules.
int VulkanEnvironment(const std::vector<uint32_t>&, const char** name) {
  *name = "vulkan1.1";
  return SPV_ENV_VULKAN_1_1;
}

TsErrorCode Lower(ModuleOp module, const CompileRequest& request, CompileResult* result,
                  std::string* message) {
  const tessera::target::SPIRVFlavour flavour{/*openclKernel=*/false, "archive:spirv",
                                              /*indexType=*/"i32",  // index is 32-bit in shaders
                                              &VulkanEnvironment};
  return tessera::target::CompileSPIRV(module, request, result, message, flavour);
}

TsError* Compile(TsCompiler_Compile_Args* args) noexcept {
  return tessera::target::RunCompile("vulkan", tessera::vk::kCompileTargets, tessera::vk::kNumCompileTargets,
                                     args, Lower);
}

const TsPluginApi kApi = tessera::target::CompilerPartApi(&Compile);

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_compiler_get_api(void) { return &kApi; }
