//===- GradBuilder.h - building the backward ops of --tessera-grad -------===//
//
// The helpers the VJP rules (GradRules.cpp) and the reverse sweep
// (Grad.cpp) build Graph IR with. Cotangents are f32, row-major tensors
// of their primal's shape (f32 is the accumulate type of every float
// element type); `primal()` gives a primal value in that form.
//
// Not thread-safe: one builder per sweep.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_GRAPH_TRANSFORMS_GRADBUILDER_H
#define TESSERA_GRAPH_TRANSFORMS_GRADBUILDER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

namespace tessera::graph::grad {

class GradBuilder {
 public:
  explicit GradBuilder(mlir::OpBuilder& b) : b_(b), loc_(b.getUnknownLoc()) {}

  mlir::OpBuilder& builder() { return b_; }
  mlir::Location loc() const { return loc_; }
  /// Ops built from now on carry `loc` (the forward op's location).
  void setLoc(mlir::Location loc) { loc_ = loc; }

  /// f32 row-major tensor type of `shape`.
  mlir::RankedTensorType f32(llvm::ArrayRef<int64_t> shape);
  /// The cotangent type of a float tensor value.
  mlir::RankedTensorType cotangentType(mlir::Value primal);
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);

  /// `v` as an f32 row-major tensor (cast, then convert_layout, when it is
  /// not one already); built once per value.
  mlir::Value primal(mlir::Value v);
  /// A splat f32 constant of `shape`.
  mlir::Value splat(llvm::ArrayRef<int64_t> shape, double value);
  mlir::Value zerosLike(mlir::Value v) { return splat(shapeOf(v), 0.0); }

  // Elementwise, numpy-broadcast (the result shape is inferred).
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value scale(mlir::Value a, double s) { return mul(a, splat(shapeOf(a), s)); }
  template <typename Op>
  mlir::Value unary(mlir::Value a) {
    return b_.create<Op>(loc_, a.getType(), a).getResult();
  }
  mlir::Value compare(ComparePredicate p, mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value c, mlir::Value a, mlir::Value b);

  /// Sum over `dims` (pairwise), keeping them as size 1 or dropping them.
  mlir::Value reduce(ReduceKind kind, mlir::Value v, llvm::ArrayRef<int64_t> dims, bool keep);
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> perm);
  /// Swaps the last two dims.
  mlir::Value transposeLast2(mlir::Value v);
  mlir::Value matmul(mlir::Value a, mlir::Value b);
  mlir::Value slice(mlir::Value v, llvm::ArrayRef<int64_t> offsets, llvm::ArrayRef<int64_t> strides,
                    llvm::ArrayRef<int64_t> shape);
  mlir::Value pad(mlir::Value v, llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high);
  /// `c` (of a broadcast result's shape) summed down to `target` (the
  /// shape an operand had before numpy broadcasting).
  mlir::Value unbroadcast(mlir::Value c, llvm::ArrayRef<int64_t> target);
  /// `v` (of `shape` with the dims `dims` removed or kept as 1) spread
  /// back over those dims of `shape`.
  mlir::Value expandReduced(mlir::Value v, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> dims);
  /// `v` cast to the element type and layout of `type`.
  mlir::Value castTo(mlir::Value v, mlir::Type type);

 private:
  mlir::OpBuilder& b_;
  mlir::Location loc_;
  llvm::DenseMap<mlir::Value, mlir::Value> primals_;
  llvm::DenseMap<mlir::Value, mlir::Value> transposed_;  // transposeLast2, once per value
};

/// The VJP of `op` (a Graph IR op or a call of a function with a custom
/// VJP): `dResults[i]` is the cotangent of result i (an f32 row-major
/// tensor) or null when the result has none; sets `dOperands[i]` (sized
/// to the operand count, all null on entry) to each operand's
/// contribution, null where there is none (integer operands). Emits an
/// error at the op and fails when it has no rule. Collectives are the
/// sweep's (Grad.cpp): their transposes depend on partial sums.
mlir::LogicalResult vjp(mlir::Operation* op, llvm::ArrayRef<mlir::Value> dResults,
                        llvm::SmallVectorImpl<mlir::Value>& dOperands, GradBuilder& gb);

/// True for a float tensor type (the values that have cotangents).
bool isDifferentiable(mlir::Type type);

}  // namespace tessera::graph::grad

#endif
