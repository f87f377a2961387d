// What the hip compiler cannot lower gets a diagnostic naming the op.
// RUN: not tessera-compile %s --target hip:gfx90a --emit asm -o %t.s 2>&1 | FileCheck %s
// CHECK: invalid.mlir:[[@LINE+6]]:{{[0-9]+}}: error: 'tessera_tile.shuffle' op the ROCDL lowering shuffles scalars of 8 to 64 bits (f16, bf16, f32, f64, i8 to i64, index), not 'i128'
func.func @shuffle_i128(%x: memref<64xi128>)
    attributes {tessera_tile.group_size = array<i64: 64>} {
  %c1 = arith.constant 1 : index
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<64xi128>
  %s = tessera_tile.shuffle xor %v, %c1 : i128
  memref.store %s, %x[%l] : memref<64xi128>
  return
}
