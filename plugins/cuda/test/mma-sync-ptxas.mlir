// The toolkit's ptxas accepts the tensor-core GEMM for sm_80 and sm_90a
// with no spills and the shared memory of two stages (2 x (128 x 40 +
// 32 x 136) 16-bit values = 37888 bytes).
// REQUIRES: ptxas
// RUN: tessera-compile %s --target cuda:sm_90a --schedule "mma=sync" --emit ptx -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s
// RUN: tessera-compile %s --target cuda:sm_80 --emit ptx -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s

// The i8 kernel (mma-sync-i8.mlir) too: no spills, 21504 bytes.
// RUN: tessera-compile %S/mma-sync-i8.mlir --target cuda:sm_80 --emit ptx -o %t.i8.ptx
// RUN: %ptxas -arch=sm_80 -v %t.i8.ptx -o %t.i8.cubin 2>&1 | FileCheck %s --check-prefix=I8
// RUN: tessera-compile %S/mma-sync-i8.mlir --target cuda:sm_90a --emit ptx -o %t.i8.90.ptx
// RUN: %ptxas -arch=sm_90a -v %t.i8.90.ptx -o %t.i8.90.cubin 2>&1 | FileCheck %s --check-prefix=I8
// I8: 0 bytes spill stores, 0 bytes spill loads
// I8: 21504 bytes smem

// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK: 37888 bytes smem

func.func @gemm(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xf32>
  %y = tessera_graph.cast %c : tensor<512x512xf32> -> tensor<512x512xbf16>
  return %y : tensor<512x512xbf16>
}
