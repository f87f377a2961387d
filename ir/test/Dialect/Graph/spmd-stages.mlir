// RUN: tessera-opt %s --split-input-file --tessera-spmd-stages | FileCheck %s
// Stage functions are plain Graph IR: the cpu pipeline compiles them.
// RUN: tessera-opt %s --split-input-file --tessera-spmd-stages | FileCheck %s --check-prefix=STAGE

tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

// The tensor-parallel MLP: compute, all_reduce, compute.
// CHECK-LABEL: func.func @tp_mlp
// CHECK-SAME: attributes {tessera.mesh = @mesh, tessera.spmd_plan}
// CHECK-NEXT: %[[P:.*]] = call @tp_mlp_stage0(%arg0, %arg1, %arg2)
// CHECK-NEXT: %[[Y0:.*]] = tessera_graph.all_reduce sum %[[P]] over @mesh ["tp"]
// CHECK-NEXT: %[[Y:.*]] = call @tp_mlp_stage1(%[[Y0]], %arg3)
// CHECK-NEXT: return %[[Y]]
// STAGE-LABEL: func.func private @tp_mlp_stage0
// STAGE-SAME: -> tensor<16x32xf32>
// STAGE: tessera_graph.matmul
// STAGE: tessera_graph.relu
// STAGE: tessera_graph.matmul
// STAGE-NOT: all_reduce
// STAGE: return
// STAGE-LABEL: func.func private @tp_mlp_stage1
// STAGE: tessera_graph.add
func.func @tp_mlp(%x: tensor<16x32xf32>,
                  %w1: tensor<32x64xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
                  %w2: tensor<64x32xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
                  %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %h = tessera_graph.relu %h0 : tensor<16x64xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %y0 = tessera_graph.all_reduce sum %p over @mesh ["tp"] : tensor<16x32xf32> -> tensor<16x32xf32>
  %y = tessera_graph.add %y0, %b : tensor<16x32xf32>, tensor<32xf32>
  return %y : tensor<16x32xf32>
}

// -----

tessera_graph.mesh @mesh axes = ["tp"] shape = [4]

// Gathers and scatters along the last dim of a rank-2 tensor become flat:
// the full tensor is blocked<M, n>, one block per rank, and a
// convert_layout (in the neighbouring stage) restores row-major.
// CHECK-LABEL: func.func @last_dim
// CHECK: %[[G:.*]] = tessera_graph.all_gather %{{.*}} over @mesh ["tp"] dim = 1 : tensor<8x16xf32> -> tensor<8x64xf32, #tessera_graph.layout<blocked<8, 16>>>
// CHECK: %[[S:.*]] = call @last_dim_stage0(%[[G]])
// CHECK-SAME: -> tensor<8x64xf32, #tessera_graph.layout<blocked<8, 16>>>
// CHECK: tessera_graph.reduce_scatter sum %[[S]] over @mesh ["tp"] dim = 1 : tensor<8x64xf32, #tessera_graph.layout<blocked<8, 16>>> -> tensor<8x16xf32>
// STAGE-LABEL: func.func private @last_dim_stage0
// STAGE: convert_layout %arg0 : tensor<8x64xf32, #tessera_graph.layout<blocked<8, 16>>> -> tensor<8x64xf32>
// STAGE: tessera_graph.exp
// STAGE: convert_layout %{{.*}} : tensor<8x64xf32> -> tensor<8x64xf32, #tessera_graph.layout<blocked<8, 16>>>
func.func @last_dim(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %g = tessera_graph.all_gather %x over @mesh ["tp"] dim = 1 : tensor<8x16xf32> -> tensor<8x64xf32>
  %e = tessera_graph.exp %g : tensor<8x64xf32>
  %s = tessera_graph.reduce_scatter sum %e over @mesh ["tp"] dim = 1 : tensor<8x64xf32> -> tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]

// Along dim 0 nothing changes; a col_major operand is made row-major first;
// consecutive collectives need no stage; unused compute is dropped.
// CHECK-LABEL: func.func @dim0
// CHECK-NEXT: %[[R:.*]] = call @dim0_stage0(%arg0)
// CHECK-NEXT: %[[G:.*]] = tessera_graph.all_gather %[[R]] over @mesh ["dp", "tp"] dim = 0 : tensor<4x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT: %[[B:.*]] = tessera_graph.broadcast %[[G]] over @mesh ["dp"] root = 1
// CHECK-NEXT: return %[[B]]
// STAGE-LABEL: func.func private @dim0_stage0
// STAGE-NEXT: convert_layout %arg0 : tensor<4x8xf32, #tessera_graph.layout<col_major>> -> tensor<4x8xf32>
// STAGE-NEXT: return
func.func @dim0(%x: tensor<4x8xf32, #tessera_graph.layout<col_major>>) -> tensor<16x8xf32> {
  %unused = tessera_graph.exp %x : tensor<4x8xf32, #tessera_graph.layout<col_major>>
  %g = tessera_graph.all_gather %x over @mesh ["dp", "tp"] dim = 0 : tensor<4x8xf32, #tessera_graph.layout<col_major>> -> tensor<16x8xf32>
  %b = tessera_graph.broadcast %g over @mesh ["dp"] root = 1 : tensor<16x8xf32> -> tensor<16x8xf32>
  return %b : tensor<16x8xf32>
}

// -----

tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

// Functions that do not name a mesh are left alone.
// CHECK-LABEL: func.func @local
// CHECK-NOT: spmd_plan
// CHECK: tessera_graph.relu
func.func @local(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tessera_graph.relu %x : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

tessera_graph.mesh @mesh axes = ["dp"] shape = [2]

// A constant read on both sides of a collective is made in each stage that
// reads it: no stage returns a constant for a later one (on GPUs, a launch
// and a plan buffer each).
// CHECK-LABEL: func.func @constants
// CHECK-NEXT: %[[A:.*]] = call @constants_stage0(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[R:.*]] = tessera_graph.all_reduce sum %[[A]]
// CHECK-NEXT: call @constants_stage1(%[[R]]) : (tensor<8x4xf32>) -> tensor<8x4xf32>
// STAGE-LABEL: func.func private @constants_stage0(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32>
// STAGE: arith.constant dense<5.000000e-01> : tensor<1xf32>
// STAGE: return %{{.*}} : tensor<8x4xf32>
// STAGE-LABEL: func.func private @constants_stage1(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32>
// STAGE: arith.constant dense<5.000000e-01> : tensor<1xf32>
// STAGE: tessera_graph.add
func.func @constants(%x: tensor<8x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>})
    -> tensor<8x4xf32> {
  %h = arith.constant dense<0.5> : tensor<1xf32>
  %a = tessera_graph.mul %x, %h : tensor<8x4xf32>, tensor<1xf32>
  %r = tessera_graph.all_reduce sum %a over @mesh ["dp"] : tensor<8x4xf32> -> tensor<8x4xf32>
  %y = tessera_graph.add %r, %h : tensor<8x4xf32>, tensor<1xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Collectives along a middle dim (what --tessera-shard-propagation inserts
// for a rank-3 value split on dim 1 or 2): the dim is moved first by a
// transpose in a stage before, gathered or scattered along dim 0, and
// moved back in the stage after.
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
// CHECK-LABEL: func.func @middle_dim(
// CHECK: tessera_graph.all_gather %{{.*}} over @mesh ["tp"] dim = 0 : tensor<4x2x8xf32> -> tensor<8x2x8xf32>
// CHECK: tessera_graph.reduce_scatter sum %{{.*}} over @mesh ["tp"] dim = 0 : tensor<8x2x4xf32> -> tensor<4x2x4xf32>
// CHECK: func.func private @middle_dim_stage0(
// CHECK: tessera_graph.transpose %arg0 perm = [1, 0, 2] : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
// CHECK: func.func private @middle_dim_stage1(
// CHECK: tessera_graph.transpose %arg0 perm = [1, 0, 2] : tensor<8x2x8xf32> -> tensor<2x8x8xf32>
// CHECK: tessera_graph.transpose %arg1 perm = [2, 0, 1] : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
// CHECK: func.func private @middle_dim_stage2(
// CHECK: tessera_graph.transpose %arg0 perm = [1, 2, 0] : tensor<4x2x4xf32> -> tensor<2x4x4xf32>
func.func @middle_dim(%x: tensor<2x4x8xf32>) -> (tensor<2x8x8xf32>, tensor<2x4x4xf32>) {
  %g = tessera_graph.all_gather %x over @mesh ["tp"] dim = 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
  %s = tessera_graph.reduce_scatter sum %x over @mesh ["tp"] dim = 2 : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  return %g, %s : tensor<2x8x8xf32>, tensor<2x4x4xf32>
}
