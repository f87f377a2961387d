// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=bf16_layer_k0_gemm --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.bf16.spv
// RUN: spirv-val --target-env vulkan1.1 %t.bf16.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=int8_layer_k0_gemm --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.i8.spv
// RUN: spirv-val --target-env vulkan1.1 %t.i8.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=fp8_k0_elementwise --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.f8.spv
// RUN: spirv-val --target-env vulkan1.1 %t.f8.spv

// Element types on the GPU path: buffers in the storage type (bf16 as its
// bits in i16, fp8 as i8), loads widened to f32 / i32, every op rounded to
// its type, stores narrowed (tessera/Conversion/ElementTypes.h).

// bf16 x bf16 -> f32 GEMM + bias, rounded once to bf16: i16 buffers; a
// load is the high half of an f32 (extui, shli 16, bitcast); f32 shared
// staging and FMAs; the store rounds to nearest even by
// tessera_tile.round_to_bf16 (integer code on SPIR-V: spirv-val above).
// CHECK-LABEL: func.func @bf16_layer(
// CHECK-SAME: memref<2048xi16> {tessera.buffer = "input"}, %{{.*}}: memref<1024xi16> {tessera.buffer = "input"}, %{{.*}}: memref<32xf32> {tessera.buffer = "input"}, %{{.*}}: memref<2048xi16> {tessera.buffer = "output"}
// CHECK-LABEL: func.func @bf16_layer_k0_gemm(
// CHECK: tessera_tile.shared_alloc : memref<2048xf32, 3>
// CHECK: %[[H:.*]] = memref.load %arg0[{{.*}}] : memref<2048xi16>
// CHECK: %[[W:.*]] = arith.extui %[[H]] : i16 to i32
// CHECK: %[[S:.*]] = arith.shli %[[W]], %{{.*}} : i32
// CHECK: arith.bitcast %[[S]] : i32 to f32
// CHECK: math.fma
// CHECK: arith.addf
// CHECK: %[[R:.*]] = tessera_tile.round_to_bf16
// CHECK: memref.store %[[R]], %arg3[%{{.*}}] : memref<2048xi16>
func.func @bf16_layer(%x: tensor<64x32xbf16>, %w: tensor<32x32xbf16>, %b: tensor<32xf32>) -> tensor<64x32xbf16> {
  %y0 = tessera_graph.matmul %x, %w : tensor<64x32xbf16>, tensor<32x32xbf16> -> tensor<64x32xf32>
  %y1 = tessera_graph.add %y0, %b : tensor<64x32xf32>, tensor<32xf32>
  %y = tessera_graph.cast %y1 : tensor<64x32xf32> -> tensor<64x32xbf16>
  return %y : tensor<64x32xbf16>
}

// i8 x i8 -> i32: i32 shared staging (sign-extended loads), integer
// multiply-add, the result wraps to i8 at the cast.
// CHECK-LABEL: func.func @int8_layer_k0_gemm(
// CHECK: tessera_tile.shared_alloc : memref<2048xi32, 3>
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK-NOT: math.fma
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: memref.store %{{.*}} : memref<4096xi8>
func.func @int8_layer(%x: tensor<64x96xi8>, %w: tensor<96x64xi8>) -> tensor<64x64xi8> {
  %acc = tessera_graph.matmul %x, %w : tensor<64x96xi8>, tensor<96x64xi8> -> tensor<64x64xi32>
  %r = tessera_graph.relu %acc : tensor<64x64xi32>
  %q = tessera_graph.cast %r : tensor<64x64xi32> -> tensor<64x64xi8>
  return %q : tensor<64x64xi8>
}

// fp8 e4m3fn is i8 in memory; the cast from f32 saturates (minui against
// the largest code, 0x7E = 448) and NaN stays NaN. x / y selects the IEEE
// result for y = 0 (Vulkan leaves it undefined).
// CHECK-LABEL: func.func @fp8_k0_elementwise(
// CHECK: arith.cmpf oeq
// CHECK: arith.divf
// CHECK: arith.minui %{{.*}}, %c126_i32
// CHECK: memref.store %{{.*}} : memref<256xi8>
func.func @fp8(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<256xf8E4M3FN> {
  %d = tessera_graph.div %x, %y : tensor<256xf32>, tensor<256xf32>
  %c = tessera_graph.cast %d : tensor<256xf32> -> tensor<256xf8E4M3FN>
  return %c : tensor<256xf8E4M3FN>
}
