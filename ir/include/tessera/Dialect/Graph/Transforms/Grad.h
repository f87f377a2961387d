//===- Grad.h - reverse-mode autodiff of Graph IR ------------------------===//
//
// `--tessera-grad` and its library form: a Graph IR function f(args) ->
// (loss, aux...) becomes f_grad(args) -> (loss, aux..., d loss / d args[i]
// for each i of `wrt`), computed by one reverse sweep over f's ops with the
// VJP rules of GradRules.cpp (docs/autodiff.md).
//
// Conventions (JAX's value_and_grad with has_aux):
//  - result 0 is the loss: one element of a float type (tensor<1xf32>,
//    tensor<1x1xf32>, tensor<f32>); its cotangent is 1;
//  - gradients are accumulated in f32 (the accumulate type of every float
//    element type) and returned in each argument's own type and layout,
//    with its sharding in an SPMD function;
//  - integer values have no gradient; a gradient with respect to an
//    integer argument is an error.
//
// Thread-safety: these functions edit the module they are given; run them
// on one module from one thread at a time (as any MLIR pass).
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_TRANSFORMS_GRAD_H
#define TESSERA_DIALECT_GRAPH_TRANSFORMS_GRAD_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessera::graph {

/// On a function declaration without a body: fill it with the gradient
/// of the function it names, with respect to the arguments `tessera.wrt`
/// lists (all float arguments when absent):
///   func.func private @loss_grad(...) -> (...)
///       attributes {tessera.grad_of = @loss, tessera.wrt = [0, 1]}
constexpr llvm::StringLiteral kGradOfAttr = "tessera.grad_of";
constexpr llvm::StringLiteral kWrtAttr = "tessera.wrt";
/// On a function: the function that computes its VJP. It takes the
/// function's arguments, then one cotangent per result (in the result's
/// type), and returns one cotangent per argument (in the argument's type;
/// ignored for integer arguments).
constexpr llvm::StringLiteral kCustomVjpAttr = "tessera.custom_vjp";

/// On a built gradient: the bytes of forward values (arguments aside)
/// that its backward ops read, i.e. what the forward keeps for the
/// backward (the memory figure of docs/autodiff.md).
constexpr llvm::StringLiteral kSavedBytesAttr = "tessera.saved_bytes";

/// On a gradient declaration: the loss scale (a float; 1 when absent).
constexpr llvm::StringLiteral kLossScaleAttr = "tessera.loss_scale";

struct GradientOptions {
  /// The cotangent of the loss is `lossScale` (not 1) and every gradient
  /// is divided by it at the end, in f32: mixed-precision loss scaling,
  /// for custom VJPs that compute in a narrow type (the built-in rules
  /// keep every cotangent in f32, where scaling changes nothing but the
  /// last bits). A power of two keeps it exact.
  double lossScale = 1.0;
  /// Add a last result, tensor<1xi1>: true when every gradient is finite
  /// (no inf, no NaN: what an overflow under a loss scale makes), the same
  /// on every device of an SPMD program. A training step returns it marked
  /// `tessera.step_ok` so that its updates are skipped when it is false
  /// (docs/autodiff.md). A declaration asks for it with that last result.
  bool finiteFlag = false;
};

/// Builds `name` (a new public function next to `fn`): fn's arguments ->
/// (fn's results, then the gradients of result 0 with respect to the
/// arguments `wrt`). Errors are diagnostics at the offending op (an op
/// with no VJP rule, an integer argument in `wrt`, ...).
mlir::FailureOr<mlir::func::FuncOp> buildGradient(mlir::func::FuncOp fn, llvm::ArrayRef<unsigned> wrt,
                                                  llvm::StringRef name, const GradientOptions& options = {});

/// Fills every declaration marked `tessera.grad_of` in `module` (checking
/// that its signature is the one buildGradient gives), then inlines the
/// calls of generated gradients and of functions with custom VJPs, so
/// the module is plain Graph IR again. A module without either is left
/// unchanged.
mlir::LogicalResult expandGradients(mlir::ModuleOp module);

/// True when `module` declares a gradient (`tessera.grad_of`).
bool hasGradientDeclarations(mlir::ModuleOp module);

}  // namespace tessera::graph

#endif
