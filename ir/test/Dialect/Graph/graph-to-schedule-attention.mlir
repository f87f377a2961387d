// RUN: tessera-opt %s --tessera-graph-to-schedule | FileCheck %s
// RUN: tessera-opt %s --tessera-graph-to-schedule="attn-block-q=32 attn-block-kv=128" | FileCheck %s --check-prefix=OPT
// RUN: tessera-opt %s --tessera-graph-to-schedule="attn-block-q=512 attn-block-kv=1024" | FileCheck %s --check-prefix=CLAMP

// The example's form: K^T is a convert_layout of a col_major tensor, whose
// storage is K row-major: the op takes that tensor and the copy goes away.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<256x64xf32>, %[[KT:.*]]: tensor<64x256xf32, #tessera_graph.layout<col_major>>, %[[V:.*]]: tensor<256x64xf32>)
// CHECK-NOT: tessera_graph.convert_layout
// CHECK-NOT: arith.constant
// CHECK: %[[O:.*]] = tessera_schedule.flash_attention %[[Q]], %[[KT]], %[[V]] scale = 1.250000e-01 block_q = 64 block_kv = 64
// CHECK-NOT: = tessera_graph.
// CHECK-NOT: tessera_schedule.tile
// CHECK: return %[[O]]
// OPT-LABEL: func.func @attention
// OPT: tessera_schedule.flash_attention {{.*}} block_q = 32 block_kv = 128
// CLAMP-LABEL: func.func @attention
// CLAMP: tessera_schedule.flash_attention {{.*}} block_q = 256 block_kv = 256
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

// A row-major K^T, a division by sqrt(d), 200 keys and queries: not a
// multiple of the blocks, which stay as requested (the last one is partial)
// and are clamped to the sequence.
// CHECK-LABEL: func.func @divided
// CHECK: tessera_schedule.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 block_q = 64 block_kv = 64 : tensor<200x64xf32>, tensor<64x200xf32>, tensor<200x32xf32> -> tensor<200x32xf32>
// OPT-LABEL: func.func @divided
// OPT: block_q = 32 block_kv = 128
func.func @divided(%q: tensor<200x64xf32>, %kt: tensor<64x200xf32>, %v: tensor<200x32xf32>) -> tensor<200x32xf32> {
  %d = arith.constant dense<8.0> : tensor<200x200xf32>
  %s0 = tessera_graph.matmul %q, %kt : tensor<200x64xf32>, tensor<64x200xf32> -> tensor<200x200xf32>
  %s = tessera_graph.div %s0, %d : tensor<200x200xf32>, tensor<200x200xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<200x200xf32>
  %o = tessera_graph.matmul %p, %v : tensor<200x200xf32>, tensor<200x32xf32> -> tensor<200x32xf32>
  return %o : tensor<200x32xf32>
}

// No scale, cross attention (128 queries, 512 keys).
// CHECK-LABEL: func.func @unscaled
// CHECK: tessera_schedule.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.000000e+00 block_q = 64 block_kv = 64 : tensor<128x32xf32>, tensor<32x512xf32>, tensor<512x32xf32> -> tensor<128x32xf32>
// OPT-LABEL: func.func @unscaled
// OPT: block_q = 32 block_kv = 128
func.func @unscaled(%q: tensor<128x32xf32>, %kt: tensor<32x512xf32>, %v: tensor<512x32xf32>) -> tensor<128x32xf32> {
  %s = tessera_graph.matmul %q, %kt : tensor<128x32xf32>, tensor<32x512xf32> -> tensor<128x512xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<128x512xf32>
  %o = tessera_graph.matmul %p, %v : tensor<128x512xf32>, tensor<512x32xf32> -> tensor<128x32xf32>
  return %o : tensor<128x32xf32>
}

// The scale on the left of the mul (a same-shape splat).
// CHECK-LABEL: func.func @scale_lhs
// CHECK-NOT: arith.constant
// CHECK: tessera_schedule.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale = 5.000000e-01 block_q = 64 block_kv = 64
// CHECK-NOT: = tessera_graph.
// CHECK: return
func.func @scale_lhs(%q: tensor<64x32xf32>, %kt: tensor<32x64xf32>, %v: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %c = arith.constant dense<0.5> : tensor<64x64xf32>
  %s0 = tessera_graph.matmul %q, %kt : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  %s = tessera_graph.mul %c, %s0 : tensor<64x64xf32>, tensor<64x64xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<64x64xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
  return %o : tensor<64x32xf32>
}

// Negative: the probabilities are also returned (two uses), so the score
// matrix is needed and today's lowering stays: two tiles and a softmax.
// CHECK-LABEL: func.func @two_uses
// CHECK-NOT: tessera_schedule.flash_attention
// CHECK: tessera_schedule.tile
// CHECK: tessera_graph.softmax
// CHECK: tessera_schedule.tile
// CHECK-NOT: tessera_schedule.flash_attention
// CHECK: return
func.func @two_uses(%q: tensor<64x32xf32>, %kt: tensor<32x64xf32>, %v: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x64xf32>) {
  %s = tessera_graph.matmul %q, %kt : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<64x64xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
  return %o, %p : tensor<64x32xf32>, tensor<64x64xf32>
}

// Negative: the scale is a tensor argument, not a splat constant.
// CHECK-LABEL: func.func @tensor_scale
// CHECK-NOT: tessera_schedule.flash_attention
// CHECK: tessera_graph.softmax
func.func @tensor_scale(%q: tensor<64x32xf32>, %kt: tensor<32x64xf32>, %v: tensor<64x32xf32>, %c: tensor<64xf32>) -> tensor<64x32xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  %s = tessera_graph.mul %s0, %c : tensor<64x64xf32>, tensor<64xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<64x64xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
  return %o : tensor<64x32xf32>
}

// Negative: softmax over the queries (dim 0) is not attention.
// CHECK-LABEL: func.func @column_softmax
// CHECK-NOT: tessera_schedule.flash_attention
// CHECK: tessera_graph.softmax %{{.*}} dim = 0
func.func @column_softmax(%q: tensor<64x32xf32>, %kt: tensor<32x64xf32>, %v: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %s = tessera_graph.matmul %q, %kt : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  %p = tessera_graph.softmax %s dim = 0 : tensor<64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<64x64xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
  return %o : tensor<64x32xf32>
}

// Heads and a causal mask as the transformer block writes it: the mask's
// iota arithmetic is evaluated at compile time, found causal, and goes away
// with the scores.
// CHECK-LABEL: func.func @causal_heads
// CHECK-NOT: tessera_graph.iota
// CHECK: tessera_schedule.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 block_q = 64 block_kv = 64 causal : tensor<4x128x32xf32>, tensor<4x32x128xf32>, tensor<4x128x32xf32> -> tensor<4x128x32xf32>
// CHECK-NOT: = tessera_graph.
// CHECK-NOT: arith.constant
// CHECK: return
func.func @causal_heads(%q: tensor<4x128x32xf32>, %kt: tensor<4x32x128xf32>, %v: tensor<4x128x32xf32>) -> tensor<4x128x32xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<4x128x32xf32>, tensor<4x32x128xf32> -> tensor<4x128x128xf32>
  %scale = arith.constant dense<0.125> : tensor<4x128x128xf32>
  %s1 = tessera_graph.mul %s0, %scale : tensor<4x128x128xf32>, tensor<4x128x128xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<128x128xf32>
  %ki = tessera_graph.iota dim = 1 : tensor<128x128xf32>
  %one = arith.constant dense<1.0> : tensor<128x128xf32>
  %big = arith.constant dense<-1.0e9> : tensor<128x128xf32>
  %d = tessera_graph.sub %ki, %qi : tensor<128x128xf32>, tensor<128x128xf32>
  %above = tessera_graph.relu %d : tensor<128x128xf32>
  %m = tessera_graph.min %above, %one : tensor<128x128xf32>, tensor<128x128xf32>
  %mask = tessera_graph.mul %m, %big : tensor<128x128xf32>, tensor<128x128xf32>
  %s2 = tessera_graph.add %s1, %mask : tensor<4x128x128xf32>, tensor<128x128xf32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<4x128x128xf32>
  %o = tessera_graph.matmul %p, %v : tensor<4x128x128xf32>, tensor<4x128x32xf32> -> tensor<4x128x32xf32>
  return %o : tensor<4x128x32xf32>
}

// The select form, -inf where the key is past the query, the scale after
// the mask; an iota that something else also reads stays.
// CHECK-LABEL: func.func @causal_select
// CHECK: %[[KI:.*]] = tessera_graph.iota dim = 1 : tensor<64x64xi32>
// CHECK-NOT: tessera_graph.compare
// CHECK: tessera_schedule.flash_attention {{.*}} scale = 5.000000e-01 block_q = 64 block_kv = 64 causal : tensor<64x16xf32>
// CHECK: return %{{.*}}, %[[KI]]
func.func @causal_select(%q: tensor<64x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>) -> (tensor<64x16xf32>, tensor<64x64xi32>) {
  %s0 = tessera_graph.matmul %q, %kt : tensor<64x16xf32>, tensor<16x64xf32> -> tensor<64x64xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<64x64xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<64x64xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<64x64xi32>, tensor<64x64xi32> -> tensor<64x64xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s1 = tessera_graph.select %keep, %s0, %ninf : tensor<64x64xi1>, tensor<64x64xf32>, tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %s2 = tessera_graph.mul %half, %s1 : tensor<f32>, tensor<64x64xf32>
  %p = tessera_graph.softmax %s2 dim = 1 : tensor<64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<64x64xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  return %o, %ki : tensor<64x16xf32>, tensor<64x64xi32>
}

// Negative masks, each left unfused: the diagonal masked too (key >= query);
// a masked value of -100 (not small enough to be taken as -inf); a mask read
// from an argument; a -1e9 mask scaled by -1 after it (masked keys would
// win).
// CHECK-LABEL: func.func @not_causal
// CHECK-NOT: tessera_schedule.flash_attention
// CHECK: return
func.func @not_causal(%q: tensor<64x16xf32>, %kt: tensor<16x64xf32>, %v: tensor<64x16xf32>, %arg: tensor<64x64xf32>)
    -> (tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>) {
  %qi = tessera_graph.iota dim = 0 : tensor<64x64xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<64x64xi32>
  %ge = tessera_graph.compare ge %ki, %qi : tensor<64x64xi32>, tensor<64x64xi32> -> tensor<64x64xi1>
  %gt = tessera_graph.compare gt %ki, %qi : tensor<64x64xi32>, tensor<64x64xi32> -> tensor<64x64xi1>
  %big = arith.constant dense<-1.0e9> : tensor<f32>
  %small = arith.constant dense<-100.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %m_diag = tessera_graph.select %ge, %big, %zero : tensor<64x64xi1>, tensor<f32>, tensor<f32> -> tensor<64x64xf32>
  %m_small = tessera_graph.select %gt, %small, %zero : tensor<64x64xi1>, tensor<f32>, tensor<f32> -> tensor<64x64xf32>
  %m_big = tessera_graph.select %gt, %big, %zero : tensor<64x64xi1>, tensor<f32>, tensor<f32> -> tensor<64x64xf32>
  %neg = arith.constant dense<-1.0> : tensor<f32>

  %a0 = tessera_graph.matmul %q, %kt : tensor<64x16xf32>, tensor<16x64xf32> -> tensor<64x64xf32>
  %a1 = tessera_graph.add %a0, %m_diag : tensor<64x64xf32>, tensor<64x64xf32>
  %a2 = tessera_graph.softmax %a1 dim = 1 : tensor<64x64xf32>
  %a = tessera_graph.matmul %a2, %v : tensor<64x64xf32>, tensor<64x16xf32> -> tensor<64x16xf32>

  %b0 = tessera_graph.matmul %q, %kt : tensor<64x16xf32>, tensor<16x64xf32> -> tensor<64x64xf32>
  %b1 = tessera_graph.add %b0, %m_small : tensor<64x64xf32>, tensor<64x64xf32>
  %b2 = tessera_graph.softmax %b1 dim = 1 : tensor<64x64xf32>
  %b = tessera_graph.matmul %b2, %v : tensor<64x64xf32>, tensor<64x16xf32> -> tensor<64x16xf32>

  %c0 = tessera_graph.matmul %q, %kt : tensor<64x16xf32>, tensor<16x64xf32> -> tensor<64x64xf32>
  %c1 = tessera_graph.add %c0, %arg : tensor<64x64xf32>, tensor<64x64xf32>
  %c2 = tessera_graph.softmax %c1 dim = 1 : tensor<64x64xf32>
  %c = tessera_graph.matmul %c2, %v : tensor<64x64xf32>, tensor<64x16xf32> -> tensor<64x16xf32>

  %d0 = tessera_graph.matmul %q, %kt : tensor<64x16xf32>, tensor<16x64xf32> -> tensor<64x64xf32>
  %d1 = tessera_graph.add %d0, %m_big : tensor<64x64xf32>, tensor<64x64xf32>
  %d2 = tessera_graph.mul %d1, %neg : tensor<64x64xf32>, tensor<f32>
  %d3 = tessera_graph.softmax %d2 dim = 1 : tensor<64x64xf32>
  %d = tessera_graph.matmul %d3, %v : tensor<64x64xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  return %a, %b, %c, %d : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>
}
