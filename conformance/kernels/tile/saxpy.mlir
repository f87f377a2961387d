// saxpy(y, x, a, n): y[i] = a * x[i] + y[i] for i < n, element i of lane l
// of group t being t * @L@ + l (the suite's 1-D convention).  Buffers of any
// length (memref<?xf32>): one compile serves every n.
func.func @saxpy(%y: memref<?xf32>, %x: memref<?xf32>, %a: f32, %n: i64)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %base = arith.muli %t, %lanes : index
  %i = arith.addi %base, %lane : index
  %i64 = arith.index_cast %i : index to i64
  %inside = arith.cmpi ult, %i64, %n : i64
  scf.if %inside {
    %xv = memref.load %x[%i] : memref<?xf32>
    %yv = memref.load %y[%i] : memref<?xf32>
    %r = tessera_tile.math fma(%a, %xv, %yv) : f32
    memref.store %r, %y[%i] : memref<?xf32>
  }
  return
}
