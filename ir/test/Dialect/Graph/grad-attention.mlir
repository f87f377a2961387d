// RUN: tessera-opt %s --split-input-file --tessera-grad | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-grad --tessera-graph-to-schedule | FileCheck %s --check-prefix=SCHED
// RUN: tessera-opt %s --split-input-file --tessera-grad --tessera-graph-to-schedule="attention-backward=false" | FileCheck %s --check-prefix=COMPOSED
// RUN: tessera-opt %s --split-input-file --tessera-grad --tessera-graph-to-schedule="attn-block-q=64 attn-block-kv=64 attn-shared-kib=8" | FileCheck %s --check-prefix=FIT
// RUN: tessera-opt %s --split-input-file --tessera-grad --tessera-gpu-graph-pipeline="schedule={attention=1}" | FileCheck %s --check-prefix=GPU
// RUN: tessera-opt %s --split-input-file --tessera-grad --tessera-gpu-graph-pipeline="schedule={attention=1 attention-backward=0}" | FileCheck %s --check-prefix=GPU-COMPOSED
// The VJP of an attention chain is one tessera_graph.attention_grad (its
// values: ir/unittests/GradCheckTest.cpp, Attention*); graph-to-schedule
// makes it the blockwise flash_attention_grad, or writes it out.

// A causal chain (scale, then a select of -inf by iota compare): the
// backward reads Q, K^T, V, the forward's O and dO, and no probabilities.
// CHECK-LABEL: func.func @f_grad(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x64x16xf32>, %[[KT:[a-z0-9]+]]: tensor<2x16x64xf32>, %[[V:[a-z0-9]+]]: tensor<2x64x8xf32>
// CHECK: %[[P:.*]] = tessera_graph.softmax
// CHECK: %[[O:.*]] = tessera_graph.matmul %[[P]], %[[V]]
// CHECK: %[[DQ:.*]], %[[DKT:.*]], %[[DV:.*]] = tessera_graph.attention_grad %[[Q]], %[[KT]], %[[V]], %[[O]], %{{.*}} scale = 2.500000e-01 causal
// CHECK-NOT: tessera_graph.softmax
// CHECK: return %{{.*}}, %[[DQ]], %[[DKT]], %[[DV]]
// The forward becomes flash_attention, the backward flash_attention_grad:
// no 64 x 64 tensor anywhere.
// SCHED-LABEL: func.func @f_grad(
// SCHED-NOT: 64x64
// SCHED: %[[O:.*]] = tessera_schedule.flash_attention {{.*}} causal
// SCHED-NOT: 64x64
// SCHED: tessera_schedule.flash_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %{{.*}} scale = 2.500000e-01 block_q = 64 block_kv = 64 causal
// SCHED-NOT: 64x64
// SCHED: return
// attn-shared-kib: the blocks halved (the query block first, while it is
// the larger) until the kernels' shared memory fits 8 KiB. The backward
// (K^T, V, P and dS blocks): 64 x 64 (38.9 KiB) -> 32 x 64 -> 32 x 32 ->
// 16 x 32 (7.2 KiB); the forward (K^T, V, S blocks, 3 floats per row):
// 64 x 64 (23.3 KiB) -> 32 x 64 -> 32 x 32 (7.5 KiB).
// FIT-LABEL: func.func @f_grad(
// FIT: tessera_schedule.flash_attention {{.*}} block_q = 32 block_kv = 32 causal
// FIT: tessera_schedule.flash_attention_grad {{.*}} block_q = 16 block_kv = 32 causal
// Written out: the probabilities recomputed whole (iota, compare, select,
// softmax), dV = P^T dO, dP = dO V^T, the row sum of dO * O.
// COMPOSED-LABEL: func.func @f_grad(
// COMPOSED-NOT: flash_attention_grad
// COMPOSED: tessera_graph.iota dim = 1 : tensor<64x64xi32>
// COMPOSED: tessera_graph.compare le
// COMPOSED: tessera_graph.softmax {{.*}} : tensor<2x64x64xf32>
// COMPOSED: tessera_graph.reduce sum
// COMPOSED: return
// The GPU pipeline with attention=1: three kernels (AttentionGradKernel.h):
// the softmax statistics into a [2 x 64 x 2] scratch buffer, dQ per query
// block, dK^T and dV per key block, the results straight into the plan's
// outputs; with attention-backward=0, the composed form. The GPU schedule's
// backward blocks are 64 x 32 (one query block and two key blocks per
// head), its kernels groups of 64 lanes with register blocks (LaneTile.h).
// GPU-LABEL: func.func @f_grad(
// GPU: %[[ST:.*]] = memref.alloc() {tessera.buffer = "intermediate", tessera.bytes = 1024 : i64} : memref<256xf32>
// GPU-NEXT: call @f_grad_k{{[0-9]+}}_attention_stats(%arg0, %arg1, %{{.*}}, %{{.*}}, %[[ST]]) {tessera.grid = array<i64: 2, 1, 1>}
// GPU-NEXT: call @f_grad_k{{[0-9]+}}_attention_dq(%arg0, %arg1, %arg2, %{{.*}}, %[[ST]], %arg4) {tessera.grid = array<i64: 2, 1, 1>}
// GPU-NEXT: call @f_grad_k{{[0-9]+}}_attention_dkv(%arg0, %arg1, %arg2, %{{.*}}, %[[ST]], %arg5, %arg6) {tessera.grid = array<i64: 4, 1, 1>}
// GPU: return
// GPU: func.func @f_grad_k{{[0-9]+}}_attention_dkv({{.*}}tessera_tile.group_size = array<i64: 64>
// The K^T block (16 x 32), the V block (32 x 8), P and dS (64 x 32 each).
// GPU-DAG: tessera_tile.shared_alloc : memref<512xf32, 3>
// GPU-DAG: tessera_tile.shared_alloc : memref<256xf32, 3>
// GPU-DAG: tessera_tile.shared_alloc : memref<2048xf32, 3>
// GPU-COMPOSED-LABEL: func.func @f_grad(
// GPU-COMPOSED-NOT: attention_stats
// GPU-COMPOSED: return
func.func private @f(%q: tensor<2x64x16xf32>, %kt: tensor<2x16x64xf32>, %v: tensor<2x64x8xf32>) -> tensor<1x1x1xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x64x16xf32>, tensor<2x16x64xf32> -> tensor<2x64x64xf32>
  %c = arith.constant dense<0.25> : tensor<2x64x64xf32>
  %s1 = tessera_graph.mul %s0, %c : tensor<2x64x64xf32>, tensor<2x64x64xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<64x64xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<64x64xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<64x64xi32>, tensor<64x64xi32> -> tensor<64x64xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s2 = tessera_graph.select %keep, %s1, %ninf : tensor<64x64xi1>, tensor<2x64x64xf32>, tensor<f32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<2x64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x64x64xf32>, tensor<2x64x8xf32> -> tensor<2x64x8xf32>
  %l = tessera_graph.reduce sum %o dims = [0, 1, 2] order = pairwise : tensor<2x64x8xf32> -> tensor<1x1x1xf32>
  return %l : tensor<1x1x1xf32>
}
func.func private @f_grad(tensor<2x64x16xf32>, tensor<2x16x64xf32>, tensor<2x64x8xf32>)
    -> (tensor<1x1x1xf32>, tensor<2x64x16xf32>, tensor<2x16x64xf32>, tensor<2x64x8xf32>)
    attributes {tessera.grad_of = @f, tessera.wrt = [0, 1, 2]}

// -----

// The probabilities are also returned: not an attention chain of the
// blockwise form; each op's rule applies (a softmax VJP, two matmul VJPs).
// CHECK-LABEL: func.func @g_grad(
// CHECK-NOT: attention_grad
// CHECK: return
func.func private @g(%q: tensor<8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>) -> (tensor<1x1xf32>, tensor<8x8xf32>) {
  %s = tessera_graph.matmul %q, %kt : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<8x8xf32>
  %o = tessera_graph.matmul %p, %v : tensor<8x8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %l = tessera_graph.reduce sum %o dims = [0, 1] order = pairwise : tensor<8x4xf32> -> tensor<1x1xf32>
  return %l, %p : tensor<1x1xf32>, tensor<8x8xf32>
}
func.func private @g_grad(tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x4xf32>)
    -> (tensor<1x1xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<8x4xf32>)
    attributes {tessera.grad_of = @g, tessera.wrt = [0, 1, 2]}
