// A tiled GEMM in Tile IR with mma: C = A x B, 128x128x128 f32.
//
// A 4x4 grid of tile groups, each computing a 32x32 block of C with 4x4
// lanes; each lane owns an 8x8 register tile (the mma accumulator). For each
// 32-wide slice of K the group stages A[32x32] and B[32x32] in shared memory
// with cp_async (16 bytes per copy, split over the lanes), waits, and after a
// barrier every lane runs four 8x8x8 mma on fragments loaded from shared
// memory. The accumulator is carried across the barriers of the K loop: on
// the cpu it lives in a per-lane array (tessera-tile-work-item-loops).
//
//   tessera-run examples/tiled_gemm.mlir
func.func @tiled_gemm(%A: memref<128x128xf32>, %B: memref<128x128xf32>, %C: memref<128x128xf32>)
    attributes {tessera_tile.group_size = array<i64: 4, 4>, tessera_tile.grid = array<i64: 4, 4>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant dense<0.0> : vector<8x8xf32>
  %gx = tessera_tile.group_id 0 : index
  %gy = tessera_tile.group_id 1 : index
  %lx = tessera_tile.lane_id 0 : index
  %ly = tessera_tile.lane_id 1 : index
  %row0 = arith.muli %gy, %c32 : index
  %col0 = arith.muli %gx, %c32 : index
  %ar = arith.muli %ly, %c8 : index
  %bc = arith.muli %lx, %c8 : index
  %lin0 = arith.muli %ly, %c4 : index
  %lin = arith.addi %lin0, %lx : index
  %As = tessera_tile.shared_alloc : memref<32x32xf32, 3>
  %Bs = tessera_tile.shared_alloc : memref<32x32xf32, 3>
  %acc = scf.for %kt = %c0 to %c128 step %c32 iter_args(%c = %zero) -> (vector<8x8xf32>) {
    // stage the K slice: 256 chunks of 4 floats per tile, 16 per lane
    scf.for %ch = %lin to %c256 step %c16 {
      %r = arith.divui %ch, %c8 : index
      %q = arith.remui %ch, %c8 : index
      %cc = arith.muli %q, %c4 : index
      %gar = arith.addi %row0, %r : index
      %gac = arith.addi %kt, %cc : index
      tessera_tile.cp_async %A[%gar, %gac], %As[%r, %cc] elements = 4 : memref<128x128xf32>, memref<32x32xf32, 3>
      %gbr = arith.addi %kt, %r : index
      %gbc = arith.addi %col0, %cc : index
      tessera_tile.cp_async %B[%gbr, %gbc], %Bs[%r, %cc] elements = 4 : memref<128x128xf32>, memref<32x32xf32, 3>
    }
    tessera_tile.cp_async_commit
    tessera_tile.cp_async_wait 0
    tessera_tile.barrier
    %c2 = scf.for %kk = %c0 to %c32 step %c8 iter_args(%cv = %c) -> (vector<8x8xf32>) {
      %r0 = arith.constant 0 : index
      %r1 = arith.constant 1 : index
      %r2 = arith.constant 2 : index
      %r3 = arith.constant 3 : index
      %r4 = arith.constant 4 : index
      %r5 = arith.constant 5 : index
      %r6 = arith.constant 6 : index
      %r7 = arith.constant 7 : index
      %ra0 = arith.addi %ar, %r0 : index
      %va0 = tessera_tile.load %As[%ra0, %kk] : memref<32x32xf32, 3>, vector<8xf32>
      %fa0 = vector.insert %va0, %zero [0] : vector<8xf32> into vector<8x8xf32>
      %rb0 = arith.addi %kk, %r0 : index
      %vb0 = tessera_tile.load %Bs[%rb0, %bc] : memref<32x32xf32, 3>, vector<8xf32>
      %fb0 = vector.insert %vb0, %zero [0] : vector<8xf32> into vector<8x8xf32>
      %ra1 = arith.addi %ar, %r1 : index
      %va1 = tessera_tile.load %As[%ra1, %kk] : memref<32x32xf32, 3>, vector<8xf32>
      %fa1 = vector.insert %va1, %fa0 [1] : vector<8xf32> into vector<8x8xf32>
      %rb1 = arith.addi %kk, %r1 : index
      %vb1 = tessera_tile.load %Bs[%rb1, %bc] : memref<32x32xf32, 3>, vector<8xf32>
      %fb1 = vector.insert %vb1, %fb0 [1] : vector<8xf32> into vector<8x8xf32>
      %ra2 = arith.addi %ar, %r2 : index
      %va2 = tessera_tile.load %As[%ra2, %kk] : memref<32x32xf32, 3>, vector<8xf32>
      %fa2 = vector.insert %va2, %fa1 [2] : vector<8xf32> into vector<8x8xf32>
      %rb2 = arith.addi %kk, %r2 : index
      %vb2 = tessera_tile.load %Bs[%rb2, %bc] : memref<32x32xf32, 3>, vector<8xf32>
      %fb2 = vector.insert %vb2, %fb1 [2] : vector<8xf32> into vector<8x8xf32>
      %ra3 = arith.addi %ar, %r3 : index
      %va3 = tessera_tile.load %As[%ra3, %kk] : memref<32x32xf32, 3>, vector<8xf32>
      %fa3 = vector.insert %va3, %fa2 [3] : vector<8xf32> into vector<8x8xf32>
      %rb3 = arith.addi %kk, %r3 : index
      %vb3 = tessera_tile.load %Bs[%rb3, %bc] : memref<32x32xf32, 3>, vector<8xf32>
      %fb3 = vector.insert %vb3, %fb2 [3] : vector<8xf32> into vector<8x8xf32>
      %ra4 = arith.addi %ar, %r4 : index
      %va4 = tessera_tile.load %As[%ra4, %kk] : memref<32x32xf32, 3>, vector<8xf32>
      %fa4 = vector.insert %va4, %fa3 [4] : vector<8xf32> into vector<8x8xf32>
      %rb4 = arith.addi %kk, %r4 : index
      %vb4 = tessera_tile.load %Bs[%rb4, %bc] : memref<32x32xf32, 3>, vector<8xf32>
      %fb4 = vector.insert %vb4, %fb3 [4] : vector<8xf32> into vector<8x8xf32>
      %ra5 = arith.addi %ar, %r5 : index
      %va5 = tessera_tile.load %As[%ra5, %kk] : memref<32x32xf32, 3>, vector<8xf32>
      %fa5 = vector.insert %va5, %fa4 [5] : vector<8xf32> into vector<8x8xf32>
      %rb5 = arith.addi %kk, %r5 : index
      %vb5 = tessera_tile.load %Bs[%rb5, %bc] : memref<32x32xf32, 3>, vector<8xf32>
      %fb5 = vector.insert %vb5, %fb4 [5] : vector<8xf32> into vector<8x8xf32>
      %ra6 = arith.addi %ar, %r6 : index
      %va6 = tessera_tile.load %As[%ra6, %kk] : memref<32x32xf32, 3>, vector<8xf32>
      %fa6 = vector.insert %va6, %fa5 [6] : vector<8xf32> into vector<8x8xf32>
      %rb6 = arith.addi %kk, %r6 : index
      %vb6 = tessera_tile.load %Bs[%rb6, %bc] : memref<32x32xf32, 3>, vector<8xf32>
      %fb6 = vector.insert %vb6, %fb5 [6] : vector<8xf32> into vector<8x8xf32>
      %ra7 = arith.addi %ar, %r7 : index
      %va7 = tessera_tile.load %As[%ra7, %kk] : memref<32x32xf32, 3>, vector<8xf32>
      %fa7 = vector.insert %va7, %fa6 [7] : vector<8xf32> into vector<8x8xf32>
      %rb7 = arith.addi %kk, %r7 : index
      %vb7 = tessera_tile.load %Bs[%rb7, %bc] : memref<32x32xf32, 3>, vector<8xf32>
      %fb7 = vector.insert %vb7, %fb6 [7] : vector<8xf32> into vector<8x8xf32>
      %d = tessera_tile.mma %fa7, %fb7, %cv : vector<8x8xf32>, vector<8x8xf32>, vector<8x8xf32>
      scf.yield %d : vector<8x8xf32>
    }
    tessera_tile.barrier
    scf.yield %c2 : vector<8x8xf32>
  }
  %crow = arith.addi %row0, %ar : index
  %ccol = arith.addi %col0, %bc : index
  %o0 = arith.constant 0 : index
  %cr0 = arith.addi %crow, %o0 : index
  %vc0 = vector.extract %acc[0] : vector<8x8xf32>
  tessera_tile.store %vc0, %C[%cr0, %ccol] : vector<8xf32>, memref<128x128xf32>
  %o1 = arith.constant 1 : index
  %cr1 = arith.addi %crow, %o1 : index
  %vc1 = vector.extract %acc[1] : vector<8x8xf32>
  tessera_tile.store %vc1, %C[%cr1, %ccol] : vector<8xf32>, memref<128x128xf32>
  %o2 = arith.constant 2 : index
  %cr2 = arith.addi %crow, %o2 : index
  %vc2 = vector.extract %acc[2] : vector<8x8xf32>
  tessera_tile.store %vc2, %C[%cr2, %ccol] : vector<8xf32>, memref<128x128xf32>
  %o3 = arith.constant 3 : index
  %cr3 = arith.addi %crow, %o3 : index
  %vc3 = vector.extract %acc[3] : vector<8x8xf32>
  tessera_tile.store %vc3, %C[%cr3, %ccol] : vector<8xf32>, memref<128x128xf32>
  %o4 = arith.constant 4 : index
  %cr4 = arith.addi %crow, %o4 : index
  %vc4 = vector.extract %acc[4] : vector<8x8xf32>
  tessera_tile.store %vc4, %C[%cr4, %ccol] : vector<8xf32>, memref<128x128xf32>
  %o5 = arith.constant 5 : index
  %cr5 = arith.addi %crow, %o5 : index
  %vc5 = vector.extract %acc[5] : vector<8x8xf32>
  tessera_tile.store %vc5, %C[%cr5, %ccol] : vector<8xf32>, memref<128x128xf32>
  %o6 = arith.constant 6 : index
  %cr6 = arith.addi %crow, %o6 : index
  %vc6 = vector.extract %acc[6] : vector<8x8xf32>
  tessera_tile.store %vc6, %C[%cr6, %ccol] : vector<8xf32>, memref<128x128xf32>
  %o7 = arith.constant 7 : index
  %cr7 = arith.addi %crow, %o7 : index
  %vc7 = vector.extract %acc[7] : vector<8x8xf32>
  tessera_tile.store %vc7, %C[%cr7, %ccol] : vector<8xf32>, memref<128x128xf32>
  return
}
