// RUN: tessera-opt %s --tessera-shard-propagation | FileCheck %s --check-prefix=SEARCH
// RUN: tessera-opt %s --tessera-shard-propagation=search-runs=1 | FileCheck %s --check-prefix=RULES
// The search over the rules' choice points (docs/spmd.md, "The search"): x
// split along K is read by two contractions with replicated weights. One op
// at a time, the rules take each weight's part of K and all-reduce each
// small result (two all_reduces of 12 KiB); the search gathers x once
// (16 KiB), shared by both matmuls.
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

// SEARCH-LABEL: func.func @two_readers(
// The four combinations of the two choice points were placed; the kept one
// moves 16 KiB (plus arithmetic), the rules' 24 KiB.
// SEARCH-SAME: tessera.shard_search = {cost = 1.792600e+04 : f64, placements = 4 : i64, rules_cost = 25356.2548828125 : f64}
// SEARCH: %[[X:.*]] = tessera_graph.all_gather %arg0 over @mesh ["tp"] dim = 1 : tensor<64x64xf32> -> tensor<64x128xf32>
// SEARCH: tessera_graph.matmul %[[X]], %arg1
// SEARCH: tessera_graph.matmul %[[X]], %arg2
// SEARCH-NOT: all_reduce
// SEARCH-NOT: all_gather
// SEARCH: return

// RULES-LABEL: func.func @two_readers(
// RULES-NOT: all_gather
// RULES: tessera_graph.all_reduce sum
// RULES: tessera_graph.all_reduce sum
// RULES: return
func.func @two_readers(
    %x: tensor<64x128xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w1: tensor<128x48xf32>, %w2: tensor<128x48xf32>)
    -> (tensor<64x48xf32>, tensor<64x48xf32>) attributes {tessera.global_view} {
  %a = tessera_graph.matmul %x, %w1 : tensor<64x128xf32>, tensor<128x48xf32> -> tensor<64x48xf32>
  %b = tessera_graph.matmul %x, %w2 : tensor<64x128xf32>, tensor<128x48xf32> -> tensor<64x48xf32>
  %ta = tessera_graph.tanh %a : tensor<64x48xf32>
  %tb = tessera_graph.tanh %b : tensor<64x48xf32>
  return %ta, %tb : tensor<64x48xf32>, tensor<64x48xf32>
}
