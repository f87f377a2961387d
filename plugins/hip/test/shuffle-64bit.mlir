// Shuffles and subgroup reductions of 64-bit values move two 32-bit words
// with the same source lane (ds_bpermute_b32); f16 moves its 16 bits in one.
// The code object links (ld.lld); the values on cpu and vulkan against the
// Tile IR interpreter: ir/test/tessera-run/shuffle-64bit.mlir.
// RUN: tessera-compile %s --target hip:gfx90a --emit asm -o %t.s
// RUN: FileCheck %s < %t.s
// RUN: tessera-compile %s --target hip:gfx90a -o %t.tsp
// f64 xor (2), i64 down (2), the i64 reduction over the 64-lane wavefront
// (6 steps of 2), f16 up (1):
// CHECK-COUNT-17: ds_bpermute_b32
// CHECK-NOT: ds_bpermute_b32
func.func @shuffle64(%x: memref<64xf64>, %y: memref<64xi64>, %h: memref<64xf16>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<64xf64>
  %s = tessera_tile.shuffle xor %v, %c1 : f64
  memref.store %s, %x[%l] : memref<64xf64>
  %w = memref.load %y[%l] : memref<64xi64>
  %t = tessera_tile.shuffle down %w, %c3 : i64
  %r = tessera_tile.subgroup_reduce add %t : i64
  %u = arith.addi %t, %r : i64
  memref.store %u, %y[%l] : memref<64xi64>
  %a = memref.load %h[%l] : memref<64xf16>
  %b = tessera_tile.shuffle up %a, %c1 : f16
  memref.store %b, %h[%l] : memref<64xf16>
  return
}
