// A bf16 result is rounded from f32 by tessera_tile.round_to_bf16 once per
// element stored: on sm_80 and later one cvt.rn.bf16.f32 (the epilogue of
// the sm_90a GEMM shrinks from ten integer instructions per element, and
// so does its compile time); before sm_80 the integer rounding of the
// other targets (ties to even: + 0x7fff + the low bit of the result).
// RUN: tessera-compile %s --target cuda:sm_90a --emit ptx -o %t.90.ptx
// RUN: FileCheck %s --check-prefix=CVT < %t.90.ptx
// RUN: tessera-compile %s --target cuda:sm_80 --emit ptx -o %t.80.ptx
// RUN: FileCheck %s --check-prefix=CVT < %t.80.ptx
// RUN: tessera-compile %s --target cuda:sm_75 --emit ptx -o %t.75.ptx
// RUN: FileCheck %s --check-prefix=INT < %t.75.ptx
// The Tile IR carries the op:
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s --check-prefix=TILE

// CVT: cvt.rn.bf16.f32 %rs{{[0-9]+}}, %f{{[0-9]+}};
// CVT-NOT: 32767
// INT-NOT: cvt.rn.bf16
// INT: 32767
// TILE: tessera_tile.round_to_bf16

func.func @scale(%x: tensor<1024xf32>) -> tensor<1024xbf16> {
  %c = arith.constant dense<0.5> : tensor<1024xf32>
  %y = tessera_graph.mul %x, %c : tensor<1024xf32>, tensor<1024xf32>
  %z = tessera_graph.cast %y : tensor<1024xf32> -> tensor<1024xbf16>
  return %z : tensor<1024xbf16>
}
