//===- RowOpsToCPU.h - elementwise ops and softmax in vectors ---*- C++ -*-===//
//
// Graph ops outside matmul tiles whose innermost dim is contiguous (row-major
// tensors): elementwise ops and softmax over the last dim run over that dim
// in vector<8> chunks (one AVX2 register of f32) and finish with a scalar
// remainder loop; loads widen and stores round as ElementTypes.h says, so
// every element type takes the same path.  Vector math.exp is expanded into
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

/// f32 lanes of an AVX2 register: the chunk width of these loops.
constexpr int64_t kRowVector = 8;

/// `out = op(lhs[, rhs])` over the loop extents `ext` (the last one may be
/// dynamic); `rhs` is a trailing-suffix broadcast of `lhs` (rank 0 allowed).
/// Every tensor must be row-major (TensorAccess::at gives the memref index
/// of the first element of a chunk).
mlir::LogicalResult lowerElementwiseRows(mlir::OpBuilder &b, mlir::Operation *op,
                                         const TensorAccess &out, const TensorAccess &lhs,
                                         const std::optional<TensorAccess> &rhs,
                                         llvm::ArrayRef<mlir::Value> ext,
                                         const ElementOptions &elements);

/// Softmax of `in` along `dim`, in f32: max, then exp(x - max) and their
/// sum, then the scale by 1/sum; in vectors along a contiguous last dim,
/// one element at a time otherwise.  A result narrower than f32 keeps the
/// exponentials in `rowBuf` (a memref<shape[dim] x f32>) so that it is
/// rounded once; for f32 `rowBuf` is null and `out` holds them.
void lowerSoftmaxRows(mlir::OpBuilder &b, mlir::Location loc, const TensorAccess &out,
                      const TensorAccess &in, int64_t dim, llvm::ArrayRef<mlir::Value> ext,
                      mlir::Value rowBuf, const ElementOptions &elements);

}  // namespace tessera::cpu

#endif
