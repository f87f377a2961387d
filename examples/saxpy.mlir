// saxpy in Tile IR: y = a * x + y over 65536 floats.
//
// 64 tile groups of 128 lanes; each lane owns 8 consecutive elements (one
// vector<8xf32>). On the cpu the lanes of a group become one loop
// (tessera-tile-work-item-loops) that LLVM vectorizes further.
//
//   tessera-run examples/saxpy.mlir --scalar 2.5
func.func @saxpy(%a: f32, %x: memref<65536xf32>, %y: memref<65536xf32>)
    attributes {tessera_tile.group_size = array<i64: 128>, tessera_tile.grid = array<i64: 64>} {
  %c8 = arith.constant 8 : index
  %g = tessera_tile.group_id 0 : index
  %n = tessera_tile.lane_count 0 : index
  %l = tessera_tile.lane_id 0 : index
  %base = arith.muli %g, %n : index
  %lane = arith.addi %base, %l : index
  %i = arith.muli %lane, %c8 : index
  %xv = tessera_tile.load %x[%i] : memref<65536xf32>, vector<8xf32>
  %yv = tessera_tile.load %y[%i] : memref<65536xf32>, vector<8xf32>
  %av = vector.broadcast %a : f32 to vector<8xf32>
  %r = tessera_tile.math fma(%av, %xv, %yv) : vector<8xf32>
  tessera_tile.store %r, %y[%i] : vector<8xf32>, memref<65536xf32>
  return
}
