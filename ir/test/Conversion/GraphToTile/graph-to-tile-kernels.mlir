// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s
// Each kernel compiles to valid Vulkan SPIR-V on its own:
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=mlp_k0_gemm --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k0.spv | FileCheck %s --check-prefix=SPV
// RUN: spirv-val --target-env vulkan1.1 %t.k0.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=mlp_k1_gemm --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k1.spv
// RUN: spirv-val --target-env vulkan1.1 %t.k1.spv

// examples/mlp.mlir: two GEMM kernels with their epilogues fused (bias +
// relu, bias), one intermediate (H, 512x4096 f32 = 8 MiB) between them.

// The launch plan: the function on flat buffers, inputs then the result.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %[[X:.*]]: memref<524288xf32> {tessera.buffer = "input"}, %[[W1:.*]]: memref<4194304xf32> {tessera.buffer = "input"}, %[[B1:.*]]: memref<4096xf32> {tessera.buffer = "input"}, %[[W2:.*]]: memref<4194304xf32> {tessera.buffer = "input"}, %[[B2:.*]]: memref<1024xf32> {tessera.buffer = "input"}, %[[Y:.*]]: memref<524288xf32> {tessera.buffer = "output"}) attributes {tessera.launch_plan}
// CHECK-NEXT: %[[H:.*]] = memref.alloc() {tessera.buffer = "intermediate", tessera.bytes = 8388608 : i64} : memref<2097152xf32>
// N/128 x M/128 groups: 32x4, then 8x4.
// CHECK-NEXT: call @mlp_k0_gemm(%[[X]], %[[W1]], %[[B1]], %[[H]]) {tessera.grid = array<i64: 32, 4, 1>}
// CHECK-NEXT: call @mlp_k1_gemm(%[[H]], %[[W2]], %[[B2]], %[[Y]]) {tessera.grid = array<i64: 8, 4, 1>}
// CHECK-NEXT: memref.dealloc %[[H]]
// CHECK-NEXT: return

// The first GEMM: 256 lanes, A and B slices of 16 in shared memory, a
// 8x8 register block (64 accumulators) per lane, barriers around the
// compute; no guards (512, 4096, 1024 are multiples of the tile).
// CHECK-LABEL: func.func @mlp_k0_gemm(
// CHECK-SAME: tessera_tile.grid = array<i64: 32, 4, 1>, tessera_tile.group_size = array<i64: 256>
// CHECK-NOT: arith.select
// CHECK: tessera_tile.lane_id 0
// CHECK-DAG: tessera_tile.group_id 0
// CHECK-DAG: tessera_tile.group_id 1
// CHECK: %[[AS:.*]] = tessera_tile.shared_alloc : memref<2048xf32, 3>
// CHECK: %[[BS:.*]] = tessera_tile.shared_alloc : memref<2048xf32, 3>
// CHECK: %[[ACC:.*]]:64 = scf.for %{{.*}} = %c0 to %c1024 step %c16 iter_args(
// CHECK-COUNT-8: memref.store %{{.*}}, %[[BS]][%{{.*}}] : memref<2048xf32, 3>
// CHECK: tessera_tile.barrier
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// CHECK-COUNT-64: math.fma
// CHECK: tessera_tile.barrier
// Epilogue on the registers: bias (broadcast over rows: flat % 4096), relu
// (x < 0 ? 0 : x, which keeps a NaN), then the store.
// CHECK: arith.remui %{{.*}}, %c4096
// CHECK-NEXT: %[[BIAS:.*]] = memref.load %arg2
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]]#0, %[[BIAS]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.cmpf olt, %[[S]], %cst : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[NEG]], %cst, %[[S]] : f32
// CHECK-NEXT: memref.store %[[R]], %arg3
// CHECK-LABEL: func.func @mlp_k1_gemm(
// CHECK-SAME: tessera_tile.grid = array<i64: 8, 4, 1>
// CHECK: math.fma
// CHECK: arith.addf
// CHECK-NOT: arith.select
// CHECK: return

// SPV: spirv.module @__spv__mlp_k0_gemm
// SPV: spirv.ControlBarrier
// SPV: spirv.GL.Fma
// SPV: spirv.ExecutionMode @mlp_k0_gemm "LocalSize", 256, 1, 1

func.func @mlp(%x: tensor<512x1024xf32>, %w1: tensor<1024x4096xf32>, %b1: tensor<4096xf32>,
               %w2: tensor<4096x1024xf32>, %b2: tensor<1024xf32>) -> tensor<512x1024xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<512x1024xf32>, tensor<1024x4096xf32> -> tensor<512x4096xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<512x4096xf32>, tensor<4096xf32>
  %h = tessera_graph.relu %h1 : tensor<512x4096xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<512x4096xf32>, tensor<4096x1024xf32> -> tensor<512x1024xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<512x1024xf32>, tensor<1024xf32>
  return %y : tensor<512x1024xf32>
}
