// A Tile IR kernel tessera-run has no reference for: it runs, says the
// result was not checked and exits 4 (an unchecked result is not a pass);
// --no-verify runs it unchecked on purpose and exits 0.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1 --no-verify; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=UNCHECKED

func.func @twice(%x: memref<256xf32>) attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 4>} {
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %c64 = arith.constant 64 : index
  %base = arith.muli %g, %c64 : index
  %i = arith.addi %base, %l : index
  %v = memref.load %x[%i] : memref<256xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %x[%i] : memref<256xf32>
  return
}
// CHECK: verify: no reference for kernel twice: the result was NOT checked
// CHECK: exit code 4
// UNCHECKED-NOT: verify:
// UNCHECKED: time:
// UNCHECKED: exit code 0
