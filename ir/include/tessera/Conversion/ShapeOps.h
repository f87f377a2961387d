//===- ShapeOps.h - where a Graph shape op reads each result element -*- C++ -*-===//
//
// One definition of the data-movement ops (graph::isShapeOp) for every code
// generator (the cpu backend's loops, the GPU kernels) and, in integer
// form, for the reference interpreter: the operand index that result
// multi-index `out` reads.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CONVERSION_SHAPEOPS_H
#define TESSERA_CONVERSION_SHAPEOPS_H

#include <cstdint>
#include <vector>

#include "mlir/IR/Builders.h"

namespace tessera::shapes {

/// The multi-index of operand 0 that result index `out` (index values)
/// reads; empty for iota (no operand).
llvm::SmallVector<mlir::Value> sourceIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                                           llvm::ArrayRef<mlir::Value> out);
/// The same on integers (the reference).
std::vector<int64_t> sourceIndex(mlir::Operation *op, const std::vector<int64_t> &out);

/// gather: result index `out` splits into the indices' index (the first
/// `indicesRank` entries, returned in `at`) and the row index; given the
/// loaded i32 index `row` (an index value), the table index, the row
/// clamped to [0, V).
llvm::SmallVector<mlir::Value> gatherTableIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                                                llvm::ArrayRef<mlir::Value> out, mlir::Value row);
/// Row-major multi-index <-> flat offset for `shape`, as index values.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value flat,
                                           llvm::ArrayRef<int64_t> shape);
mlir::Value linearize(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<mlir::Value> idx,
                      llvm::ArrayRef<int64_t> shape);

}  // namespace tessera::shapes

#endif
