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
#include "tessera/Conversion/TileToGPU/KernelsToLLVM.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace tessera::hip {

struct ROCDLOptions {
  std::string chipset = "gfx90a";
  int64_t wavefront = 64;  // 64 on gfx9 (CDNA), 32 on gfx10+ (RDNA, wave32)
};

// A kernel's launch description and its LLVM IR.
using ROCDLKernel = gpu_lowering::GpuKernel;

/// Lowers every Tile IR kernel of (a clone of) `module` to LLVM IR in
/// `llvmContext`.  Diagnostics go to the module's context.
mlir::LogicalResult lowerTileToROCDL(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                                     const ROCDLOptions &options, std::vector<ROCDLKernel> *kernels);

}  // namespace tessera::hip

#endif
