// The toolkit's ptxas accepts the sm_90a warpgroup GEMM with no spills,
// the shared memory of two stages (2 x (64 + 128) x 64 16-bit values =
// 49152 bytes, the static limit) and no serialized wgmma (ptxas warns when
// it must wait for a wgmma before reusing its registers).
// REQUIRES: ptxas
// RUN: tessera-compile %s --target cuda:sm_90a --emit ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s

// CHECK-NOT: warning
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK: 49152 bytes smem
// CHECK-NOT: warning

func.func @gemm(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xf32>
  %y = tessera_graph.cast %c : tensor<512x512xf32> -> tensor<512x512xbf16>
  return %y : tensor<512x512xbf16>
}
