// Attention on Hopper's warpgroups (sm_90a): a bf16 causal attention over
// heads is one kernel (flash_attention {mma = "wgmma"},
// docs/gpu-lowering.md "Attention on warpgroups"): the query block and the
// key/value blocks come by TMA into mbarrier stages, S = Q K^T and O += P V
// are wgmma, the softmax runs in wgmma's register layout (quad shuffles,
// one ex2 per probability), and the probabilities the lanes store for
// P V reach the async proxy through fence.proxy.async before the barrier.
// ptxas takes it with no spills, no static shared memory (the 112 KiB are
// dynamic) and no warnings (wgmma steps not serialized).
// REQUIRES: ptxas
// RUN: tessera-compile %s --target cuda:sm_90a --emit ptx -o %t.ptx 2>&1 | FileCheck %s --check-prefix=MAPS
// RUN: FileCheck %s --input-file=%t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// sm_80 has no warpgroups: the attention stays matmuls (mma.sync) and a
// softmax.
// RUN: tessera-compile %s --target cuda:sm_80 --emit ptx -o %t.80.ptx
// RUN: FileCheck %s --input-file=%t.80.ptx --check-prefix=SM80
// wgmma-attention=0 keeps them unfused on sm_90a too (for measurements).
// RUN: tessera-compile %s --target cuda:sm_90a --schedule wgmma-attention=0 --emit ptx -o %t.off.ptx
// RUN: FileCheck %s --input-file=%t.off.ptx --check-prefix=SM80
// The benchmark's checked size (bench/programs/attention_bf16.mlir: a
// select of -inf by compare(key <= query) on i32 iotas) is one kernel too,
// compiled to a cubin by ptxas.
// RUN: tessera-compile %S/../../../bench/programs/attention_bf16.mlir --function attention_bf16_512 --target cuda:sm_90a -o %t.bench.tsp 2>&1 | FileCheck %s --check-prefix=BENCH
// BENCH: attention_bf16_512 for cuda:sm_90a, 1 kernel, 1 step

// Q (128-row boxes), K^T and V (64 x 64 boxes): three tensor maps.
// MAPS: kernel 'attention_k0_attention' takes 3 TMA tensor maps (128 bytes each) after its parameters
// MAPS-NEXT: arg=0 element_bytes=2 rows=512 ld=64 box_rows=128 box_cols=64 swizzle=128
// MAPS-NEXT: arg=1 element_bytes=2 rows=256 ld=256 box_rows=64 box_cols=64 swizzle=128
// MAPS-NEXT: arg=2 element_bytes=2 rows=1024 ld=64 box_rows=64 box_cols=64 swizzle=128

// CHECK: .target sm_90a
// CHECK-LABEL: .entry attention_k0_attention(
// CHECK: mbarrier.init.shared::cta.b64
// The query block (one 128 x 64 box), then key block 0 (two 64-column
// boxes of K^T, two 64-row boxes of V).
// CHECK: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{{.*}}], 16384;
// CHECK-NEXT: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-COUNT-4: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{{.*}}], 8192;
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// S = Q K^T: n = 128 keys, a 64-deep head in four k16 steps.
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: wgmma.wait_group.sync.aligned 0;
// Row maxima and sums over the quads; one ex2 per probability, rounded
// to bf16 and stored where P V's A operand is read.
// CHECK: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// CHECK: ex2.approx.f32
// CHECK: cvt.rn.bf16.f32
// CHECK: st.shared.u16
// P is handed to the async proxy, then O += P V (dv = 64; 128 keys: two
// 64-deep slices of four steps).
// CHECK: fence.proxy.async.shared::cta;
// CHECK: bar.sync 0;
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// The next key block: its stage waited for, the barrier (every warpgroup
// is done with the stage the copies refill), four copies.
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: bar.sync 0;
// CHECK-COUNT-4: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{{.*}}], 8192;
// CHECK: ret;

// PTXAS-NOT: warning
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: bytes smem
// PTXAS-NOT: warning

// SM80-NOT: _k{{[0-9]+}}_attention
// SM80: .entry attention_k0_gemm
// SM80: .entry attention_k1_softmax
// SM80: .entry attention_k2_gemm
// SM80-NOT: _k{{[0-9]+}}_attention

func.func @attention(%q: tensor<4x128x64xbf16>, %kt: tensor<4x64x256xbf16>, %v: tensor<4x256x64xbf16>) -> tensor<4x128x64xbf16> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<4x128x64xbf16>, tensor<4x64x256xbf16> -> tensor<4x128x256xbf16>
  %scale = arith.constant dense<0.125> : tensor<4x128x256xbf16>
  %s = tessera_graph.mul %s0, %scale : tensor<4x128x256xbf16>, tensor<4x128x256xbf16>
  %p = tessera_graph.softmax %s dim = 2 : tensor<4x128x256xbf16>
  %o = tessera_graph.matmul %p, %v : tensor<4x128x256xbf16>, tensor<4x256x64xbf16> -> tensor<4x128x64xbf16>
  return %o : tensor<4x128x64xbf16>
}
