// mul_add_u32(x, m, a, n): x[i] = x[i] * m + a (mod 2^32) for i < n.
func.func @mul_add_u32(%x: memref<?xi32>, %m: i32, %a: i32, %n: i64)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %base = arith.muli %t, %lanes : index
  %i = arith.addi %base, %lane : index
  %i64 = arith.index_cast %i : index to i64
  %inside = arith.cmpi ult, %i64, %n : i64
  scf.if %inside {
    %v = memref.load %x[%i] : memref<?xi32>
    %p = arith.muli %v, %m : i32
    %r = arith.addi %p, %a : i32
    memref.store %r, %x[%i] : memref<?xi32>
  }
  return
}
