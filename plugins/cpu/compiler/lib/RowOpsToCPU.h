//===- RowOpsToCPU.h - elementwise ops, softmax, norms in vectors -*- C++ -*-===//
//
// The tiles without matmul: a fused elementwise tree alone, or a softmax,
// a reduce or a norm with the tree that consumes it (FusedTree.h), applied before the
// store.  Over a contiguous (row-major) last dim they run in vector<8>
// chunks (one AVX2 register of f32) and finish with a scalar remainder
// loop; loads widen and stores round as ElementTypes.h says, so every
// element type takes the same path.  Vector math.exp is expanded into
// a polynomial later (ExpandVectorExp.cpp), so softmax's exponentials do
// not become a call per lane.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_TARGET_CPU_ROWOPSTOCPU_H
#define TESSERA_LIB_TARGET_CPU_ROWOPSTOCPU_H

#include <optional>

#include "MatmulToCPU.h"
#include "mlir/IR/Builders.h"
#include "tessera/Conversion/ElementTypes.h"

namespace tessera::cpu {

/// f32 lanes of an AVX2 register: the default chunk width of these loops
/// (a tile's micro_tile = [V] sets it).
constexpr int64_t kRowVector = 8;

/// Reads the tensors a fused tree's leaves name (the caller's buffers).
using LeafAccess = std::function<TensorAccess(mlir::Value)>;

/// A tile without root: `out = tree.output` over the loop extents `ext`
/// (the last one may be dynamic), one fused loop nest; vectors of `width`
/// along the last dim when `out` and every leaf are row-major.  Leaves of lower rank
/// are trailing-suffix broadcasts (rank 0 allowed).
mlir::LogicalResult lowerFusedTreeRows(mlir::OpBuilder &b, mlir::Location loc,
                                       const FusedTree &tree, const TensorAccess &out,
                                       const LeafAccess &leaves,
                                       llvm::ArrayRef<mlir::Value> ext, int64_t width,
                                       const ElementOptions &elements);

/// Softmax of `in` along `dim`, in f32: max, then exp(x - max) and their
/// sum, then the scale by 1/sum, to which the fused `epilogue` (root: the
/// softmax) is applied before the store to `out`; in vectors of `width`
/// along a contiguous last dim, one element at a time otherwise.  When `out` is
/// narrower than f32 the exponentials are kept in `rowBuf` (a
/// memref<shape[dim] x f32>) so that the result is rounded once; for an
/// f32 `out`, `rowBuf` is null and `out` holds them.
mlir::LogicalResult lowerSoftmaxRows(mlir::OpBuilder &b, mlir::Location loc,
                                     const TensorAccess &out, const TensorAccess &in,
                                     int64_t dim, llvm::ArrayRef<mlir::Value> ext,
                                     mlir::Value rowBuf, const FusedTree &epilogue,
                                     const LeafAccess &leaves, int64_t width,
                                     const ElementOptions &elements);

/// `red` of `in` into `out` (`extOut`: the output's extents), with the fused
/// `epilogue` (root: the reduce) applied to each reduced value before its
/// store. The reduced elements of one output are visited in row-major
/// order over the reduced dims: left to right for `sequential`, a balanced
/// tree over that sequence for `pairwise` (in `scratch`, n x `width`
/// elements of the compute type). Computed in f32 / i32, rounded once by
/// the store. When the last dim is not reduced, `width` neighbouring outputs
/// are computed at once in vector lanes (the same bits).
mlir::LogicalResult lowerReduceRows(mlir::OpBuilder &b, graph::ReduceOp red,
                                    const TensorAccess &out, const TensorAccess &in,
                                    llvm::ArrayRef<mlir::Value> extOut, mlir::Value scratch,
                                    const FusedTree &epilogue, const LeafAccess &leaves,
                                    int64_t width, const ElementOptions &elements);

/// layernorm / rmsnorm (graph::isRowOp) of `in` along its last dim into
/// `out`: per row, in f32, the sum (layernorm: mean, then the sum of
/// squared deviations; rmsnorm: the sum of squares) in vector partial sums
/// then the remainder, then `(x - mean) / sqrt(var + eps) * gamma + beta`
/// (rmsnorm: `x / sqrt(ms + eps) * gamma`) with the fused `epilogue`
/// applied before the store. `gamma` / `beta` are read at the last-dim
/// index.
mlir::LogicalResult lowerNormRows(mlir::OpBuilder &b, mlir::Operation *op, const TensorAccess &out,
                                  const TensorAccess &in, const TensorAccess &gamma,
                                  const std::optional<TensorAccess> &beta,
                                  llvm::ArrayRef<mlir::Value> ext, const FusedTree &epilogue,
                                  const LeafAccess &leaves, int64_t width,
                                  const ElementOptions &elements);

}  // namespace tessera::cpu

#endif
