// The layouts area's conversions for every layout of the blocked family
// (docs/conformance.md): blocked<BM,BN>; row_major is blocked<1,N>,
// col_major blocked<M,1>, interleaved<K> blocked<K,1>.  One lane per
// logical element e = i*N + j of an M x N matrix (i = e / N, j = e % N):
//   layout_pack:   dst[offset(i, j)] = src[e]
//   layout_unpack: dst[e] = src[offset(i, j)]
//   offset(i, j) = ((i / BM) * BPR + j / BN) * BM*BN + (i % BM) * BN + j % BN
// with BPR = ceil(N / BN).  The host's index map (conformance/kernels/
// layouts.h) checks the result.  Parameters: @L@ lanes, @MN@ = M*N, @N@,
// @BM@, @BN@, @BPR@, @BMBN@ = BM*BN.
func.func @layout_pack(%dst: memref<?xf32>, %src: memref<?xf32>)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %base = arith.muli %t, %lanes : index
  %e = arith.addi %base, %lane : index
  %total = arith.constant @MN@ : index
  %inside = arith.cmpi ult, %e, %total : index
  scf.if %inside {
    %c_n = arith.constant @N@ : index
    %c_bm = arith.constant @BM@ : index
    %c_bn = arith.constant @BN@ : index
    %c_bpr = arith.constant @BPR@ : index
    %c_bmbn = arith.constant @BMBN@ : index
    %i = arith.divui %e, %c_n : index
    %j = arith.remui %e, %c_n : index
    %bi = arith.divui %i, %c_bm : index
    %bj = arith.divui %j, %c_bn : index
    %ii = arith.remui %i, %c_bm : index
    %jj = arith.remui %j, %c_bn : index
    %brow = arith.muli %bi, %c_bpr : index
    %block = arith.addi %brow, %bj : index
    %bstart = arith.muli %block, %c_bmbn : index
    %irow = arith.muli %ii, %c_bn : index
    %inblock = arith.addi %irow, %jj : index
    %off = arith.addi %bstart, %inblock : index
    %v = memref.load %src[%e] : memref<?xf32>
    memref.store %v, %dst[%off] : memref<?xf32>
  }
  return
}

func.func @layout_unpack(%dst: memref<?xf32>, %src: memref<?xf32>)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %base = arith.muli %t, %lanes : index
  %e = arith.addi %base, %lane : index
  %total = arith.constant @MN@ : index
  %inside = arith.cmpi ult, %e, %total : index
  scf.if %inside {
    %c_n = arith.constant @N@ : index
    %c_bm = arith.constant @BM@ : index
    %c_bn = arith.constant @BN@ : index
    %c_bpr = arith.constant @BPR@ : index
    %c_bmbn = arith.constant @BMBN@ : index
    %i = arith.divui %e, %c_n : index
    %j = arith.remui %e, %c_n : index
    %bi = arith.divui %i, %c_bm : index
    %bj = arith.divui %j, %c_bn : index
    %ii = arith.remui %i, %c_bm : index
    %jj = arith.remui %j, %c_bn : index
    %brow = arith.muli %bi, %c_bpr : index
    %block = arith.addi %brow, %bj : index
    %bstart = arith.muli %block, %c_bmbn : index
    %irow = arith.muli %ii, %c_bn : index
    %inblock = arith.addi %irow, %jj : index
    %off = arith.addi %bstart, %inblock : index
    %v = memref.load %src[%off] : memref<?xf32>
    memref.store %v, %dst[%e] : memref<?xf32>
  }
  return
}
