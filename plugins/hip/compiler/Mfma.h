//===- Mfma.h - tessera_tile.wavefront_mma on CDNA matrix cores -*- C++ -*-===//
//
// The CDNA form of wavefront_mma (KernelLoweringOptions::wavefrontMma): per
// 32 x 32 tile of the op and 8-deep step, one
//
//   f16   v_mfma_f32_32x32x8f16        (gfx908, gfx90a, gfx940)
//   bf16  v_mfma_f32_32x32x8bf16_1k    (gfx90a, gfx940)
//         2 x v_mfma_f32_32x32x4bf16   (gfx908: k = 4 each)
//
// Lane p of the wavefront feeds A's row p % 32 of the tile with the k
// values 4*(p/32) .. +3 (2*(p/32) .. +1 per 4-deep step on gfx908) and
// B's column p % 32 with the same k; the 16 accumulators it gets back are
// wavefront_mma's elements 16t .. 16t+15 (the op's layout is the
// instruction's).  Operands are read from LDS one 16-bit value at a time
// (consecutive lanes read consecutive columns of B and rows of A lda
// apart), packed into the instruction's vectors.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_HIP_MFMA_H
#define TESSERA_HIP_MFMA_H

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::hip {

/// Whether `chipset` (gfxNNN) has CDNA's matrix cores: gfx908, gfx90a,
/// gfx940 and later gfx94x.
bool hasMfma(llvm::StringRef chipset);

/// `acc`: the op's accumulator elements; `lane`: the lane's index in its
/// wavefront (index type).  Returns the result's elements.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> lowerWavefrontMmaToMfma(mlir::OpBuilder &b,
                                                                       tile::WavefrontMmaOp op,
                                                                       llvm::ArrayRef<mlir::Value> acc,
                                                                       mlir::Value lane, llvm::StringRef chipset);

}  // namespace tessera::hip

#endif
