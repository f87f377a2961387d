// What the hip compiler cannot lower gets a diagnostic naming the op.
// RUN: not tessera-compile %s --target hip:gfx90a --emit asm -o %t.s 2>&1 | FileCheck %s
// CHECK: invalid.mlir:[[@LINE+6]]:{{[0-9]+}}: error: 'tessera_tile.shuffle' op the ROCDL lowering shuffles 32-bit values (f32, i8/i16/i32, index), not 'f64'
func.func @shuffle_f64(%x: memref<64xf64>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %c1 = arith.constant 1 : index
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<64xf64>
  %s = tessera_tile.shuffle xor %v, %c1 : f64
  memref.store %s, %x[%l] : memref<64xf64>
  return
}
