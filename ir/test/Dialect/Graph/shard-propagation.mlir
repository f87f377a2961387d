// RUN: tessera-opt %s --split-input-file --tessera-shard-propagation | FileCheck %s
// The decisions of --tessera-shard-propagation, one per op; the values are
// checked against the global program in ir/unittests/ShardPropagationTest.

// The Megatron MLP: one all_reduce, where the partial sum meets b2.
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %arg1: tensor<8x6xf32> {tessera_graph.sharding
// CHECK: tessera_graph.matmul %arg0, %arg1 {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>} : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK: tessera_graph.relu %{{.*}} {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"]
// CHECK: %[[P:.*]] = tessera_graph.matmul {{.*}} reduce = ["tp"]>} : tensor<4x6xf32>, tensor<6x4xf32> -> tensor<4x4xf32>
// CHECK: %[[Y:.*]] = tessera_graph.all_reduce sum %[[P]] over @mesh ["tp"]
// CHECK: tessera_graph.add %[[Y]], %arg3
// CHECK-NOT: all_reduce
// CHECK: return
func.func @mlp(%x: tensor<4x8xf32>,
    %w1: tensor<8x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w2: tensor<12x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %b2: tensor<4xf32>) -> tensor<4x4xf32> attributes {tessera.global_view} {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x12xf32> -> tensor<4x12xf32>
  %h = tessera_graph.relu %h0 : tensor<4x12xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<4x12xf32>, tensor<12x4xf32> -> tensor<4x4xf32>
  %y = tessera_graph.add %p, %b2 : tensor<4x4xf32>, tensor<4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Data parallel: rows split over dp, the weight replicated; the mean over
// the rows is a partial sum (each device's mean / 2), all-reduced at the
// return because the loss is declared replicated.
tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %arg0: tensor<4x8xf32>
// CHECK: tessera_graph.reduce mean {{.*}} reduce = ["dp"]>} : tensor<4x8xf32> -> tensor<1x1xf32>
// CHECK: %[[H:.*]] = arith.constant dense<5.000000e-01> : tensor<1xf32>
// CHECK: %[[M:.*]] = tessera_graph.mul %{{.*}}, %[[H]]
// CHECK: %[[L:.*]] = tessera_graph.all_reduce sum %[[M]] over @mesh ["dp"]
// CHECK: return %[[L]]
func.func @loss(%x: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %w: tensor<8x8xf32>) -> tensor<1x1xf32> attributes {tessera.global_view} {
  %h = tessera_graph.matmul %x, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %l = tessera_graph.reduce mean %h dims = [0, 1] order = pairwise : tensor<8x8xf32> -> tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}
