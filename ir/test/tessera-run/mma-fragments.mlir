// A Tile IR mma whose fragments cannot multiply, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0"; echo "exit code $?"' %s 2>&1 | FileCheck %s

func.func @k(%x: memref<256xf32>) attributes {tessera_tile.group_size = array<i64: 32>, tessera_tile.grid = array<i64: 1>} {
  %a = arith.constant dense<1.0> : vector<16x8xf16>
  %b = arith.constant dense<1.0> : vector<16x16xf16>
  %c = arith.constant dense<0.0> : vector<16x16xf32>
  %d = tessera_tile.mma %a, %b, %c : vector<16x8xf16>, vector<16x16xf16>, vector<16x16xf32>
  return
}
// CHECK: mma-fragments.mlir:8:8: error: 'tessera_tile.mma' op fragment shapes are incompatible: a is 16x8, b is 16x16 (K differs)
// CHECK: exit code 1
