// RUN: tessera-opt %s --split-input-file --tessera-shard-propagation=search-runs=1 | FileCheck %s
// The rules of --tessera-shard-propagation, one decision per op, without
// the search (shard-propagation-search.mlir: at these tiny sizes it may
// trade a part's slices for a few bytes); the values are checked against
// the global program in ir/unittests/ShardPropagationTest.

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

// -----

// Stochastic casts of partitioned tensors key their random bits by the
// global index: one mesh_position for the function, the global strides,
// and per mesh axis the global index of a device's first element per unit
// of its coordinate (rows over dp: 4 rows of 12; columns over tp: 3). A
// replicated cast keeps the local (= global) index.
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 4]
// CHECK-LABEL: func.func @rounded(
// CHECK: %[[P:.*]] = tessera_graph.mesh_position @mesh : tensor<1xi32>
// CHECK-NOT: mesh_position
// CHECK: tessera_graph.cast %arg0, %[[P]] {global_strides = array<i64: 12, 1>, mesh_offsets = array<i64: 48, 3>, mesh_shape = array<i64: 2, 4>, rounding = "stochastic", seed = 7 : i64, tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", "tp"]{{.*}}} : tensor<4x3xf32>, tensor<1xi32> -> tensor<4x3xbf16>
// CHECK: tessera_graph.cast %arg1, %[[P]] {global_strides = array<i64: 12, 1>, mesh_offsets = array<i64: 0, 3>, {{.*}}seed = 8 : i64{{.*}} : tensor<8x3xf32>, tensor<1xi32> -> tensor<8x3xbf16>
// CHECK: tessera_graph.cast %arg2 {rounding = "stochastic", seed = 9 : i64{{.*}} : tensor<8x12xf32> -> tensor<8x12xbf16>
func.func @rounded(
    %x: tensor<8x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", "tp"], replicate = [], reduce = []>},
    %y: tensor<8x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %z: tensor<8x12xf32>)
    -> (tensor<8x12xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", "tp"], replicate = [], reduce = []>},
        tensor<8x12xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
        tensor<8x12xbf16>)
    attributes {tessera.global_view} {
  %a = tessera_graph.cast %x {rounding = "stochastic", seed = 7} : tensor<8x12xf32> -> tensor<8x12xbf16>
  %b = tessera_graph.cast %y {rounding = "stochastic", seed = 8} : tensor<8x12xf32> -> tensor<8x12xbf16>
  %c = tessera_graph.cast %z {rounding = "stochastic", seed = 9} : tensor<8x12xf32> -> tensor<8x12xbf16>
  return %a, %b, %c : tensor<8x12xbf16>, tensor<8x12xbf16>, tensor<8x12xbf16>
}

// -----

// Data parallel with the momentum split over dp (ZeRO stage 1): the
// gradient is reduce-scattered onto the momentum's rows (half the bytes of
// an all_reduce), the replicated weight takes its rows locally (a gather by
// the device's dp coordinate, position / 2 on this 2 x 2 mesh), and the
// new weight is all-gathered once.
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// CHECK-LABEL: func.func @momentum(
// CHECK: %[[POS:.*]] = tessera_graph.mesh_position @mesh : tensor<1xi32>
// CHECK: tessera_graph.transpose %arg0 perm = [1, 0] {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "dp"]
// CHECK: %[[G:.*]] = tessera_graph.matmul {{.*}} reduce = ["dp"]>} : tensor<4x4xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
// CHECK: %[[GS:.*]] = tessera_graph.reduce_scatter sum %[[G]] over @mesh ["dp"] dim = 0 : tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK: %[[M:.*]] = tessera_graph.add %{{.*}}, %[[GS]]
// CHECK: %[[C:.*]] = tessera_graph.div %[[POS]], %{{.*}} : tensor<1xi32>, tensor<1xi32>
// CHECK: %[[R:.*]] = tessera_graph.add %{{.*}}, %{{.*}} : tensor<2xi32>, tensor<1xi32>
// CHECK: %[[WP:.*]] = tessera_graph.gather %arg2, %[[R]] : tensor<4x6xf32>, tensor<2xi32> -> tensor<2x6xf32>
// CHECK: %[[W:.*]] = tessera_graph.sub %[[WP]], %{{.*}} dims = ["dp", ""]
// CHECK: %[[WA:.*]] = tessera_graph.all_gather %[[W]] over @mesh ["dp"] dim = 0 : tensor<2x6xf32> -> tensor<4x6xf32>
// CHECK-NOT: all_reduce
// CHECK: return %[[WA]], %[[M]]
func.func @momentum(%x: tensor<8x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %dy: tensor<8x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %w: tensor<4x6xf32>,
    %m: tensor<4x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>})
    -> (tensor<4x6xf32>, tensor<4x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %xt = tessera_graph.transpose %x perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %g = tessera_graph.matmul %xt, %dy : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  %beta = arith.constant dense<0.9> : tensor<1xf32>
  %lr = arith.constant dense<0.1> : tensor<1xf32>
  %mb = tessera_graph.mul %m, %beta : tensor<4x6xf32>, tensor<1xf32>
  %mn = tessera_graph.add %mb, %g : tensor<4x6xf32>, tensor<4x6xf32>
  %u = tessera_graph.mul %mn, %lr : tensor<4x6xf32>, tensor<1xf32>
  %wn = tessera_graph.sub %w, %u : tensor<4x6xf32>, tensor<4x6xf32>
  return %wn, %mn : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// A replicated value returned split over tp (the last axis) along dim 1:
// each device takes its columns locally (no collective): both static
// column slices, the one of its tp coordinate (position mod 2) selected.
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// CHECK-LABEL: func.func @columns(
// CHECK: %[[POS:.*]] = tessera_graph.mesh_position @mesh
// CHECK-NOT: all_gather
// CHECK-NOT: reduce_scatter
// CHECK-NOT: transpose
// CHECK: %[[S1:.*]] = tessera_graph.slice %{{.*}} offsets = [0, 3] strides = [1, 1] : tensor<4x6xf32> -> tensor<4x3xf32>
// CHECK: %[[S0:.*]] = tessera_graph.slice %{{.*}} offsets = [0, 0] strides = [1, 1] : tensor<4x6xf32> -> tensor<4x3xf32>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0> : tensor<1xi32>
// CHECK: %[[Q:.*]] = tessera_graph.div %[[POS]]
// CHECK: %[[QS:.*]] = tessera_graph.mul %[[Q]]
// CHECK: %[[TP:.*]] = tessera_graph.sub %[[POS]], %[[QS]]
// CHECK: %[[MINE:.*]] = tessera_graph.compare eq %[[TP]], %[[ZERO]]
// CHECK: %[[B:.*]] = tessera_graph.select %[[MINE]], %[[S0]], %[[S1]] : tensor<1xi1>, tensor<4x3xf32>, tensor<4x3xf32>
// CHECK: return %[[B]]
func.func @columns(%x: tensor<4x6xf32>)
    -> (tensor<4x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %y = tessera_graph.exp %x : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// Heads made from a column-split projection: the reshape keeps the split on
// the heads (each device's 4 columns are 2 whole heads), the
// transpose moves it to dim 0; a slice of columns gathers them (it cuts
// the split dim; its 3 columns do not divide over 2 devices, so it stays
// whole: @qkv_slices below splits again), a slice of rows keeps them.
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
// CHECK-LABEL: func.func @heads(
// CHECK: tessera_graph.reshape %arg0 {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp", ""]{{.*}}} : tensor<6x4xf32> -> tensor<6x2x2xf32>
// CHECK: tessera_graph.transpose {{.*}}dims = ["tp", "", ""]{{.*}} : tensor<6x2x2xf32> -> tensor<2x6x2xf32>
// CHECK: tessera_graph.slice %arg0 offsets = [0, 0] strides = [1, 1] {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"]{{.*}}} : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK: %[[G:.*]] = tessera_graph.all_gather %arg0 over @mesh ["tp"] dim = 1
// CHECK: tessera_graph.slice %[[G]] offsets = [0, 2] {{.*}} : tensor<6x8xf32> -> tensor<6x3xf32>
func.func @heads(%q: tensor<6x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>})
    -> (tensor<4x6x2xf32>, tensor<3x8xf32>, tensor<6x3xf32>) attributes {tessera.global_view} {
  %h = tessera_graph.reshape %q : tensor<6x8xf32> -> tensor<6x4x2xf32>
  %t = tessera_graph.transpose %h perm = [1, 0, 2] : tensor<6x4x2xf32> -> tensor<4x6x2xf32>
  %r = tessera_graph.slice %q offsets = [0, 0] strides = [1, 1] : tensor<6x8xf32> -> tensor<3x8xf32>
  %c = tessera_graph.slice %q offsets = [0, 2] strides = [1, 1] : tensor<6x8xf32> -> tensor<6x3xf32>
  return %t, %r, %c : tensor<4x6x2xf32>, tensor<3x8xf32>, tensor<6x3xf32>
}

// -----

// A fused QKV projection split by columns: q, k and v are slices inside
// the split dim. One all_gather (shared by the slices); q and k then take
// their parts again (the tp coordinate selects one of two static column
// slices), so their product runs on 2 of the 4 columns; v, returned whole,
// stays whole.
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
// CHECK-LABEL: func.func @qkv_slices(
// CHECK: %[[POS:.*]] = tessera_graph.mesh_position @mesh
// CHECK: %[[G:.*]] = tessera_graph.all_gather %arg0 over @mesh ["tp"] dim = 1 : tensor<6x6xf32> -> tensor<6x12xf32>
// CHECK: %[[Q:.*]] = tessera_graph.slice %[[G]] offsets = [0, 0] {{.*}} -> tensor<6x4xf32>
// CHECK: %[[Q1:.*]] = tessera_graph.slice %[[Q]] offsets = [0, 2] strides = [1, 1] : tensor<6x4xf32> -> tensor<6x2xf32>
// CHECK: %[[Q0:.*]] = tessera_graph.slice %[[Q]] offsets = [0, 0] strides = [1, 1] : tensor<6x4xf32> -> tensor<6x2xf32>
// CHECK: %[[MINE:.*]] = tessera_graph.compare eq %[[POS]]
// CHECK: %[[QP:.*]] = tessera_graph.select %[[MINE]], %[[Q0]], %[[Q1]]
// CHECK: %[[K:.*]] = tessera_graph.slice %[[G]] offsets = [0, 4]
// CHECK: %[[KP:.*]] = tessera_graph.select
// CHECK: tessera_graph.mul %[[QP]], %[[KP]] {{.*}}dims = ["", "tp"]{{.*}} : tensor<6x2xf32>, tensor<6x2xf32>
// CHECK: %[[V:.*]] = tessera_graph.slice %[[G]] offsets = [0, 8]
// CHECK-NOT: all_gather
// CHECK: return {{.*}}, %[[V]] : tensor<6x2xf32>, tensor<6x4xf32>
func.func @qkv_slices(%qkv: tensor<6x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>})
    -> (tensor<6x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
        tensor<6x4xf32>) attributes {tessera.global_view} {
  %q = tessera_graph.slice %qkv offsets = [0, 0] strides = [1, 1] : tensor<6x12xf32> -> tensor<6x4xf32>
  %k = tessera_graph.slice %qkv offsets = [0, 4] strides = [1, 1] : tensor<6x12xf32> -> tensor<6x4xf32>
  %qk = tessera_graph.mul %q, %k : tensor<6x4xf32>, tensor<6x4xf32> -> tensor<6x4xf32>
  %v = tessera_graph.slice %qkv offsets = [0, 8] strides = [1, 1] : tensor<6x12xf32> -> tensor<6x4xf32>
  return %qk, %v : tensor<6x4xf32>, tensor<6x4xf32>
}

// -----

// Sequence parallelism on a 2 x 2 mesh: rows over dp x tp (one dim over two
// axes) around the tensor-parallel matmuls. The layernorm runs on a quarter
// of the rows; the column-split matmul gets rows over dp by one all_gather
// over tp (cheaper than gathering W1); the row-split matmul's partial sum is
// reduce-scattered over tp back onto rows over dp x tp at the residual.
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
// CHECK-LABEL: func.func @sp_mlp(
// CHECK-SAME: %arg0: tensor<4x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = {{\[}}["dp", "tp"], ""]
// CHECK: %[[N:.*]] = tessera_graph.layernorm %arg0, {{.*}} dims = {{\[}}["dp", "tp"], ""]{{.*}} : tensor<4x8xf32>
// CHECK: %[[G:.*]] = tessera_graph.all_gather %[[N]] over @mesh ["tp"] dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK: tessera_graph.matmul %[[G]], %arg3 {{.*}}dims = ["dp", "tp"]{{.*}} -> tensor<8x8xf32>
// CHECK: %[[P:.*]] = tessera_graph.matmul {{.*}}reduce = ["tp"]>} : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK: %[[S:.*]] = tessera_graph.reduce_scatter sum %[[P]] over @mesh ["tp"] dim = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: tessera_graph.add %[[S]], %arg0 {{.*}}dims = {{\[}}["dp", "tp"], ""]
// CHECK-NOT: all_reduce
// CHECK: return
func.func @sp_mlp(
    %x: tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>},
    %g: tensor<8xf32>, %b: tensor<8xf32>,
    %w1: tensor<8x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w2: tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %n = tessera_graph.layernorm %x, %g, %b : tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>
  %h0 = tessera_graph.matmul %n, %w1 : tensor<16x8xf32>, tensor<8x16xf32> -> tensor<16x16xf32>
  %h = tessera_graph.gelu %h0 : tensor<16x16xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<16x16xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %y = tessera_graph.add %p, %x : tensor<16x8xf32>, tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}
