// --schedule mma=sync on a GPU backend without matrix units (vulkan): the
// bf16 GEMM stages 16-bit slices with cp_async and multiplies them with
// tessera_tile.subgroup_mma, computed lane by lane; the result matches the
// reference, exit 0.
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function g --schedule "mma=sync tile-m=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// A batched 256x64 product gets a 128x64 tile (fitTile), 29.7 KiB:
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function pv --schedule "mma=sync" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: max abs error {{.*}}: PASS
// CHECK: exit code 0
// With tile-m=128, two 32-deep stages need 37 KiB of shared memory, more
// than lavapipe's 32 KiB: UNSUPPORTED, naming both.
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function g --schedule "mma=sync" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=SHARED
// SHARED: UNSUPPORTED{{.*}}needs 37.0 KiB of shared (workgroup) memory per group; device '{{.*}}' has 32.0 KiB
// --schedule mma=wgmma: warpgroups of 128 lanes multiply 128-byte swizzled
// slices with tessera_tile.warpgroup_mma, computed lane by lane here (the
// swizzled staging, the op's layout and the epilogue are the ones sm_90a
// runs); 64x64 tiles fit lavapipe's 32 KiB:
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function small --schedule "mma=wgmma tile-m=64 tile-n=64 stages=2" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// Edges: a 100x200 x 200x136 product (no tile divides M, N or K) reads
// zeros past the matrices and stores only inside C; so does a batch of
// three 72x128 x 128x72:
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function ragged --schedule "mma=wgmma tile-m=64 tile-n=64 stages=2" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function ragged_batch --schedule "mma=wgmma tile-m=64 tile-n=64 stages=2" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// --schedule mma=mfma: wavefronts of 64 lanes multiply the staged slices
// with tessera_tile.wavefront_mma (MFMA's layout, 64x64 per wavefront),
// computed lane by lane here; f16, bf16, f32 (v_mfma_f32_32x32x2f32 on
// CDNA) and i8 accumulated in i32 (v_mfma_i32_32x32x8i8; exact), a batch,
// a bias epilogue, and shapes no tile divides (the lanes' GEMM):
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function f32 --schedule "mma=mfma tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function i8 --schedule "mma=mfma tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=EXACT
// and i8 with mma=sync (mma.sync...s32.s8.s8.s32 on cuda sm_80+):
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function i8 --schedule "mma=sync tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=EXACT
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function g --schedule "mma=mfma tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function small --schedule "mma=mfma tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function pv --schedule "mma=mfma" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function ragged --schedule "mma=mfma tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// --schedule mma=wmma: waves of 32 lanes multiply in 16x16 tiles with
// tessera_tile.wave32_mma (WMMA's layout, 64x32 per wave), lane by lane
// here:
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function g --schedule "mma=wmma tile-m=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function small --schedule "mma=wmma tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function pv --schedule "mma=wmma" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// and i8 with mma=wmma (v_wmma_i32_16x16x16_iu8 on RDNA3):
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function i8 --schedule "mma=wmma tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=EXACT
// A pipeline depth outside 2..8 is a bad schedule, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function small --schedule "mma=wgmma stages=9" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES: stages=9 is not a pipeline depth; use 2..8 (or 0: the kernel's choice)
// STAGES: exit code 1
// Four 16 KiB stages (the default) need 64 KiB; lavapipe has 32 KiB:
// UNSUPPORTED, naming both.
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function small --schedule "mma=wgmma tile-m=64 tile-n=64" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=FOUR
// FOUR: UNSUPPORTED{{.*}}needs 64.0 KiB of shared (workgroup) memory per group; device '{{.*}}' has 32.0 KiB
// An unknown matmul unit is a bad schedule, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --function g --schedule "mma=tcgen05" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: mma=tcgen05 is not a matmul unit; use mma=none (lanes' FMAs), mma=sync {{.*}}, mma=wgmma {{.*}}, mma=mfma {{.*}} or mma=wmma
// BAD-NOT: see current operation
// BAD: exit code 1

func.func @g(%a: tensor<256x128xbf16>, %b: tensor<128x256xbf16>, %bias: tensor<256xf32>) -> tensor<256x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<256x128xbf16>, tensor<128x256xbf16> -> tensor<256x256xf32>
  %y = tessera_graph.add %c, %bias : tensor<256x256xf32>, tensor<256xf32>
  return %y : tensor<256x256xf32>
}

// EXACT: verify: max abs error 0 {{.*}}: PASS
// EXACT: exit code 0
func.func @i8(%a: tensor<2x128x96xi8>, %b: tensor<2x96x128xi8>) -> tensor<2x128x128xi32> {
  %c = tessera_graph.matmul %a, %b : tensor<2x128x96xi8>, tensor<2x96x128xi8> -> tensor<2x128x128xi32>
  return %c : tensor<2x128x128xi32>
}

func.func @f32(%a: tensor<2x128x96xf32>, %b: tensor<2x96x64xf32>) -> tensor<2x128x64xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<2x128x96xf32>, tensor<2x96x64xf32> -> tensor<2x128x64xf32>
  return %c : tensor<2x128x64xf32>
}

func.func @pv(%p: tensor<2x256x128xbf16>, %v: tensor<2x128x64xbf16>) -> tensor<2x256x64xf32> {
  %o = tessera_graph.matmul %p, %v : tensor<2x256x128xbf16>, tensor<2x128x64xbf16> -> tensor<2x256x64xf32>
  return %o : tensor<2x256x64xf32>
}

func.func @small(%a: tensor<2x128x128xf16>, %b: tensor<2x128x128xf16>) -> tensor<2x128x128xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<2x128x128xf16>, tensor<2x128x128xf16> -> tensor<2x128x128xf32>
  %r = tessera_graph.relu %c : tensor<2x128x128xf32>
  return %r : tensor<2x128x128xf32>
}

func.func @ragged(%a: tensor<100x200xbf16>, %b: tensor<200x136xbf16>, %bias: tensor<136xf32>) -> tensor<100x136xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<100x200xbf16>, tensor<200x136xbf16> -> tensor<100x136xf32>
  %y = tessera_graph.add %c, %bias : tensor<100x136xf32>, tensor<136xf32>
  return %y : tensor<100x136xf32>
}

func.func @ragged_batch(%a: tensor<3x72x128xf16>, %b: tensor<3x128x72xf16>) -> tensor<3x72x72xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<3x72x128xf16>, tensor<3x128x72xf16> -> tensor<3x72x72xf32>
  return %c : tensor<3x72x72xf32>
}
