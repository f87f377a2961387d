//===- TileToROCDL.h - Tile IR kernels -> LLVM IR for AMDGPU --------------===//
//
// The MLIR half of the hip compiler part: Schedule/Tile IR kernels ->
// gpu.func (KernelLowering, ROCDL forms) -> ROCDL + LLVM dialects (upstream
// convert-gpu-to-rocdl) -> one llvm::Module per kernel, whose entry takes
// one pointer per buffer argument and scalars by value.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_HIP_TILETOROCDL_H
#define TESSERA_HIP_TILETOROCDL_H

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace tessera::hip {

struct ROCDLOptions {
  std::string chipset = "gfx90a";
  int64_t wavefront = 64;  // 64 on gfx9 (CDNA), 32 on gfx10+ (RDNA, wave32)
};

struct ROCDLKernel {
  std::string name;
  std::array<int64_t, 3> group{1, 1, 1};
  std::array<int64_t, 3> grid{1, 1, 1};  // tessera_tile.grid (missing dims 1), or 1s
  std::unique_ptr<llvm::Module> module;  // in the caller's context
};

/// Lowers every Tile IR kernel of (a clone of) `module` to LLVM IR in
/// `llvmContext`.  Diagnostics go to the module's context.
mlir::LogicalResult lowerTileToROCDL(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                                     const ROCDLOptions &options, std::vector<ROCDLKernel> *kernels);

}  // namespace tessera::hip

#endif
