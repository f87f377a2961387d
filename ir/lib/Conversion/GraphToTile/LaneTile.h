//===- LaneTile.h - register blocks of a block product over a group -------===//
//
// For the hand-built attention kernels: a group's lanes computing an M x N
// block of a product whose operands sit in shared or global memory. Each
// lane owns an rm x rn register block and, per step of the reduction, loads
// rm values of the left operand and rn of the right one for rm * rn FMAs
// (one element per lane would take two loads per FMA, which is what bounds
// the SIMT kernels on every backend).
//
// Lanes form an lm x ln grid (lm * ln = lanes); lane (ty, tx) owns rows
// ty + lm * i and columns tx + ln * j: strided, so that neighbouring lanes
// read neighbouring words of a shared-memory row. Blocks that the grid
// does not divide are covered by clamping the indices (a lane past the
// block recomputes the last row or column) and guarding the stores.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_LANETILE_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_LANETILE_H

#include "KernelBuild.h"

namespace tessera::conversion::build {

/// The shape of a lane grid over an m x n block.
struct LaneTile {
  int64_t m, n;    // the block
  int64_t lm, ln;  // lanes along the rows and the columns
  int64_t rm, rn;  // each lane's register block

  /// The grid of `lanes` lanes (a power of two) with the least work per
  /// lane and reduction step: rm * rn FMAs plus rm + rn loads.
  static LaneTile choose(int64_t m, int64_t n, int64_t lanes);
};

/// A lane's indices in a LaneTile, built once where the lane id is known.
struct LaneTileIds {
  LaneTile shape;
  llvm::SmallVector<mlir::Value> rows, cols;    // clamped to m-1, n-1: safe to read
  llvm::SmallVector<mlir::Value> rowIn, colIn;  // row < m, col < n: stores only these
  int64_t size() const { return shape.rm * shape.rn; }
};
LaneTileIds laneTileIds(B &x, const LaneTile &t, mlir::Value lane);

/// acc[i * rn + j] + sum over k < depth of a(i, k) * b(k, j), where a(i, k)
/// loads the left operand at row rows[i] and b(k, j) the right one at column
/// cols[j]: one scf.for over k carrying the accumulators `init` (rm * rn
/// values), each a(i, k) and b(k, j) built once per step. No barrier
/// inside: every lane runs the same trip count.
llvm::SmallVector<mlir::Value> blockedProduct(mlir::OpBuilder &b, mlir::Location l, const LaneTileIds &ids,
                                              int64_t depth, mlir::ValueRange init,
                                              llvm::function_ref<mlir::Value(B &, int64_t i, mlir::Value k)> a,
                                              llvm::function_ref<mlir::Value(B &, mlir::Value k, int64_t j)> bOp);

/// body(i, j) for each of the lane's elements inside the block, under an
/// scf.if of rowIn[i] && colIn[j] (and `extra(i, j)` when given).
void forOwned(mlir::OpBuilder &b, mlir::Location l, const LaneTileIds &ids,
              llvm::function_ref<void(B &, int64_t i, int64_t j)> body,
              llvm::function_ref<mlir::Value(B &, int64_t i, int64_t j)> extra = nullptr);

}  // namespace tessera::conversion::build

#endif
