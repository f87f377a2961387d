// A user's Tile IR kernel that stores out of bounds: the interpreter runs
// first and the kernel is refused before the device runs it (on cpu it
// ran in tessera-run's own process and crashed it, or corrupted its heap
// when a group was larger than the buffer), exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: the Tile IR interpreter found k accessing memory out of bounds, so it was not run on cpu
// CHECK-SAME: index 100000000 out of bounds for dimension 0 of size 64
// CHECK: exit code 1
func.func @k(%x: memref<64xf32>) attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1>} {
  %l = tessera_tile.lane_id 0 : index
  %c = arith.constant 100000000 : index
  %j = arith.addi %l, %c : index
  %v = memref.load %x[%l] : memref<64xf32>
  memref.store %v, %x[%j] : memref<64xf32>
  return
}
