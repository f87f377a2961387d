//===- MmaSync.h - tessera_tile.subgroup_mma on tensor cores ---*- C++ -*-===//
//
// The sm_80+ form of subgroup_mma (KernelLoweringOptions::subgroupMma):
// inline PTX, as LLVM 16 leaves no simpler path for bf16 fragments:
//
//   A (m x 16)  one ldmatrix.x4 per 16 rows: lane q addresses row q % 16,
//               column 8 * (q / 16): matrices (rows 0-7 | 8-15) x (k 0-7 |
//               8-15) = the a0..a3 registers of mma.m16n8k16, row-major;
//   B (16 x n)  one ldmatrix.x4.trans per 16 columns (x2.trans for a last
//               8): lane q addresses row (k) q % 16, column 8 * (q / 16),
//               the transpose giving each lane the b0, b1 pairs of two
//               8-column tiles;
//   C           mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16} per 16 x 8
//               tile, its d0..d3 being subgroup_mma's elements 4t..4t+3.
//
// The loads are marked as having side effects (they read shared memory,
// which barriers order); the mma itself only reads registers.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CUDA_MMASYNC_H
#define TESSERA_CUDA_MMASYNC_H

#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::cuda {

/// The shared-window byte address (i32) of element `index` of the shared
/// buffer `m` of `elemBytes`-byte elements: what PTX's shared-memory
/// operands (ldmatrix, mbarrier, TMA destinations) take.
mlir::Value sharedAddress(mlir::OpBuilder &b, mlir::Location l, mlir::Value m, mlir::Value index, int64_t elemBytes);

/// `acc`: the op's accumulator elements; `lane`: the lane's index in its
/// subgroup (index type).  Returns the result's elements.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> lowerSubgroupMmaToMmaSync(mlir::OpBuilder &b,
                                                                          tile::SubgroupMmaOp op,
                                                                          llvm::ArrayRef<mlir::Value> acc,
                                                                          mlir::Value lane);

}  // namespace tessera::cuda

#endif
