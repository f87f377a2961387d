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
#include "llvm/ADT/STLFunctionalExtras.h"

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
/// Reads operand `k` of a shape op at multi-index `idx` (in the form the
/// caller stores: raw storage bits, or a widened value).
using OperandLoader = llvm::function_ref<mlir::Value(mlir::OpBuilder &, unsigned k, llvm::ArrayRef<mlir::Value> idx)>;

/// The value of result index `out` of transpose, reshape, slice,
/// broadcast_in_dim, concat or pad, read through `load`; `padValue` gives
/// pad's constant in the same form, `valueType` (control flow: scf.if on
/// the bounds, so no lane reads outside an operand).
mlir::Value emitShapeValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                           llvm::ArrayRef<mlir::Value> out, OperandLoader load,
                           llvm::function_ref<mlir::Value(mlir::OpBuilder &)> padValue, mlir::Type valueType);

/// argmax: the i32 index along `dim` of the first strictly greatest
/// element at result index `out`; `load` returns compute-type values
/// (f32 / i32) of operand 0.
mlir::Value emitArgmax(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                       llvm::ArrayRef<mlir::Value> out, OperandLoader load);

/// Row-major multi-index <-> flat offset for `shape`, as index values.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value flat,
                                           llvm::ArrayRef<int64_t> shape);
mlir::Value linearize(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<mlir::Value> idx,
                      llvm::ArrayRef<int64_t> shape);

}  // namespace tessera::shapes

#endif
