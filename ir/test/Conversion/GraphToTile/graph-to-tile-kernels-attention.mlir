// flash_attention on the GPU path (--schedule attention=1): one kernel, no
// Sq x Skv buffer; K^T read through its col_major layout (K's storage).
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={attention=1}" | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={attention=1}" --tessera-strip-launch-plans=keep=attention_k0_attention --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// The default GPU schedule keeps the matmul + softmax + matmul kernels.
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s --check-prefix=UNFUSED

// CHECK-LABEL: func.func @attention(
// CHECK-NOT: memref.alloc
// The GPU schedule's 64 x 32 blocks: 256 / 64 = 4 groups.
// CHECK: call @attention_k0_attention(%arg0, %arg1, %arg2, %arg3) {tessera.grid = array<i64: 4, 1, 1>}
// CHECK-NEXT: return
// Shared memory: K block 64 x 32, V block 32 x 64, scores 64 x 32 (24 KiB),
// m, l, rescale. 64 lanes, each an 8 x 4 block of the scores and 8 x 8 of O.
// CHECK-LABEL: func.func @attention_k0_attention(
// CHECK-SAME: tessera_tile.group_size = array<i64: 64>
// CHECK-DAG: tessera_tile.shared_alloc : memref<2048xf32, 3>
// CHECK-DAG: tessera_tile.shared_alloc : memref<64xf32, 3>
// CHECK: math.exp
// CHECK: math.fma
// CHECK: arith.divf
// UNFUSED-LABEL: func.func @attention(
// UNFUSED: memref.alloc() {{.*}} : memref<65536xf32>
// UNFUSED: _gemm
// UNFUSED: _softmax
// UNFUSED: _gemm
func.func @attention(%q: tensor<256x64xf32>,
                     %kt: tensor<64x256xf32, #tessera_graph.layout<col_major>>,
                     %v: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %scale = arith.constant dense<0.125> : tensor<256xf32>
  %k_t = tessera_graph.convert_layout %kt : tensor<64x256xf32, #tessera_graph.layout<col_major>> -> tensor<64x256xf32>
  %s0 = tessera_graph.matmul %q, %k_t : tensor<256x64xf32>, tensor<64x256xf32> -> tensor<256x256xf32>
  %s = tessera_graph.mul %s0, %scale : tensor<256x256xf32>, tensor<256xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<256x256xf32>
  %o = tessera_graph.matmul %p, %v : tensor<256x256xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %o : tensor<256x64xf32>
}
