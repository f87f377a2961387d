// RUN: tessera-opt %s | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @tile
func.func @tile(%x: tensor<96x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<96x32xf32> {
  // CHECK: tessera_schedule.tile(%{{.*}}, %{{.*}}, %{{.*}}) tile_sizes = [96, 256, 256] micro_tile = [6, 16]
  %y = tessera_schedule.tile (%x, %w, %b) tile_sizes = [96, 256, 256] micro_tile = [6, 16] {
  ^bb0(%a: tensor<96x64xf32>, %bw: tensor<64x32xf32>, %bias: tensor<32xf32>):
    %m = tessera_graph.matmul %a, %bw : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
    %s = tessera_graph.add %m, %bias : tensor<96x32xf32>, tensor<32xf32>
    // CHECK: tessera_schedule.yield %{{.*}} : tensor<96x32xf32>
    tessera_schedule.yield %s : tensor<96x32xf32>
  } : (tensor<96x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<96x32xf32>
  return %y : tensor<96x32xf32>
}

// CHECK-LABEL: func.func @pipeline
func.func @pipeline(%a: memref<512xf32>, %out: memref<64xf32, 3>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // CHECK: tessera_schedule.pipeline %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} stages = 2
  tessera_schedule.pipeline %k = %c0 to %c8 step %c1 stages = 2 {
    // CHECK: tessera_schedule.prefetch %{{.*}}[%{{.*}}] scope = "shared" double_buffer
    %t = tessera_schedule.prefetch %a[%k] scope = "shared" double_buffer : memref<512xf32> -> memref<64xf32, 3>
    // CHECK: tessera_schedule.copy
    tessera_schedule.copy %t, %out : memref<64xf32, 3>, memref<64xf32, 3>
    // CHECK: tessera_schedule.barrier
    tessera_schedule.barrier
  }
  return
}
