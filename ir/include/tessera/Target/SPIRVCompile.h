//===- SPIRVCompile.h - the SPIR-V compiler parts' shared body -*- C++ -*-===//
//
// What the vulkan and level_zero compiler parts share: Tile IR kernels ->
// SPIR-V (tessera::spv::compileForVulkan, Vulkan shaders or OpenCL
// Kernels), each module checked by SPIRV-Tools' validator in the
// environment the flavour says, packed as a kernel archive (or emitted as
// binaries / disassembly), with the launch descriptions. Stateless.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_SPIRVCOMPILE_H
#define TESSERA_TARGET_SPIRVCOMPILE_H

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/Target/PluginCompiler.h"

namespace tessera::target {

/// One SPIR-V flavour of a compiler part.
struct SPIRVFlavour {
  bool openclKernel = false;       ///< OpenCL Kernels (level_zero) or Vulkan shaders
  const char* archiveFormat;       ///< "archive:spirv" / "archive:spirv-kernel"
  const char* indexType;           ///< the index type of scalar parameters ("i32" / "i64")
  /// The SPIRV-Tools environment (spv_target_env) and its name for
  /// messages, for one module.
  int (*environment)(const std::vector<uint32_t>& words, const char** name);
};

/// Whether the module declares OpCapability `capability` (the
/// instructions after the 5-word header).
bool DeclaresCapability(const std::vector<uint32_t>& words, uint32_t capability);

/// The body of Compiler_Compile's lowering for a SPIR-V target: options
/// float_atomic_add (native|cas) and validate; emit "" (the archive),
/// "spirv" (the archive too: its entries are the modules) or "spirv-asm".
TsErrorCode CompileSPIRV(mlir::ModuleOp module, const CompileRequest& request, CompileResult* result,
                         std::string* message, const SPIRVFlavour& flavour);

}  // namespace tessera::target

#endif
