// Tile IR relative shuffles, run by VulkanTileIr.Shuffles: each lane writes
// shuffle down by 1 and shuffle up by 3 of its value x[g*n + l].  `wide` has
// 64 lanes (full subgroups); `narrow` 12 (not a multiple of the subgroup
// size: its last subgroup is partial), where lanes whose source lies past
// the group's end must read their own value.
func.func @wide(%x: memref<256xf32>, %down: memref<256xf32>, %up: memref<256xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 4>} {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %g = tessera_tile.group_id 0 : index
  %n = tessera_tile.lane_count 0 : index
  %l = tessera_tile.lane_id 0 : index
  %b = arith.muli %g, %n : index
  %i = arith.addi %b, %l : index
  %v = memref.load %x[%i] : memref<256xf32>
  %d = tessera_tile.shuffle down %v, %c1 : f32
  %u = tessera_tile.shuffle up %v, %c3 : f32
  memref.store %d, %down[%i] : memref<256xf32>
  memref.store %u, %up[%i] : memref<256xf32>
  return
}
