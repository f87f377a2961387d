// A user's own Tile IR kernel is checked like the examples: the Tile IR
// interpreter runs it (no reference is looked up by name), exit 0.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// --no-check runs it unchecked on purpose and exits 0.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1 --no-check; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=UNCHECKED
// A compiled program whose source is gone cannot be checked: it runs, says
// so and exits 4 (an unchecked result is not a pass).
// RUN: cp %s %t.mlir
// RUN: tessera-compile %t.mlir --target cpu -o %t.tsp
// RUN: rm %t.mlir
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1; echo "exit code $?"' %t.tsp 2>&1 | FileCheck %s --check-prefix=NOSOURCE

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
// CHECK: verify: max abs error 0 {{.*}}: PASS
// CHECK: exit code 0
// UNCHECKED-NOT: verify:
// UNCHECKED: time:
// UNCHECKED: exit code 0
// NOSOURCE: verify: no source of twice ({{.*}}.mlir) to run the reference on (cannot open: {{.*}}): the result was NOT checked
// NOSOURCE: exit code 4
