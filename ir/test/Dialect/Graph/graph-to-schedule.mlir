// RUN: tessera-opt %s --tessera-graph-to-schedule | FileCheck %s
// RUN: tessera-opt %s --tessera-graph-to-schedule="tile-m=48 micro-m=4 row-tile=16 vector-width=4" | FileCheck %s --check-prefix=OPT
// RUN: tessera-opt %s --tessera-graph-to-schedule="merge-matmul-chains=0 fuse-reductions=0" | FileCheck %s --check-prefix=SPLIT
// RUN: tessera-opt %s --tessera-graph-to-schedule="fuse=0 merge-matmul-chains=0" | FileCheck %s --check-prefix=UNFUSED

// The MLP: both matmuls with their bias (+relu) epilogues in one tile (the
// first group feeds the second's lhs); nothing is stored in between.
// CHECK-LABEL: func.func @mlp
// CHECK: %[[Y:.*]] = tessera_schedule.tile(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) tile_sizes = [132, 256, 256] micro_tile = [6, 16]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.matmul
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_graph.relu
// CHECK-NEXT: tessera_graph.matmul
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_schedule.yield
// CHECK-NOT: tessera_schedule.tile
// CHECK: return %[[Y]]
// OPT-LABEL: func.func @mlp
// OPT: tile_sizes = [48, 256, 256] micro_tile = [4, 16]
// SPLIT-LABEL: func.func @mlp
// SPLIT: %[[H:.*]] = tessera_schedule.tile(%{{.*}}, %{{.*}}, %{{.*}}) tile_sizes = [132, 256, 256] micro_tile = [6, 16]
// SPLIT: tessera_schedule.tile(%[[H]], %{{.*}}, %{{.*}})
// Without fusion (the unfused program measurements compare with) every op
// is a tile of its own: matmul, add, relu, matmul, add.
// UNFUSED-LABEL: func.func @mlp
// UNFUSED-COUNT-5: tessera_schedule.tile(
// UNFUSED-NOT: tessera_schedule.tile(
// UNFUSED: return
func.func @mlp(%x: tensor<128x64xf32>, %w1: tensor<64x256xf32>, %b1: tensor<256xf32>,
               %w2: tensor<256x64xf32>, %b2: tensor<64xf32>) -> tensor<128x64xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<128x256xf32>, tensor<256xf32>
  %h = tessera_graph.relu %h1 : tensor<128x256xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<128x256xf32>, tensor<256x64xf32> -> tensor<128x64xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<128x64xf32>, tensor<64xf32>
  return %y : tensor<128x64xf32>
}

// Softmax with the elementwise chain that consumes it (scale by a splat
// constant, cast): one tile, [R] / [V] sizes, the constant cloned in.
// CHECK-LABEL: func.func @softmax_epilogue
// CHECK-NOT: arith.constant
// CHECK: tessera_schedule.tile(%{{.*}}) tile_sizes = [64] micro_tile = [8]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.constant dense<2.000000e+00>
// CHECK-NEXT: tessera_graph.softmax
// CHECK-NEXT: tessera_graph.mul
// CHECK-NEXT: tessera_graph.cast
// CHECK-NEXT: tessera_schedule.yield
// OPT-LABEL: func.func @softmax_epilogue
// OPT: tile_sizes = [16] micro_tile = [4]
// Without fuse-reductions the softmax is a tile of its own and the chain another.
// SPLIT-LABEL: func.func @softmax_epilogue
// SPLIT: %[[S:.*]] = tessera_schedule.tile(%{{.*}}) tile_sizes = [64] micro_tile = [8]
// SPLIT-NEXT: ^bb0
// SPLIT-NEXT: tessera_graph.softmax
// SPLIT-NEXT: tessera_schedule.yield
// SPLIT: tessera_schedule.tile(%[[S]]) tile_sizes = [64] micro_tile = [8]
// SPLIT-NEXT: ^bb0
// SPLIT-NEXT: arith.constant
// SPLIT-NEXT: tessera_graph.mul
// SPLIT-NEXT: tessera_graph.cast
func.func @softmax_epilogue(%x: tensor<64x100xf32>) -> tensor<64x100xbf16> {
  %c = arith.constant dense<2.0> : tensor<64x100xf32>
  %s = tessera_graph.softmax %x dim = 1 : tensor<64x100xf32>
  %m = tessera_graph.mul %s, %c : tensor<64x100xf32>, tensor<64x100xf32>
  %y = tessera_graph.cast %m : tensor<64x100xf32> -> tensor<64x100xbf16>
  return %y : tensor<64x100xbf16>
}

// A reduce keeps its association order inside the tile; its consumer (of the
// reduced shape) is fused, a consumer of another shape is not.
// CHECK-LABEL: func.func @reduce_epilogue
// CHECK: %[[R:.*]] = tessera_schedule.tile(%{{.*}}) tile_sizes = [32] micro_tile = [8]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.reduce sum %{{.*}} dims = [1] order = pairwise
// CHECK-NEXT: tessera_graph.exp
// CHECK-NEXT: tessera_schedule.yield
// CHECK: tessera_schedule.tile(%{{.*}}, %[[R]]) tile_sizes = [32] micro_tile = [8]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_schedule.yield
func.func @reduce_epilogue(%x: tensor<32x64xf32>, %z: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = tessera_graph.reduce sum %x dims = [1] order = pairwise : tensor<32x64xf32> -> tensor<32xf32>
  %e = tessera_graph.exp %r : tensor<32xf32>
  %y = tessera_graph.add %z, %e : tensor<32x32xf32>, tensor<32xf32>
  return %y : tensor<32x32xf32>
}

// Elementwise trees without a root: two producers fused into their
// consumer; a value read twice is stored (a tile of its own).
// CHECK-LABEL: func.func @trees
// CHECK: %[[T:.*]] = tessera_schedule.tile(%{{.*}}) tile_sizes = [16] micro_tile = [8]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.exp
// CHECK-NEXT: tessera_schedule.yield
// CHECK: tessera_schedule.tile(%[[T]], %{{.*}}) tile_sizes = [16] micro_tile = [8]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.mul
// CHECK-NEXT: tessera_graph.relu
// CHECK-NEXT: tessera_graph.sub
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_schedule.yield
func.func @trees(%a: tensor<16x24xf32>, %b: tensor<16x24xf32>) -> tensor<16x24xf32> {
  %t = tessera_graph.exp %a : tensor<16x24xf32>
  %l = tessera_graph.mul %t, %t : tensor<16x24xf32>, tensor<16x24xf32>
  %r0 = tessera_graph.relu %b : tensor<16x24xf32>
  %r = tessera_graph.sub %r0, %t : tensor<16x24xf32>, tensor<16x24xf32>
  %y = tessera_graph.add %l, %r : tensor<16x24xf32>, tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

// At most one root per tile: the sum of two matmuls keeps the first in the
// consumer's tile and stores the second.
// CHECK-LABEL: func.func @two_matmuls
// CHECK: %[[P:.*]] = tessera_schedule.tile(%{{.*}}, %{{.*}}) tile_sizes
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.matmul
// CHECK-NEXT: tessera_schedule.yield
// CHECK: tessera_schedule.tile(%{{.*}}, %{{.*}}, %[[P]]) tile_sizes
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.matmul
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_schedule.yield
func.func @two_matmuls(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>, %c: tensor<8x16xf32>,
                       %d: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %m0 = tessera_graph.matmul %a, %b : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
  %m1 = tessera_graph.matmul %c, %d : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
  %y = tessera_graph.add %m0, %m1 : tensor<8x8xf32>, tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// A tensor in another layout is not fused: its producer stores it.
// CHECK-LABEL: func.func @layouts
// CHECK: %[[E:.*]] = tessera_schedule.tile
// CHECK: tessera_graph.exp
// CHECK: tessera_schedule.yield %{{.*}} : tensor<16x16xf32, #tessera_graph.layout<col_major>>
// CHECK: tessera_schedule.tile(%[[E]])
// CHECK: tessera_graph.relu
func.func @layouts(%a: tensor<16x16xf32, #tessera_graph.layout<col_major>>) -> tensor<16x16xf32, #tessera_graph.layout<col_major>> {
  %e = tessera_graph.exp %a : tensor<16x16xf32, #tessera_graph.layout<col_major>>
  %r = tessera_graph.relu %e : tensor<16x16xf32, #tessera_graph.layout<col_major>>
  return %r : tensor<16x16xf32, #tessera_graph.layout<col_major>>
}

// blocked<BM, BN, BK>: BK is the contraction block (KC) of the matmul the
// tensor feeds, here through the convert_layout that makes it row-major.
// CHECK-LABEL: func.func @blocked_bk
// CHECK: tessera_schedule.tile({{.*}}) tile_sizes = [66, 32, 32] micro_tile = [6, 16]
func.func @blocked_bk(%a: tensor<64x128xf32, #tessera_graph.layout<blocked<16, 16, 32>>>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %r = tessera_graph.convert_layout %a : tensor<64x128xf32, #tessera_graph.layout<blocked<16, 16, 32>>> -> tensor<64x128xf32>
  %c = tessera_graph.matmul %r, %b : tensor<64x128xf32>, tensor<128x32xf32> -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}
