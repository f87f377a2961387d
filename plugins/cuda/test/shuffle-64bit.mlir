// Shuffles and subgroup reductions of 64-bit values move two 32-bit words
// with the same source lane (shfl.sync takes 32 bits); f16 moves its 16
// bits in one. The program passes ptxas; its values on cpu and vulkan
// against the Tile IR interpreter: ir/test/tessera-run/shuffle-64bit.mlir.
// RUN: tessera-compile %s --target cuda:sm_80 --emit ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: tessera-compile %s --target cuda:sm_80 -o %t.tsp
// xor 1 of an f64: its two words.
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// down 3 of an i64:
// CHECK-COUNT-2: shfl.sync.down.b32 {{.*}}, 3, 31, -1;
// the i64 reduction's butterfly over the 32-lane warp, two words a step:
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// up 1 of an f16: one word.
// CHECK: shfl.sync.up.b32 {{.*}}, 1, 0, -1;
// CHECK-NOT: shfl.sync
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
