// The toolkit's ptxas accepts the sm_90a warpgroup GEMM (TMA copies,
// mbarriers, wgmma) with no spills and no static shared memory (its four
// 32 KiB stages are dynamic), without serializing the wgmma steps (ptxas
// warns when it must): the default warp-specialized form (a producer
// warpgroup and setmaxnreg: warp-specialized.mlir), the one where every
// warpgroup issues copies (warp-specialize=0), and that one staged by
// cp.async (tma=false).
// REQUIRES: ptxas
// RUN: tessera-compile %s --target cuda:sm_90a --emit ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s
// RUN: tessera-compile %s --target cuda:sm_90a --schedule warp-specialize=0 --emit ptx -o %t.pipe.ptx
// RUN: %ptxas -arch=sm_90a -v %t.pipe.ptx -o %t.pipe.cubin 2>&1 | FileCheck %s
// RUN: tessera-compile %s --target cuda:sm_90a --schedule warp-specialize=0 --compile-option tma=false --emit ptx -o %t.cp.ptx
// RUN: %ptxas -arch=sm_90a -v %t.cp.ptx -o %t.cp.cubin 2>&1 | FileCheck %s

// --emit cubin writes the kernel's cubin alone and lists, on stderr, the
// tensor maps a launch appends (which the executable's archive carries):
// RUN: tessera-compile %s --target cuda:sm_90a --emit cubin -o %t.single.cubin 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: kernel 'gemm_k0_gemm' takes 2 TMA tensor maps (128 bytes each) after its parameters
// EMIT-NEXT: arg=0 element_bytes=2 rows=512 ld=512 box_rows=128 box_cols=64 swizzle=128
// EMIT-NEXT: arg=1 element_bytes=2 rows=512 ld=512 box_rows=64 box_cols=64 swizzle=128
// EMIT: wrote {{.*}}: cubin of 1 kernel for cuda:sm_90a

// CHECK-NOT: warning
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: bytes smem
// CHECK-NOT: warning

func.func @gemm(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xf32>
  %y = tessera_graph.cast %c : tensor<512x512xf32> -> tensor<512x512xbf16>
  return %y : tensor<512x512xbf16>
}
