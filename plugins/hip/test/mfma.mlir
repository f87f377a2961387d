// bf16 / f16 matmuls on CDNA's matrix cores (hip's schedule has mma=mfma
// for gfx908, gfx90a and gfx940): each tessera_tile.wavefront_mma of the
// 64x64 block of a wavefront is four v_mfma_f32_32x32x8 per 8-deep step,
// accumulating in AGPRs, with the operands read from LDS.
// RUN: tessera-compile %s --function bf16 --target hip:gfx90a --emit asm -o %t.bf16.s
// RUN: FileCheck %s --check-prefix=GFX90A < %t.bf16.s
// GFX90A-LABEL: bf16_k0_gemm:
// GFX90A-COUNT-16: v_mfma_f32_32x32x8bf16_1k a[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], a[{{[0-9]+}}:{{[0-9]+}}]
// GFX90A: s_cbranch
// GFX90A: .agpr_count: 64
// GFX90A-NOT: .private_segment_fixed_size: {{[1-9]}}
// GFX90A: .vgpr_spill_count: 0
// f16 on gfx90a, the same instruction family:
// RUN: tessera-compile %s --function f16 --target hip:gfx90a --emit asm -o %t.f16.s
// RUN: FileCheck %s --check-prefix=F16 < %t.f16.s
// F16-COUNT-16: v_mfma_f32_32x32x8f16
// f32 matmuls too (full f32 products: v_mfma_f32_32x32x2f32, four per
// 8-deep step; 16-deep slices, 37376 bytes of LDS for 128x128):
// RUN: tessera-compile %s --function f32 --target hip:gfx90a --emit asm -o %t.f32.s
// RUN: FileCheck %s --check-prefix=F32 < %t.f32.s
// F32-COUNT-32: v_mfma_f32_32x32x2f32 a[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, v{{[0-9]+}}, a[{{[0-9]+}}:{{[0-9]+}}]
// F32: .agpr_count: 64
// F32: .group_segment_fixed_size: 37376
// F32-NOT: .private_segment_fixed_size: {{[1-9]}}
// F32: .vgpr_spill_count: 0
// and i8 ones, accumulated in i32 (exact; wavefront_mma is 16 deep for
// i8): two v_mfma_i32_32x32x8i8 per 32 x 32 tile and op (four i8 per lane
// in a VGPR) on gfx908 and gfx90a, one v_mfma_i32_32x32x16_i8 on gfx940
// (eight i8 per lane in a VGPR pair): 16 and 8 per 32-deep slice:
// RUN: tessera-compile %s --function i8 --target hip:gfx90a --emit asm -o %t.i8.s
// RUN: FileCheck %s --check-prefix=I8 < %t.i8.s
// I8-COUNT-16: v_mfma_i32_32x32x8i8 a[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, v{{[0-9]+}}, a[{{[0-9]+}}:{{[0-9]+}}]
// I8: .agpr_count: 64
// I8-NOT: .private_segment_fixed_size: {{[1-9]}}
// RUN: tessera-compile %s --function i8 --target hip:gfx940 --emit asm -o %t.i8.gfx940.s
// RUN: FileCheck %s --check-prefix=I8GFX940 < %t.i8.gfx940.s
// I8GFX940-NOT: v_mul_i32_i24
// I8GFX940-COUNT-8: v_mfma_i32_32x32x16_i8 a[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], a[{{[0-9]+}}:{{[0-9]+}}]
// I8GFX940-NOT: v_mul_i32_i24
// I8GFX940-NOT: .private_segment_fixed_size: {{[1-9]}}
// gfx908 has bf16 matrix cores with two values per lane: two k=4
// instructions per step; gfx940 spells the bf16 one without "_1k":
// RUN: tessera-compile %s --function bf16 --target hip:gfx908 --emit asm -o %t.gfx908.s
// RUN: FileCheck %s --check-prefix=GFX908 < %t.gfx908.s
// GFX908-COUNT-32: v_mfma_f32_32x32x4bf16
// RUN: tessera-compile %s --function bf16 --target hip:gfx940 --emit asm -o %t.gfx940.s
// RUN: FileCheck %s --check-prefix=GFX940 < %t.gfx940.s
// GFX940-COUNT-16: v_mfma_f32_32x32x8_bf16
// RDNA has no MFMA: RDNA2 (gfx1030) keeps the lanes' FMA GEMM, and asking
// for mma=mfma on RDNA3 (gfx1100, whose own schedule has WMMA: wmma.mlir)
// computes the op lane by lane:
// RUN: tessera-compile %s --function bf16 --target hip:gfx1030 --emit asm -o %t.rdna.s
// RUN: FileCheck %s --check-prefix=RDNA < %t.rdna.s
// RUN: tessera-compile %s --function bf16 --target hip:gfx1100 --schedule "mma=mfma" --emit asm -o %t.rdna-mfma.s
// RUN: FileCheck %s --check-prefix=RDNA < %t.rdna-mfma.s
// RDNA-NOT: v_{{w?}}mfma
// RDNA: v_fma
// RDNA-NOT: v_{{w?}}mfma
// The code object links, and its notes agree:
// RUN: tessera-compile %s --function bf16 --target hip:gfx90a --emit hsaco -o %t.hsaco
// RUN: llvm-readelf --notes %t.hsaco | FileCheck %s --check-prefix=NOTES
// NOTES: .agpr_count: 64
// NOTES: .name: bf16_k0_gemm

func.func @bf16(%a: tensor<256x128xbf16>, %b: tensor<128x256xbf16>) -> tensor<256x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<256x128xbf16>, tensor<128x256xbf16> -> tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

func.func @f32(%a: tensor<256x128xf32>, %b: tensor<128x256xf32>) -> tensor<256x256xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<256x128xf32>, tensor<128x256xf32> -> tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

func.func @i8(%a: tensor<2x128x96xi8>, %b: tensor<2x96x128xi8>) -> tensor<2x128x128xi32> {
  %c = tessera_graph.matmul %a, %b : tensor<2x128x96xi8>, tensor<2x96x128xi8> -> tensor<2x128x128xi32>
  return %c : tensor<2x128x128xi32>
}

func.func @f16(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>) -> tensor<128x128xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  %r = tessera_graph.relu %c : tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
