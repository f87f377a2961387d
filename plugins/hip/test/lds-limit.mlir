// A kernel that asks for more than a workgroup's 64 KiB of LDS (here the
// warpgroup attention kernel of mma=wgmma, 88 KiB at 64 x 128 blocks) is
// refused by the Tile IR verifier at the shared_alloc that crosses the
// limit, with the program's location, not by the AMDGPU back end.
// RUN: not tessera-compile %s --target hip:gfx90a --schedule mma=wgmma -o %t.tsp 2>&1 | FileCheck %s
// CHECK: lds-limit.mlir:[[@LINE+5]]:{{[0-9]+}}: error: 'tessera_tile.shared_alloc' op kernel needs 73728 bytes of shared memory, more than the limit of 65536 bytes
// CHECK-NOT: local memory
func.func @attention(%q: tensor<64x64xbf16>, %kt: tensor<64x128xbf16>, %v: tensor<128x64xbf16>) -> tensor<64x64xbf16> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xbf16>
  %p = tessera_graph.softmax %s0 dim = 1 : tensor<64x128xbf16>
  %o = tessera_graph.matmul %p, %v : tensor<64x128xbf16>, tensor<128x64xbf16> -> tensor<64x64xbf16>
  return %o : tensor<64x64xbf16>
}
