// bf16 / f16 matmuls on Hopper's warpgroup matrix units: on sm_90a the
// cuda schedule has mma=wgmma.  128x128 tiles (two warpgroups), K staged
// 64 deep in four stages of dynamic shared memory (128 KiB: above the 48
// KiB of static shared memory), each slice loaded by TMA copies (one box
// of A, one per 64 columns of B, through tensor maps the plugin encodes at
// launch, passed as 128-byte parameters after the kernel's own) that
// complete on the stage's mbarrier; each tessera_tile.warpgroup_mma is one
// block of wgmma.mma_async (k = 64: four m64n128k16 steps) reading the
// 128-byte swizzled stages through matrix descriptors.
// (The default on sm_90a is the warp-specialized form of this kernel,
// warp-specialized.mlir; warp-specialize=0 gives the one checked here,
// where every warpgroup waits, issues the next copies and multiplies.)
// RUN: tessera-compile %s --function bf16 --target cuda:sm_90a --schedule warp-specialize=0 --emit ptx -o %t.bf16.ptx
// RUN: FileCheck %s --check-prefix=BF16 < %t.bf16.ptx
// RUN: FileCheck %s --check-prefix=WAIT < %t.bf16.ptx
// RUN: tessera-compile %s --function f16 --target cuda:sm_90a --emit ptx -o %t.f16.ptx
// RUN: FileCheck %s --check-prefix=F16 < %t.f16.ptx
// The compile option tma=false stages the same slices with 16-byte
// cp.async copies per lane, handed to the async proxy by a fence:
// RUN: tessera-compile %s --function bf16 --target cuda:sm_90a --schedule warp-specialize=0 --compile-option tma=false --emit ptx -o %t.cp.ptx
// RUN: FileCheck %s --check-prefix=CPASYNC < %t.cp.ptx
// sm_90 (no 'a') and sm_80 keep mma.sync: wgmma is an sm_90a feature.
// RUN: tessera-compile %s --function bf16 --target cuda:sm_90 --emit ptx -o %t.sm90.ptx
// RUN: FileCheck %s --check-prefix=SYNC < %t.sm90.ptx
// Asked for on sm_80, the warpgroup kernel computes each lane's elements
// with FMAs and copies with cp.async (the same kernel, runnable
// everywhere):
// RUN: tessera-compile %s --function bf16 --target cuda:sm_80 --schedule "mma=wgmma" --emit ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=LANES < %t.sm80.ptx
// Edges: 100 rows and 200-deep K take a 64-row tile whose loads read zeros
// past the matrix (TMA) and whose stores are guarded; rows of 250 columns
// (500 bytes, not a multiple of 16: no TMA view) keep the lanes' FMA GEMM:
// RUN: tessera-compile %s --function ragged --target cuda:sm_90a --emit ptx -o %t.ragged.ptx
// RUN: FileCheck %s --check-prefix=RAGGED < %t.ragged.ptx
// RUN: tessera-compile %s --function unaligned --target cuda:sm_90a --emit ptx -o %t.unaligned.ptx
// RUN: FileCheck %s --check-prefix=UNALIGNED < %t.unaligned.ptx

// Descriptors: bit 62 (128-byte swizzle), stride byte offset 1024 (64 <<
// 32); A's leading offset 16 (1 << 16): 0x4000004000010000; B's 8192 (its
// 64-column blocks, 512 << 16): 0x4000004002000000.
// BF16: .version 8.0
// BF16: .target sm_90a
// BF16: .extern .shared .align 1024 .b8 __tessera_dynamic_shared[];
// BF16: .param .u64 bf16_k0_gemm_param_3,
// BF16-NEXT: .param .align 64 .b8 bf16_k0_gemm_param_4[128],
// BF16-NEXT: .param .align 64 .b8 bf16_k0_gemm_param_5[128]
// BF16-COUNT-4: mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 1;
// BF16: fence.mbarrier_init.release.cluster;
// BF16: bar.sync 0;
// BF16: mov.b64 tmap, bf16_k0_gemm_param_4;
// BF16-NEXT: cvta.param.u64 tmap, tmap;
// BF16-NEXT: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [[[BAR:%r[0-9]+]]], 16384;
// BF16-NEXT: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [tmap, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [[[BAR]]];
// BF16: mov.b64 tmap, bf16_k0_gemm_param_5;
// BF16: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [[[BAR]]], 8192;
// BF16: mbarrier.arrive.shared::cta.b64 state, [[[BAR]]];
// BF16: or.b64 {{.*}}, 4611686293305360384;
// BF16: or.b64 {{.*}}, 4611686293338849280;
// BF16: wgmma.fence.sync.aligned;
// BF16-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 1;
// BF16-NEXT: wgmma.commit_group.sync.aligned;
// BF16-NEXT: wgmma.wait_group.sync.aligned 0;
// BF16-NOT: cp.async.cg
// BF16-NOT: fence.proxy.async
// WAIT: mbarrier.try_wait.parity.shared::cta.b64 done, [%r{{[0-9]+}}], %r{{[0-9]+}};
// WAIT-NEXT: selp.b32
// F16: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CPASYNC-NOT: cp.async.bulk
// CPASYNC: cp.async.cg.shared.global
// CPASYNC: cp.async.wait_group 0;
// CPASYNC-NEXT: // begin inline asm
// CPASYNC-NEXT: fence.proxy.async.shared::cta;
// CPASYNC-NEXT: // end inline asm
// CPASYNC-NEXT: bar.sync 0;
// CPASYNC: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SYNC-NOT: wgmma
// SYNC: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// LANES-NOT: wgmma
// LANES-NOT: mma.sync
// LANES-NOT: cp.async.bulk
// LANES: cp.async.cg.shared.global
// LANES: fma.rn.f32
// RAGGED: cp.async.bulk.tensor.2d
// RAGGED: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// UNALIGNED-NOT: wgmma
// UNALIGNED: fma.rn.f32

func.func @bf16(%a: tensor<256x128xbf16>, %b: tensor<128x256xbf16>, %bias: tensor<256xf32>) -> tensor<256x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<256x128xbf16>, tensor<128x256xbf16> -> tensor<256x256xf32>
  %y = tessera_graph.add %c, %bias : tensor<256x256xf32>, tensor<256xf32>
  return %y : tensor<256x256xf32>
}

func.func @f16(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>) -> tensor<128x128xf16> {
  %c = tessera_graph.matmul %a, %b : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  %y = tessera_graph.cast %c : tensor<128x128xf32> -> tensor<128x128xf16>
  return %y : tensor<128x128xf16>
}

func.func @ragged(%a: tensor<100x200xbf16>, %b: tensor<200x256xbf16>) -> tensor<100x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<100x200xbf16>, tensor<200x256xbf16> -> tensor<100x256xf32>
  return %c : tensor<100x256xf32>
}

func.func @unaligned(%a: tensor<100x128xbf16>, %b: tensor<128x250xbf16>) -> tensor<100x250xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<100x128xbf16>, tensor<128x250xbf16> -> tensor<100x250xf32>
  return %c : tensor<100x250xf32>
}
