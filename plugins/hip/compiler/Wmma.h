//===- Wmma.h - tessera_tile.wave32_mma on RDNA3's WMMA ---------*- C++ -*-===//
//
// The RDNA3 form of wave32_mma (KernelLoweringOptions::wave32Mma): per
// 16 x 16 tile of the op, one v_wmma_f32_16x16x16_f16 (or _bf16) in
// wave32.  Lane q feeds A's row q % 16 of the tile and B's column q % 16,
// all 16 k values each (lanes 16-31 repeat lanes 0-15, as the instruction
// wants); the 8 accumulators it gets back are wave32_mma's elements
// 8t .. 8t+7 (the op's layout is the instruction's: row 2u + q/16).
// Operands are read from LDS one 16-bit value at a time.
//
// MLIR 16's ROCDL dialect has no WMMA op: the hook calls the LLVM
// intrinsic by its mangled name (llvm.amdgcn.wmma.f32.16x16x16.{f16,bf16}
// .v8f32: overloaded on the result), and
// declareIntrinsics() declares what such calls name in a gpu.module once
// the kernel has been moved there.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_HIP_WMMA_H
#define TESSERA_HIP_WMMA_H

#include "llvm/ADT/StringRef.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::hip {

/// Whether `chipset` (gfxNNN) has WMMA: RDNA3, gfx11xx.
bool hasWmma(llvm::StringRef chipset);

/// `acc`: the op's accumulator elements; `lane`: the lane's index in its
/// wave of 32 (index type).  Returns the result's elements.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> lowerWave32MmaToWmma(mlir::OpBuilder &b, tile::Wave32MmaOp op,
                                                                    llvm::ArrayRef<mlir::Value> acc,
                                                                    mlir::Value lane);

/// Declares, in `gm`, every `llvm.amdgcn.*` function that an llvm.call of
/// it names and it does not declare yet (types from the call).
void declareIntrinsics(mlir::gpu::GPUModuleOp gm);

}  // namespace tessera::hip

#endif
