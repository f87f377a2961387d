// The GPU flash_attention kernel for heads and a causal mask (--schedule
// attention=1): one kernel whose groups take (head, query block) pairs,
// scores of keys past the query set to -inf, and the key loop ending at
// the block holding the query block's last row.
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={attention=1 attn-block-q=16}" | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline="schedule={attention=1 attn-block-q=16}" --tessera-strip-launch-plans=keep=causal_k0_attention --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// Query blocks of 16 (the GPU schedule's 64 would be one per head):
// 4 heads x (64 / 16) query blocks = 16 groups; no 64 x 64 score buffer.
// CHECK-LABEL: func.func @causal(
// CHECK-NOT: memref.alloc
// CHECK: call @causal_k0_attention(%arg0, %arg1, %arg2, %arg3) {tessera.grid = array<i64: 16, 1, 1>}
// CHECK-LABEL: func.func @causal_k0_attention(
// The head and query block of the work item, then each head's offsets.
// CHECK: arith.divui %{{.*}}, %c4
// CHECK: arith.remui %{{.*}}, %c4
// The causal key-loop bound: min(key blocks, (q0 + 15) / 32 + 1).
// CHECK: arith.minui
// Masked scores: key <= query, and within the keys.
// CHECK: arith.cmpi ule
// CHECK: arith.andi
// CHECK: math.exp
func.func @causal(%q: tensor<4x64x16xf32>, %kt: tensor<4x16x64xf32>, %v: tensor<4x64x16xf32>) -> tensor<4x64x16xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<4x64x16xf32>, tensor<4x16x64xf32> -> tensor<4x64x64xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<64x64xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<64x64xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<64x64xi32>, tensor<64x64xi32> -> tensor<64x64xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s1 = tessera_graph.select %keep, %s0, %ninf : tensor<64x64xi1>, tensor<4x64x64xf32>, tensor<f32>
  %p = tessera_graph.softmax %s1 dim = 2 : tensor<4x64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<4x64x64xf32>, tensor<4x64x16xf32> -> tensor<4x64x16xf32>
  return %o : tensor<4x64x16xf32>
}
