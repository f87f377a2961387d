// RUN: tessera-opt %s --split-input-file --tessera-spmd-stages --tessera-overlap-collectives=chunks=4 | FileCheck %s
// chunks below 2: the pass is off.
// RUN: tessera-opt %s --split-input-file --tessera-spmd-stages --tessera-overlap-collectives=chunks=1 | FileCheck %s --check-prefix=OFF

tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

// The tensor-parallel MLP: the stage runs on row blocks of %x (a view per
// block), the weights whole; the all_reduce of block i is issued after the
// compute of block i+1, on stream 1; a concat joins the reduced blocks.
// CHECK-LABEL: func.func @tp_mlp
// CHECK-NEXT: %[[X0:.*]] = tessera_graph.slice %arg0 offsets = [0, 0] strides = [1, 1] : tensor<16x32xf32> -> tensor<4x32xf32>
// CHECK-NEXT: %[[P0:.*]] = call @tp_mlp_stage0_rows4(%[[X0]], %arg1, %arg2)
// CHECK-NEXT: %[[X1:.*]] = tessera_graph.slice %arg0 offsets = [4, 0]
// CHECK-NEXT: %[[P1:.*]] = call @tp_mlp_stage0_rows4(%[[X1]], %arg1, %arg2)
// CHECK-NEXT: %[[R0:.*]] = tessera_graph.all_reduce sum %[[P0]] over @mesh ["tp"] {tessera.stream = 1 : i64} : tensor<4x32xf32> -> tensor<4x32xf32>
// CHECK-NEXT: tessera_graph.slice %arg0 offsets = [8, 0]
// CHECK-NEXT: %[[P2:.*]] = call @tp_mlp_stage0_rows4
// CHECK-NEXT: %[[R1:.*]] = tessera_graph.all_reduce sum %[[P1]]
// CHECK-NEXT: tessera_graph.slice %arg0 offsets = [12, 0]
// CHECK-NEXT: %[[P3:.*]] = call @tp_mlp_stage0_rows4
// CHECK-NEXT: %[[R2:.*]] = tessera_graph.all_reduce sum %[[P2]]
// CHECK-NEXT: %[[R3:.*]] = tessera_graph.all_reduce sum %[[P3]]
// CHECK-NEXT: %[[Y0:.*]] = tessera_graph.concat %[[R0]], %[[R1]], %[[R2]], %[[R3]] dim = 0 {{.*}} -> tensor<16x32xf32>
// CHECK-NEXT: %[[Y:.*]] = call @tp_mlp_stage1(%[[Y0]], %arg3)
// CHECK-NEXT: return %[[Y]]
// The stage on 4 rows; the whole-rows stage is gone.
// CHECK-LABEL: func.func private @tp_mlp_stage0_rows4(%arg0: tensor<4x32xf32>, %arg1: tensor<32x64xf32>, %arg2: tensor<64x32xf32>) -> tensor<4x32xf32>
// CHECK: tessera_graph.matmul %arg0, %arg1 : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
// CHECK: tessera_graph.relu {{.*}} : tensor<4x64xf32>
// CHECK-NOT: func.func private @tp_mlp_stage0(
// OFF-LABEL: func.func @tp_mlp
// OFF-NEXT: call @tp_mlp_stage0(
// OFF-NEXT: tessera_graph.all_reduce
// OFF-NOT: tessera.stream
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

tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

// A weight with as many rows as the result is not split: only the
// activation is (the largest row-local choice). A bias [1, N] broadcasts.
// 6 rows, chunks = 4: the largest count that divides 6 is 3.
// CHECK-LABEL: func.func @square
// CHECK: tessera_graph.slice %arg0 offsets = [0, 0] strides = [1, 1] : tensor<6x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT: call @square_stage0_rows2({{.*}}, %arg1, %arg2)
// CHECK-COUNT-3: tessera_graph.all_reduce max
// CHECK: tessera_graph.concat
// CHECK-LABEL: func.func private @square_stage0_rows2(%arg0: tensor<2x6xf32>, %arg1: tensor<6x6xf32>, %arg2: tensor<1x6xf32>)
func.func @square(%x: tensor<6x6xf32>, %w: tensor<6x6xf32>, %c: tensor<1x6xf32>) -> tensor<6x6xf32> {
  %m = tessera_graph.matmul %x, %w : tensor<6x6xf32>, tensor<6x6xf32> -> tensor<6x6xf32>
  %a = tessera_graph.add %m, %c : tensor<6x6xf32>, tensor<1x6xf32> -> tensor<6x6xf32>
  %s = tessera_graph.softmax %a dim = 1 : tensor<6x6xf32>
  %r = tessera_graph.all_reduce max %s over @mesh ["tp"] : tensor<6x6xf32> -> tensor<6x6xf32>
  return %r : tensor<6x6xf32>
}

// -----

tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

// Not row-local: row r of x^T x needs every row of x, and a softmax along
// dim 0 mixes rows. Both plans are left as they are.
// CHECK-LABEL: func.func @gram
// CHECK-NEXT: call @gram_stage0(
// CHECK-NEXT: tessera_graph.all_reduce sum
// CHECK-NOT: tessera.stream
func.func @gram(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %t = tessera_graph.transpose %x perm = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %g = tessera_graph.matmul %t, %x : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %r = tessera_graph.all_reduce sum %g over @mesh ["tp"] : tensor<8x8xf32> -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
// CHECK-LABEL: func.func @columns
// CHECK-NEXT: call @columns_stage0(
// CHECK-NEXT: tessera_graph.all_reduce sum
// CHECK-NOT: tessera.stream
func.func @columns(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s = tessera_graph.softmax %x dim = 0 : tensor<8x8xf32>
  %r = tessera_graph.all_reduce sum %s over @mesh ["tp"] : tensor<8x8xf32> -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
// A stochastic cast keys its random bits by the row index: in a block of
// rows it would start again at 0 (a block's clone is shared by the
// blocks), so a stage with one is not cut into blocks.
// CHECK-LABEL: func.func @rounded
// CHECK-NEXT: call @rounded_stage0(
// CHECK-NEXT: tessera_graph.all_reduce sum
// CHECK-NOT: tessera.stream
func.func @rounded(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %m = tessera_graph.matmul %x, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %h = tessera_graph.cast %m {rounding = "stochastic", seed = 5} : tensor<8x8xf32> -> tensor<8x8xbf16>
  %f = tessera_graph.cast %h : tensor<8x8xbf16> -> tensor<8x8xf32>
  %r = tessera_graph.all_reduce sum %f over @mesh ["tp"] : tensor<8x8xf32> -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
