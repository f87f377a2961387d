//===- Wgmma.h - tessera_tile.warpgroup_mma on Hopper tensor cores -*- C++ -*-===//
//
// The sm_90a form of warpgroup_mma (KernelLoweringOptions::warpgroupMma):
// one inline-PTX block per op, as LLVM 16 knows no wgmma:
//
//   wgmma.fence                         the accumulator was written by
//                                       other instructions
//   k/16 x wgmma.mma_async.m64nNk16     A and B from shared memory through
//                                       matrix descriptors (below)
//   wgmma.commit_group; wait_group P    P = the op's `pending`: with 0 the
//                                       result is in the registers when the
//                                       block ends; with 1 the previous
//                                       op's group is complete, this one
//                                       still in flight
//
// One block, so that no compiler-inserted move touches the accumulator
// registers while the asynchronous multiplies own them. Between blocks
// that keep a group in flight the accumulators pass as tied operands;
// warpgroup_mma_wait is `wgmma.wait_group N` tied to them the same way
// (ptxas serializes the multiplies, with a warning, wherever another
// instruction touches an accumulator still in flight).
//
// Descriptors (64 bits; addresses and offsets in 16-byte units): start
// address bits 0-13, leading-dimension byte offset 16-29, stride-dimension
// byte offset 32-45, base offset 49-51 (0: the buffers are 1024-byte
// aligned), layout 62-63 (1: 128-byte swizzle).
//   A, K-major: 8-row groups 1024 bytes apart (SBO); LBO unused (1); the
//     k-th 16-deep step starts 32*k bytes into the 128-byte rows.
//   B, N-major (transposed, imm-trans-b = 1): 64-column blocks
//     b_block_stride elements apart (LBO), 8-row (k) groups 1024 bytes
//     apart (SBO); the k-th step starts 2048*k bytes in.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CUDA_WGMMA_H
#define TESSERA_CUDA_WGMMA_H

#include <cstdint>

#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::cuda {

/// The constant part of a 128-byte-swizzle matrix descriptor (everything
/// but the start address), given the leading and stride byte offsets.
uint64_t wgmmaDescriptorBits(uint64_t leadingBytes, uint64_t strideBytes);

/// `acc`: the op's accumulator elements; `lane`: the lane's index in its
/// warpgroup (index type).  Returns the result's elements.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> lowerWarpgroupMmaToWgmma(mlir::OpBuilder &b,
                                                                         tile::WarpgroupMmaOp op,
                                                                         llvm::ArrayRef<mlir::Value> acc,
                                                                         mlir::Value lane);

/// warpgroup_mma_wait: `wgmma.wait_group pending` with the accumulator's
/// elements tied through it.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> lowerWarpgroupMmaWait(mlir::OpBuilder &b,
                                                                      tile::WarpgroupMmaWaitOp op,
                                                                      llvm::ArrayRef<mlir::Value> acc);

}  // namespace tessera::cuda

#endif
