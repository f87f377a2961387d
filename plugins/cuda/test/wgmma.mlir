// bf16 / f16 matmuls on Hopper's warpgroup matrix units: on sm_90a the
// cuda schedule has mma=wgmma, and each tessera_tile.warpgroup_mma is one
// block of wgmma.mma_async (k = 64: four m64n128k16 steps) reading 128-byte
// swizzled, 1024-byte aligned stages through matrix descriptors; the
// stages are filled by cp.async and handed to the async proxy by a fence.
// RUN: tessera-compile %s --function bf16 --target cuda:sm_90a --emit ptx -o %t.bf16.ptx
// RUN: FileCheck %s --check-prefix=BF16 < %t.bf16.ptx
// RUN: FileCheck %s --check-prefix=BARRIER < %t.bf16.ptx
// RUN: tessera-compile %s --function f16 --target cuda:sm_90a --emit ptx -o %t.f16.ptx
// RUN: FileCheck %s --check-prefix=F16 < %t.f16.ptx
// sm_90 (no 'a') and sm_80 keep mma.sync: wgmma is an sm_90a feature.
// RUN: tessera-compile %s --function bf16 --target cuda:sm_90 --emit ptx -o %t.sm90.ptx
// RUN: FileCheck %s --check-prefix=SYNC < %t.sm90.ptx
// Asked for on sm_80, the warpgroup kernel computes each lane's elements
// with FMAs (the same kernel, runnable everywhere):
// RUN: tessera-compile %s --function bf16 --target cuda:sm_80 --schedule "mma=wgmma" --emit ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=LANES < %t.sm80.ptx
// A shape no warpgroup tile divides (100 rows) keeps the lanes' FMA GEMM:
// RUN: tessera-compile %s --function ragged --target cuda:sm_90a --emit ptx -o %t.ragged.ptx
// RUN: FileCheck %s --check-prefix=RAGGED < %t.ragged.ptx

// Descriptors: bit 62 (128-byte swizzle), stride byte offset 1024 (64 <<
// 32); A's leading offset 16 (1 << 16): 0x4000004000010000; B's 8192 (its
// 64-column blocks, 512 << 16): 0x4000004002000000.
// BF16: .version 8.0
// BF16: .target sm_90a
// BF16: .shared .align 1024 .b8 {{.*}}[16384];
// BF16: .shared .align 1024 .b8 {{.*}}[32768];
// BF16: cp.async.cg.shared.global
// BF16: or.b64 {{.*}}, 4611686293305360384;
// BF16: or.b64 {{.*}}, 4611686293338849280;
// BF16: wgmma.fence.sync.aligned;
// BF16-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 1;
// BF16-NEXT: wgmma.commit_group.sync.aligned;
// BF16-NEXT: wgmma.wait_group.sync.aligned 0;
// BARRIER: cp.async.wait_group 0;
// BARRIER-NEXT: // begin inline asm
// BARRIER-NEXT: fence.proxy.async.shared::cta;
// BARRIER-NEXT: // end inline asm
// BARRIER-NEXT: bar.sync 0;
// F16: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// SYNC-NOT: wgmma
// SYNC: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// LANES-NOT: wgmma
// LANES-NOT: mma.sync
// LANES: fma.rn.f32
// RAGGED-NOT: wgmma
// RAGGED: fma.rn.f32

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

func.func @ragged(%a: tensor<100x128xbf16>, %b: tensor<128x256xbf16>) -> tensor<100x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<100x128xbf16>, tensor<128x256xbf16> -> tensor<100x256xf32>
  return %c : tensor<100x256xf32>
}
