// bf16 / f16 matmuls on tensor cores (cuda's schedule has mma=sync):
// from sm_80 each tessera_tile.subgroup_mma is ldmatrix + mma.sync, the
// slices staged by cp.async (ptxas: mma-sync-ptxas.mlir).
// RUN: tessera-compile %s --function bf16 --target cuda:sm_80 --emit ptx -o %t.bf16.ptx
// RUN: FileCheck %s --check-prefix=BF16 < %t.bf16.ptx
// On sm_90a the cuda schedule has mma=wgmma (wgmma.mlir); mma=sync still
// asks for this kernel there:
// RUN: tessera-compile %s --function f16 --target cuda:sm_90a --schedule "mma=sync" --emit ptx -o %t.f16.ptx
// RUN: FileCheck %s --check-prefix=F16 < %t.f16.ptx
// Before sm_80 the same kernel computes each lane's elements with FMAs:
// RUN: tessera-compile %s --function bf16 --target cuda:sm_75 --emit ptx -o %t.sm75.ptx
// RUN: FileCheck %s --check-prefix=SM75 < %t.sm75.ptx
// A 256x64 product (attention's P V) gets a 128x64 tile, still on tensor
// cores:
// RUN: tessera-compile %s --function pv --target cuda:sm_80 --emit ptx -o %t.pv.ptx
// RUN: FileCheck %s --check-prefix=PV < %t.pv.ptx
// A shape no tile of 64 x 32 or more divides keeps the lanes' FMA GEMM:
// RUN: tessera-compile %s --function ragged --target cuda:sm_80 --emit ptx -o %t.ragged.ptx
// RUN: FileCheck %s --check-prefix=RAGGED < %t.ragged.ptx

// BF16: .target sm_80
// BF16: cp.async.cg.shared.global
// BF16: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// BF16: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// BF16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SM75-NOT: mma.sync
// SM75-NOT: ldmatrix
// SM75: fma.rn.f32
// PV: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// RAGGED-NOT: mma.sync
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

func.func @pv(%p: tensor<12x256x256xbf16>, %v: tensor<12x256x64xbf16>) -> tensor<12x256x64xf32> {
  %o = tessera_graph.matmul %p, %v : tensor<12x256x256xbf16>, tensor<12x256x64xbf16> -> tensor<12x256x64xf32>
  return %o : tensor<12x256x64xf32>
}

func.func @ragged(%a: tensor<100x128xbf16>, %b: tensor<128x256xbf16>) -> tensor<100x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<100x128xbf16>, tensor<128x256xbf16> -> tensor<100x256xf32>
  return %c : tensor<100x256xf32>
}
