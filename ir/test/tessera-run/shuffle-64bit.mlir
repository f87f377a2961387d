// 64-bit and f16 shuffles and an i64 subgroup reduction give the Tile IR
// interpreter's values on cpu and vulkan (cuda and hip split them into
// 32-bit words: plugins/{cuda,hip}/test/shuffle-64bit.mlir).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=vulkan tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// CHECK: verify: f64 results: {{.*}}: PASS
// CHECK: verify: i64 results: {{.*}}: PASS
// CHECK: verify: f16 results: {{.*}}: PASS
// CHECK: exit code 0
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
