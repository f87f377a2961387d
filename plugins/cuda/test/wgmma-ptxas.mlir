// The toolkit's ptxas accepts the sm_90a warpgroup GEMM (TMA copies,
// mbarriers, wgmma) with no spills and no static shared memory (its four
// 32 KiB stages are dynamic), without serializing the wgmma steps (ptxas
// warns when it must), and the same kernel staged by cp.async
// (tma=false).
// REQUIRES: ptxas
// RUN: tessera-compile %s --function gemm --target cuda:sm_90a --emit ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s
// RUN: tessera-compile %s --function gemm --target cuda:sm_90a --compile-option tma=false --emit ptx -o %t.cp.ptx
// RUN: %ptxas -arch=sm_90a -v %t.cp.ptx -o %t.cp.cubin 2>&1 | FileCheck %s
// At 4096 (a 64-step K loop) the accumulators' zero, kept by LLVM as one
// register copied into the others, made ptxas serialize every wgmma
// (C7511, with warpgroup.arrive / wait injected, C7519 / C7517): each
// accumulator now starts from its own mov (WgmmaAccumulators.h).
// RUN: tessera-compile %s --function gemm4096 --target cuda:sm_90a --emit ptx -o %t.4096.ptx
// RUN: FileCheck %s --check-prefix=INIT < %t.4096.ptx
// RUN: %ptxas -arch=sm_90a -v %t.4096.ptx -o %t.4096.cubin 2>&1 | FileCheck %s
// INIT-COUNT-64: mov.b32 %f{{[0-9]+}}, 0x00000000;
// INIT-NOT: mov.f32 %f{{[0-9]+}}, %f

// --emit cubin writes the kernel's cubin alone and lists, on stderr, the
// tensor maps a launch appends (which the executable's archive carries):
// RUN: tessera-compile %s --function gemm --target cuda:sm_90a --emit cubin -o %t.single.cubin 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: kernel 'gemm_k0_gemm' takes 2 TMA tensor maps (128 bytes each) after its parameters
// EMIT-NEXT: arg=0 element_bytes=2 rows=512 ld=512 box_rows=128 box_cols=64 swizzle=128
// EMIT-NEXT: arg=1 element_bytes=2 rows=512 ld=512 box_rows=64 box_cols=64 swizzle=128
// EMIT: wrote {{.*}}: cubin of 1 kernel for cuda:sm_90a

// CHECK-NOT: {{warning|Potential Performance Loss|injected}}
// CHECK: 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: bytes smem
// CHECK-NOT: {{warning|Potential Performance Loss|injected}}

func.func @gemm(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xf32>
  %y = tessera_graph.cast %c : tensor<512x512xf32> -> tensor<512x512xbf16>
  return %y : tensor<512x512xbf16>
}

func.func @gemm4096(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xf32>
  %y = tessera_graph.cast %c : tensor<4096x4096xf32> -> tensor<4096x4096xbf16>
  return %y : tensor<4096x4096xbf16>
}
