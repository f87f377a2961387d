// bf16 / f16 matmuls on RDNA3's WMMA (hip's schedule has mma=wmma for
// gfx1100): each tessera_tile.wave32_mma of the 64x32 block of a wave of
// 32 lanes is eight v_wmma_f32_16x16x16 per 16-deep step, the operands read
// from LDS, the intrinsic declared by the compiler (MLIR 16's ROCDL has no
// WMMA op).
// RUN: tessera-compile %s --function f16 --target hip:gfx1100 --emit asm -o %t.f16.s
// RUN: FileCheck %s --check-prefix=F16 < %t.f16.s
// F16-LABEL: f16_k0_gemm:
// F16-COUNT-16: v_wmma_f32_16x16x16_f16 v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}]
// F16: s_cbranch
// F16-NOT: .private_segment_fixed_size: {{[1-9]}}
// F16: .vgpr_spill_count: 0
// F16: .wavefront_size: 32
// RUN: tessera-compile %s --function bf16 --target hip:gfx1100 --emit asm -o %t.bf16.s
// RUN: FileCheck %s --check-prefix=BF16 < %t.bf16.s
// BF16-COUNT-16: v_wmma_f32_16x16x16_bf16
// i8 matmuls accumulate in i32 on the same waves: eight
// v_wmma_i32_16x16x16_iu8 per 16-deep step, both operands signed, no clamp
// (the sums wrap, as on every other target):
// RUN: tessera-compile %s --function i8 --target hip:gfx1100 --emit asm -o %t.i8.s
// RUN: FileCheck %s --check-prefix=I8 < %t.i8.s
// I8-LABEL: i8_k0_gemm:
// I8-COUNT-16: v_wmma_i32_16x16x16_iu8 v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}] neg_lo:[1,1,0]
// I8-NOT: .private_segment_fixed_size: {{[1-9]}}
// I8: .vgpr_spill_count: 0
// RDNA2 has no WMMA: mma=wmma there computes the op lane by lane.
// RUN: tessera-compile %s --function f16 --target hip:gfx1030 --schedule "mma=wmma" --emit asm -o %t.rdna2.s
// RUN: FileCheck %s --check-prefix=RDNA2 < %t.rdna2.s
// RDNA2-NOT: v_wmma
// RDNA2: v_fma
// and i8 ones with integer multiply-adds (i8 x i8 products fit 24 bits):
// RUN: tessera-compile %s --function i8 --target hip:gfx1030 --schedule "mma=wmma" --emit asm -o %t.rdna2.i8.s
// RUN: FileCheck %s --check-prefix=RDNA2I8 < %t.rdna2.i8.s
// RDNA2I8-NOT: v_wmma
// RDNA2I8: v_mul_i32_i24
// The code object links:
// RUN: tessera-compile %s --function f16 --target hip:gfx1100 --emit hsaco -o %t.hsaco
// RUN: llvm-readelf --notes %t.hsaco | FileCheck %s --check-prefix=NOTES
// NOTES: .name: f16_k0_gemm
// NOTES: .wavefront_size: 32

func.func @f16(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>) -> tensor<128x128xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  %r = tessera_graph.relu %c : tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

func.func @bf16(%a: tensor<256x128xbf16>, %b: tensor<128x256xbf16>) -> tensor<256x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<256x128xbf16>, tensor<128x256xbf16> -> tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

func.func @i8(%a: tensor<2x128x96xi8>, %b: tensor<2x96x128xi8>) -> tensor<2x128x128xi32> {
  %c = tessera_graph.matmul %a, %b : tensor<2x128x96xi8>, tensor<2x96x128xi8> -> tensor<2x128x128xi32>
  return %c : tensor<2x128x128xi32>
}
