//===- ShardCost.h - what an SPMD function costs one device ---------------===//
//
// The objective of --tessera-shard-propagation's search (docs/spmd.md,
// "Automatic sharding"): the bytes one device moves in collectives, counted
// as ring algorithms move them, plus its arithmetic scaled by how many
// flops a device does in the time a collective moves one byte.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_TRANSFORMS_SHARDCOST_H
#define TESSERA_DIALECT_GRAPH_TRANSFORMS_SHARDCOST_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

namespace tessera::graph {

/// Flops one device does in the time a collective moves one byte: about
/// 2000 on NVLink-class GPUs (1 PFLOP/s against 450 GB/s), more between
/// hosts. Arithmetic counts, communication dominates.
constexpr double kFlopsPerCollectiveByte = 1024.0;

/// The cost of one device running `fn` (an SPMD function on local types
/// over `mesh`), in collective-byte units:
///  - all_gather of a result of S bytes over n devices: (n-1)/n S;
///    reduce_scatter of an input of S bytes: (n-1)/n S; all_reduce: twice
///    that; broadcast: S;
///  - matmul: 2 M N K (times the batch) flops; every other op one flop per
///    result element; both divided by kFlopsPerCollectiveByte.
double spmdCost(mlir::func::FuncOp fn, MeshOp mesh);

}  // namespace tessera::graph

#endif
