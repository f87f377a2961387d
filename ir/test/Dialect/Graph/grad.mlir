// RUN: tessera-opt %s --split-input-file --tessera-grad | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-grad | FileCheck %s --check-prefix=COUNT
// The values of the rules are checked against finite differences in
// ir/unittests/GradCheckTest.cpp; this file checks what the pass builds.

// A declaration is filled, its call inlined, the forward (private) dropped.
// CHECK-LABEL: func.func @step(
// CHECK-NOT: call
// CHECK: tessera_graph.exp
// CHECK: tessera_graph.mul
// CHECK: return
// CHECK-NOT: @f
func.func private @f(%x: tensor<4xf32>) -> tensor<1xf32> {
  %e = tessera_graph.exp %x : tensor<4xf32>
  %l = tessera_graph.reduce sum %e dims = [0] order = pairwise : tensor<4xf32> -> tensor<1xf32>
  return %l : tensor<1xf32>
}
func.func private @f_grad(tensor<4xf32>) -> (tensor<1xf32>, tensor<4xf32>)
    attributes {tessera.grad_of = @f, tessera.wrt = [0]}
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %l, %g = func.call @f_grad(%x) : (tensor<4xf32>) -> (tensor<1xf32>, tensor<4xf32>)
  return %g : tensor<4xf32>
}

// -----

// A gradient nothing calls is an entry point: public, with what it keeps.
// CHECK-LABEL: func.func @g_grad(
// CHECK-SAME: tessera.saved_bytes = 16
func.func private @g(%x: tensor<4xf32>) -> tensor<1xf32> {
  %e = tessera_graph.exp %x : tensor<4xf32>
  %l = tessera_graph.reduce sum %e dims = [0] order = pairwise : tensor<4xf32> -> tensor<1xf32>
  return %l : tensor<1xf32>
}
func.func private @g_grad(tensor<4xf32>) -> (tensor<1xf32>, tensor<4xf32>)
    attributes {tessera.grad_of = @g, tessera.wrt = [0]}

// -----

// SPMD transposes. The all_gather of x becomes a reduce_scatter of its
// cotangent (the loss is replicated: a sum of equal values over the
// group, divided by its size); the replicated weight w, read by the
// sharded rows, gets one all_reduce for its partial sums.
tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
// CHECK-LABEL: func.func @spmd_grad(
// CHECK-SAME: tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""]
// CHECK: tessera_graph.all_gather
// CHECK-DAG: tessera_graph.reduce_scatter sum %{{.*}} over @mesh ["dp"] dim = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-DAG: tessera_graph.all_reduce sum %{{.*}} over @mesh ["dp"] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK: return
// The forward's all_reduce and the weight's: no other.
// COUNT-LABEL: func.func @spmd_grad(
// COUNT-COUNT-2: tessera_graph.all_reduce
// COUNT-NOT: tessera_graph.all_reduce
// COUNT: return
func.func private @spmd(
    %x: tensor<4x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %w: tensor<4x4xf32>) -> tensor<1x1xf32> {
  %full = tessera_graph.all_gather %x over @mesh ["dp"] dim = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
  %a = tessera_graph.matmul %full, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %local = tessera_graph.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %s1 = tessera_graph.reduce sum %a dims = [0, 1] order = pairwise : tensor<8x4xf32> -> tensor<1x1xf32>
  %s2 = tessera_graph.reduce sum %local dims = [0, 1] order = pairwise : tensor<4x4xf32> -> tensor<1x1xf32>
  %s2r = tessera_graph.all_reduce sum %s2 over @mesh ["dp"] : tensor<1x1xf32> -> tensor<1x1xf32>
  %l = tessera_graph.add %s1, %s2r : tensor<1x1xf32>, tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}
func.func private @spmd_grad(tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<1x1xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
    attributes {tessera.grad_of = @spmd}
