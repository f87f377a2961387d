// RUN: tessera-opt %s --tessera-graph-to-schedule | FileCheck %s
// RUN: tessera-opt %s --tessera-graph-to-schedule="tile-m=48 micro-m=4" | FileCheck %s --check-prefix=OPT

// The MLP: each matmul with its bias (+relu) epilogue becomes one tile.
// CHECK-LABEL: func.func @mlp
// CHECK: %[[H:.*]] = tessera_schedule.tile(%{{.*}}, %{{.*}}, %{{.*}}) tile_sizes = [132, 256, 256] micro_tile = [6, 16]
// CHECK: tessera_graph.matmul
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_graph.relu
// CHECK-NEXT: tessera_schedule.yield
// CHECK: tessera_schedule.tile(%[[H]], %{{.*}}, %{{.*}})
// CHECK: tessera_graph.matmul
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_schedule.yield
// OPT: tile_sizes = [48, 256, 256] micro_tile = [4, 16]
func.func @mlp(%x: tensor<128x64xf32>, %w1: tensor<64x256xf32>, %b1: tensor<256xf32>,
               %w2: tensor<256x64xf32>, %b2: tensor<64xf32>) -> tensor<128x64xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<128x256xf32>, tensor<256xf32>
  %h = tessera_graph.relu %h1 : tensor<128x256xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<128x256xf32>, tensor<256x64xf32> -> tensor<128x64xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<128x64xf32>, tensor<64xf32>
  return %y : tensor<128x64xf32>
}
