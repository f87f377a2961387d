//===- LaunchPlanPatterns.h - Graph functions -> launch plans -*- C++ -*-===//
//
// The launch plan, by dialect conversion: a Graph function is rewritten in
// place on flat memrefs (its results become output arguments), each op
// that computes a materialized value becomes the launch of its kernel (a
// `func.call` with the buffers it binds), each fused op is erased (its
// user's kernel computes it), and the return launches copies for results
// no kernel wrote and frees the intermediates.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_LIB_CONVERSION_GRAPHTOTILE_LAUNCHPLANPATTERNS_H
#define TESSERA_LIB_CONVERSION_GRAPHTOTILE_LAUNCHPLANPATTERNS_H

#include <memory>

#include "FusionPlan.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tessera::conversion::graph_to_tile {

/// A Graph function being lowered: its fusion plan and what its launch
/// patterns share. Owned by the pass run; used by one thread.
struct PlannedFunction {
  FusionPlan plan;
  llvm::DenseMap<mlir::Value, const KernelSpec *> specOf;  // a kernel's value -> its spec (flash_attention_grad: result 0)
  llvm::DenseMap<mlir::Value, unsigned> outOf;             // a value a kernel writes into output argument #n
  unsigned numInputs = 0;
  unsigned nextKernel = 0;
  mlir::Operation *lastKernel = nullptr;  // kernels follow the plan in the module, in launch order
  bool returned = false;                  // its return has been rewritten
};

/// Every function one pass run lowers, and the kernels it built.
struct Lowerings {
  llvm::DenseMap<mlir::Operation *, std::unique_ptr<PlannedFunction>> functions;
  llvm::SmallVector<mlir::func::FuncOp> kernels;

  /// The planned function holding `op` (or being `op`), if any.
  PlannedFunction *of(mlir::Operation *op);
  /// Plans `fn` for `backend` (FusionPlan.h): errors on its ops, before any
  /// IR changes.
  mlir::LogicalResult plan(mlir::func::FuncOp fn, llvm::StringRef backend);
};

/// What is legal once the planned functions of `all` are launch plans:
/// no Graph ops, flash_attention(_grad) or tensor constants in them, their
/// signatures on memrefs, their returns rewritten.
void configureLaunchPlanTarget(mlir::ConversionTarget &target, Lowerings &all);

/// The patterns: the signature, the return, fused ops, and one per kernel
/// kind.
void populateLaunchPlanPatterns(mlir::RewritePatternSet &patterns, Lowerings &all);

}  // namespace tessera::conversion::graph_to_tile

#endif
