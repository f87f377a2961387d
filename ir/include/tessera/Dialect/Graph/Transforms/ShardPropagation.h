//===- ShardPropagation.h - global-view programs made SPMD ---------------===//
//
// --tessera-shard-propagation (ShardPropagation.cpp; docs/spmd.md,
// "Automatic sharding"): a function marked `tessera.global_view` is written
// on global tensors with shardings on its arguments and results only; the
// pass decides every intermediate's sharding, rewrites the types to local
// ones and inserts the collectives, giving an ordinary SPMD function.
// Edits the module; one thread at a time.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_TRANSFORMS_SHARDPROPAGATION_H
#define TESSERA_DIALECT_GRAPH_TRANSFORMS_SHARDPROPAGATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessera::graph {

/// The unit attribute that marks a function written on global tensors.
constexpr llvm::StringLiteral kGlobalViewAttr = "tessera.global_view";

/// On a function the pass annotated: what its search did
/// (`{placements, cost, rules_cost}`, ShardCost.h's measure).
constexpr llvm::StringLiteral kShardSearchAttr = "tessera.shard_search";

/// How many placements of a function the search makes at most (the rules'
/// own is the first; 1: the rules alone).
constexpr int kShardSearchRuns = 256;

/// Replaces `fn` (marked global view) by its SPMD form, same name: the
/// cheapest of up to `searchRuns` placements (docs/spmd.md, "The search").
/// With `annotate`, each op records its decision as
/// `tessera_graph.sharding` (what the pass prints; compiles leave it off,
/// since the stages they cut the function into name no mesh).
mlir::LogicalResult propagateShardings(mlir::func::FuncOp fn, bool annotate = false,
                                       int searchRuns = kShardSearchRuns);
/// propagateShardings on every function marked global view in `module`.
mlir::LogicalResult propagateGlobalViewShardings(mlir::ModuleOp module, bool annotate = false,
                                                 int searchRuns = kShardSearchRuns);

}  // namespace tessera::graph

#endif
