// An i16 kernel with an i16 scalar: y = x * k, wrapping at 16 bits.  The
// host side (generated inputs, --scalar, results, --output) handled only
// i8, i32 and i64: i16 values read and wrote as 0, so a correct result
// failed the check and a --scalar became 0.
func.func @int16_scale(%k: i16, %x: memref<256xi16>, %y: memref<256xi16>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 4>} {
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %c64 = arith.constant 64 : index
  %base = arith.muli %g, %c64 : index
  %i = arith.addi %base, %l : index
  %v = memref.load %x[%i] : memref<256xi16>
  %w = arith.muli %v, %k : i16
  memref.store %w, %y[%i] : memref<256xi16>
  return
}
