// shuffle_xor(out, in, sg, p): out[i] = in[i] of the lane a subgroup shuffle
// (xor with mask p) reads, the subgroup being the device's (sg is
// its size, which the test passes; a lane outside the subgroup reads its
// own value).  Groups of @L@ lanes.
func.func @shuffle_xor(%out: memref<?xi32>, %in: memref<?xi32>, %sg: i32, %p: i32)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %base = arith.muli %t, %lanes : index
  %i = arith.addi %base, %lane : index
  %v = memref.load %in[%i] : memref<?xi32>
  %offset = arith.index_cast %p : i32 to index
  %r = tessera_tile.shuffle xor %v, %offset : i32
  memref.store %r, %out[%i] : memref<?xi32>
  return
}
