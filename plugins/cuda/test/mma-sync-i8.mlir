// i8 x i8 -> i32 matmuls on tensor cores: the subgroup kernel (mma=sync)
// multiplies with mma.sync.m16n8k16.s32.s8.s8.s32 (exact): per lane a 32-bit
// shared load for each of A's two rows (k 4t..4t+3) and four bytes of B's
// column packed into one register. Slices are 32 deep, rows padded by 16
// bytes (two stages: 2 x (128 x 48 + 32 x 144) bytes = 21504). On sm_90a,
// whose schedule has mma=wgmma (16-bit floats only), i8 matmuls take this
// kernel too rather than the lanes' FMAs; before sm_80 each lane computes
// its own elements with integer multiply-adds.
// RUN: tessera-compile %s --target cuda:sm_80 --emit ptx -o %t.sm80.ptx
// RUN: FileCheck %s < %t.sm80.ptx
// RUN: tessera-compile %s --target cuda:sm_90a --emit ptx -o %t.sm90a.ptx
// RUN: FileCheck %s < %t.sm90a.ptx
// RUN: tessera-compile %s --target cuda:sm_75 --emit ptx -o %t.sm75.ptx
// RUN: FileCheck %s --check-prefix=LANES < %t.sm75.ptx

// CHECK: .shared .align 16 .b8
// CHECK: ld.shared.b32
// CHECK-COUNT-32: mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32
// CHECK-NOT: wgmma
// LANES-NOT: mma.sync
// LANES: mad.lo.s32

func.func @i8(%a: tensor<2x128x96xi8>, %b: tensor<2x96x128xi8>) -> tensor<2x128x128xi32> {
  %c = tessera_graph.matmul %a, %b : tensor<2x128x96xi8>, tensor<2x96x128xi8> -> tensor<2x128x128xi32>
  return %c : tensor<2x128x128xi32>
}
