// See tile_shuffle.mlir: 12 lanes per group, i32 values.
func.func @narrow(%x: memref<48xi32>, %down: memref<48xi32>, %up: memref<48xi32>)
    attributes {tessera_tile.group_size = array<i64: 12>, tessera_tile.grid = array<i64: 4>} {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %g = tessera_tile.group_id 0 : index
  %n = tessera_tile.lane_count 0 : index
  %l = tessera_tile.lane_id 0 : index
  %b = arith.muli %g, %n : index
  %i = arith.addi %b, %l : index
  %v = memref.load %x[%i] : memref<48xi32>
  %d = tessera_tile.shuffle down %v, %c1 : i32
  %u = tessera_tile.shuffle up %v, %c3 : i32
  memref.store %d, %down[%i] : memref<48xi32>
  memref.store %u, %up[%i] : memref<48xi32>
  return
}
