//===- RowKernels.h - Tile IR kernels for Graph softmax and reduce --------===//
//
// Part of tessera-graph-to-tile-kernels (GraphToTileKernels.cpp): the
// kernels of the ops that combine many elements into one, over any dim(s).
//
//   layernorm / rmsnorm: one group per row of the last dim, sums by a
//     fixed shared-memory tree (the same run to run).
//
//   softmax dim d: one group per row (the elements along d of one position
//     of the other dims, stride = product of the dims after d).
//   reduce, order = sequential: one lane per output, left to right over the
//     reduced elements in row-major order of the reduced dims: the same
//     additions in the same order as the cpu backend and the reference, so
//     results are bitwise identical.
//   reduce, order = pairwise: one group per output; the balanced tree the
//     cpu backend and the reference use (level s combines x[i] and x[i+s]
//     for i % 2s == 0), split between lanes (a power-of-two chunk each) and
//     a shared-memory tree over the chunks: bitwise identical as well.
//
// The kernels use 1-D groups of `lanes` lanes; the functions are stateless.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_ROWKERNELS_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_ROWKERNELS_H

#include <array>
#include <cstdint>
#include <functional>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

namespace tessera::conversion::rows {

/// Grid of the kernel that computes `op` (graph::isRowOp), with at
/// most `maxGroups` groups along x: the kernels loop over what is left.
std::array<int64_t, 3> grid(mlir::Operation *op, int64_t lanes, int64_t maxGroups);

/// What a kernel stores at each output element: the op's value, or (with
/// `value`) a fused elementwise tree over it, given the op's compute-type
/// value and the flat index of the output element; narrowed to `elem`.
struct Store {
  mlir::Type elem;
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Value, mlir::Value)> value;
};

/// Fills the body of kernel `k` that computes `op` (graph::isRowOp: a
/// softmax, reduce, layernorm or rmsnorm) from the flat buffers of its
/// operands (`operands`, in the op's operand order) into the flat buffer
/// `out` (all arguments of `k`; other arguments are the store's), loads
/// widened and stores narrowed as kGpuElements says; arithmetic in f32 or
/// i32.
void buildKernel(mlir::func::FuncOp k, mlir::Operation *op, int64_t lanes, mlir::ValueRange operands,
                 mlir::Value out, const Store &store);

}  // namespace tessera::conversion::rows

#endif  // TESSERA_LIB_CONVERSION_GRAPHTOTILE_ROWKERNELS_H
