// A double-buffered pipeline: y = 2 * x, streamed through shared memory.
//
// A Tile IR kernel whose loop is a Schedule IR pipeline: each of the 8 tile
// groups (64 lanes) walks its 8 tiles of 256 floats. The prefetch has
// `double_buffer`, so tessera-schedule-to-tile turns it into cp_async into
// one of two shared buffers while the other is being used: tile k+1 is in
// flight (cp_async + commit) while tile k is computed (after
// cp_async_wait 1 and a barrier).
//
//   tessera-opt --tessera-schedule-to-tile examples/pipeline.mlir
//   tessera-run examples/pipeline.mlir
func.func @pipelined_scale(%x: memref<16384xf32>, %y: memref<16384xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 8>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %two = arith.constant dense<2.0> : vector<4xf32>
  %g = tessera_tile.group_id 0 : index
  %first = arith.muli %g, %c8 : index
  %l = tessera_tile.lane_id 0 : index
  %off = arith.muli %l, %c4 : index
  tessera_schedule.pipeline %k = %c0 to %c8 step %c1 stages = 2 {
    %ti = arith.addi %first, %k : index
    %t = tessera_schedule.prefetch %x[%ti] scope = "shared" double_buffer : memref<16384xf32> -> memref<256xf32, 3>
    %v = tessera_tile.load %t[%off] : memref<256xf32, 3>, vector<4xf32>
    %r = arith.mulf %v, %two : vector<4xf32>
    %base = arith.muli %ti, %c256 : index
    %gi = arith.addi %base, %off : index
    tessera_tile.store %r, %y[%gi] : vector<4xf32>, memref<16384xf32>
  }
  return
}
