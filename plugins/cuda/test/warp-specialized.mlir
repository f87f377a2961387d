// The sm_90a GEMM is warp-specialized by default (cuda's schedule:
// sm_90a:warp-specialize=1): warpgroup 0 is the producer, whose lane 0
// issues each slice's TMA copies once the consumers have released the
// stage (a second mbarrier per stage, "empty", one arrival per consumer
// warp: 256 lanes / 32 = 8); the two consumer warpgroups wait for the
// stage ("full"), multiply with wgmma and release it once the next
// slice's multiply is issued (one wgmma group in flight). The producer gives
// registers back (setmaxnreg.dec 40) and the consumers take them (.inc
// 232) from the 168 each of the 384 lanes has at launch (.maxntid 384).
// 8 slices over 4 stages: each stage is refilled once, after an acquire.
// RUN: tessera-compile %s --target cuda:sm_90a --emit ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// The tile loads of a warp-specialized kernel need TMA: with tma=false the
// compile fails naming the op and both ways out.
// RUN: not tessera-compile %s --target cuda:sm_90a --compile-option tma=false --emit ptx -o %t.cp.ptx 2>&1 | FileCheck %s --check-prefix=NOTMA
// Other targets say the same (vulkan stages tile loads lane by lane):
// RUN: not tessera-compile %s --target vulkan --schedule "mma=wgmma warp-specialize=1" -o %t.spv 2>&1 | FileCheck %s --check-prefix=NOTMA
// and warp-specialize applies to wgmma tiles only:
// RUN: tessera-opt %s --tessera-graph-to-schedule="mma=sync warp-specialize=1" | FileCheck %s --check-prefix=SYNC

// CHECK: .maxntid 384, 1, 1
// CHECK-COUNT-4: mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 1;
// CHECK-COUNT-4: mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 8;
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: bar.sync 0;
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.arrive.shared::cta.b64 state, [%r{{[0-9]+}}];
// CHECK: mbarrier.try_wait.parity.shared::cta.b64 done, [%r{{[0-9]+}}], %r{{[0-9]+}};
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: mbarrier.try_wait.parity.shared::cta.b64 done, [%r{{[0-9]+}}], %r{{[0-9]+}};
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// Each multiply stays in flight until the next is issued (wait_group 1),
// then the previous slice's stage is released; the last one is awaited
// after the loop:
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
// CHECK: bar.warp.sync -1;
// CHECK: mbarrier.arrive.shared::cta.b64 state, [%r{{[0-9]+}}];
// CHECK: wgmma.wait_group.sync.aligned 0;
// After the barrier that publishes the mbarriers, no lane waits for all:
// CHECK-NOT: bar.sync
// NOTMA: error: 'tessera_tile.tile_load_{{async|acquire}}' op belongs to a warp-specialized pipeline, which needs a tensor-copy engine (cuda sm_90a with TMA); this target stages tile loads lane by lane: schedule the matmul with warp-specialize=0 (on cuda sm_90a, or keep the compile option tma=true)
// SYNC: mma = "sync"
// SYNC-NOT: warp_specialize

func.func @gemm(%a: tensor<256x512xbf16>, %b: tensor<512x256xbf16>) -> tensor<256x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<256x512xbf16>, tensor<512x256xbf16> -> tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}
