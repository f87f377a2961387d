// fill_u32(x, value, n): x[i] = value for i < n.
func.func @fill_u32(%x: memref<?xi32>, %value: i32, %n: i64)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %base = arith.muli %t, %lanes : index
  %i = arith.addi %base, %lane : index
  %i64 = arith.index_cast %i : index to i64
  %inside = arith.cmpi ult, %i64, %n : i64
  scf.if %inside {
    memref.store %value, %x[%i] : memref<?xi32>
  }
  return
}
