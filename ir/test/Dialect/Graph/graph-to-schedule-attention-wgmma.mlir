// bf16 / f16 attention on warpgroups: with mma=wgmma graph-to-schedule
// makes flash_attention {mma = "wgmma"} with the warpgroup kernel's
// blocks (the largest of 128 x 128, 128 x 64, 64 x 128, 64 x 64 that its
// shapes take), whatever `attention` (about f32) says.
// RUN: tessera-opt %s --tessera-graph-to-schedule="mma=wgmma attention=0" | FileCheck %s
// wgmma-attention=0 keeps the matmuls and the softmax.
// RUN: tessera-opt %s --tessera-graph-to-schedule="mma=wgmma wgmma-attention=0" | FileCheck %s --check-prefix=OFF
// Without warpgroups a 16-bit attention is never fused (the lanes' kernel
// is f32).
// RUN: tessera-opt %s --tessera-graph-to-schedule="mma=sync attention=1" | FileCheck %s --check-prefix=OFF

// The decoder's causal mask (iota, -1e9 above the diagonal) in bf16 is
// recognized (its constants rounded as bf16 holds them).
// CHECK-LABEL: func.func @causal
// CHECK: tessera_schedule.flash_attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 block_q = 128 block_kv = 128 causal {mma = "wgmma"} : tensor<2x256x64xbf16>
// CHECK-NOT: tessera_graph.softmax
// OFF-LABEL: func.func @causal
// OFF-NOT: flash_attention
// OFF: tessera_graph.softmax
func.func @causal(%q: tensor<2x256x64xbf16>, %kt: tensor<2x64x256xbf16>, %v: tensor<2x256x64xbf16>) -> tensor<2x256x64xbf16> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x256x64xbf16>, tensor<2x64x256xbf16> -> tensor<2x256x256xbf16>
  %scale = arith.constant dense<0.125> : tensor<2x256x256xbf16>
  %s1 = tessera_graph.mul %s0, %scale : tensor<2x256x256xbf16>, tensor<2x256x256xbf16>
  %qi = tessera_graph.iota dim = 0 : tensor<256x256xbf16>
  %ki = tessera_graph.iota dim = 1 : tensor<256x256xbf16>
  %one = arith.constant dense<1.0> : tensor<256x256xbf16>
  %big = arith.constant dense<-1.0e9> : tensor<256x256xbf16>
  %d = tessera_graph.sub %ki, %qi : tensor<256x256xbf16>, tensor<256x256xbf16>
  %above = tessera_graph.relu %d : tensor<256x256xbf16>
  %m = tessera_graph.min %above, %one : tensor<256x256xbf16>, tensor<256x256xbf16>
  %mask = tessera_graph.mul %m, %big : tensor<256x256xbf16>, tensor<256x256xbf16>
  %s2 = tessera_graph.add %s1, %mask : tensor<2x256x256xbf16>, tensor<256x256xbf16>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<2x256x256xbf16>
  %o = tessera_graph.matmul %p, %v : tensor<2x256x256xbf16>, tensor<2x256x64xbf16> -> tensor<2x256x64xbf16>
  return %o : tensor<2x256x64xbf16>
}

// Heads of 192 queries: 128 does not divide them, so 64-row blocks; 96 keys
// (no batch): one 128-key block would exceed them, so 64.
// CHECK-LABEL: func.func @odd
// CHECK: flash_attention {{.*}} block_q = 64 block_kv = 128 {mma = "wgmma"} : tensor<2x192x64xf16>
// CHECK: flash_attention {{.*}} block_q = 128 block_kv = 64 {mma = "wgmma"} : tensor<200x128xf16>
func.func @odd(%q: tensor<2x192x64xf16>, %kt: tensor<2x64x256xf16>, %v: tensor<2x256x64xf16>,
               %q2: tensor<200x128xf16>, %kt2: tensor<128x96xf16>, %v2: tensor<96x128xf16>)
    -> (tensor<2x192x64xf16>, tensor<200x128xf16>) {
  %s = tessera_graph.matmul %q, %kt : tensor<2x192x64xf16>, tensor<2x64x256xf16> -> tensor<2x192x256xf16>
  %p = tessera_graph.softmax %s dim = 2 : tensor<2x192x256xf16>
  %o = tessera_graph.matmul %p, %v : tensor<2x192x256xf16>, tensor<2x256x64xf16> -> tensor<2x192x64xf16>
  %s2 = tessera_graph.matmul %q2, %kt2 : tensor<200x128xf16>, tensor<128x96xf16> -> tensor<200x96xf16>
  %p2 = tessera_graph.softmax %s2 dim = 1 : tensor<200x96xf16>
  %o2 = tessera_graph.matmul %p2, %v2 : tensor<200x96xf16>, tensor<96x128xf16> -> tensor<200x128xf16>
  return %o, %o2 : tensor<2x192x64xf16>, tensor<200x128xf16>
}

// Shapes the kernel does not take stay unfused (their matmuls still reach
// the warpgroups): a head dim of 80, 60 keys (fewer than a 64-key block).
// CHECK-LABEL: func.func @misfits
// CHECK-NOT: flash_attention
// CHECK: return
func.func @misfits(%q: tensor<128x80xbf16>, %kt: tensor<80x128xbf16>, %v: tensor<128x64xbf16>,
                   %q2: tensor<128x64xbf16>, %kt2: tensor<64x60xbf16>, %v2: tensor<60x64xbf16>)
    -> (tensor<128x64xbf16>, tensor<128x64xbf16>) {
  %s = tessera_graph.matmul %q, %kt : tensor<128x80xbf16>, tensor<80x128xbf16> -> tensor<128x128xbf16>
  %p = tessera_graph.softmax %s dim = 1 : tensor<128x128xbf16>
  %o = tessera_graph.matmul %p, %v : tensor<128x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xbf16>
  %s2 = tessera_graph.matmul %q2, %kt2 : tensor<128x64xbf16>, tensor<64x60xbf16> -> tensor<128x60xbf16>
  %p2 = tessera_graph.softmax %s2 dim = 1 : tensor<128x60xbf16>
  %o2 = tessera_graph.matmul %p2, %v2 : tensor<128x60xbf16>, tensor<60x64xbf16> -> tensor<128x64xbf16>
  return %o, %o2 : tensor<128x64xbf16>, tensor<128x64xbf16>
}
