// The layouts area's conversions for tiled<TM,TN,tm,tn> (docs/conformance.md):
// macro tiles of TM x TN in row-major order of tiles, each holding micro
// tiles of tm x tn in row-major order.  One lane per logical element
// e = i*N + j of an M x N matrix (i = e / N, j = e % N):
//   layout_pack:   dst[offset(i, j)] = src[e]
//   layout_unpack: dst[e] = src[offset(i, j)]
//   offset = macro * TM*TN + micro * tm*tn + (i % TM % tm) * tn + (j % TN % tn)
//   macro = (i / TM) * MPR + j / TN,  MPR = ceil(N / TN)
//   micro = (i % TM / tm) * (TN / tn) + (j % TN) / tn
// The host's index map (conformance/kernels/layouts.h) checks the result.
// Parameters: @L@ lanes, @MN@ = M*N, @N@, @TM@, @TN@, @SM@ = tm, @SN@ = tn,
// @MPR@, @MICRO_PER_ROW@ = TN/tn, @TMTN@ = TM*TN, @SMSN@ = tm*tn.
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
    %c_tm = arith.constant @TM@ : index
    %c_tn = arith.constant @TN@ : index
    %c_sm = arith.constant @SM@ : index
    %c_sn = arith.constant @SN@ : index
    %c_mpr = arith.constant @MPR@ : index
    %c_tntn = arith.constant @MICRO_PER_ROW@ : index
    %c_tmtn = arith.constant @TMTN@ : index
    %c_smsn = arith.constant @SMSN@ : index
    %i = arith.divui %e, %c_n : index
    %j = arith.remui %e, %c_n : index
    %mi = arith.divui %i, %c_tm : index
    %mj = arith.divui %j, %c_tn : index
    %mrow = arith.muli %mi, %c_mpr : index
    %macro = arith.addi %mrow, %mj : index
    %ii = arith.remui %i, %c_tm : index
    %jj = arith.remui %j, %c_tn : index
    %ui = arith.divui %ii, %c_sm : index
    %uj = arith.divui %jj, %c_sn : index
    %urow = arith.muli %ui, %c_tntn : index
    %micro = arith.addi %urow, %uj : index
    %iii = arith.remui %ii, %c_sm : index
    %jjj = arith.remui %jj, %c_sn : index
    %mstart = arith.muli %macro, %c_tmtn : index
    %ustart = arith.muli %micro, %c_smsn : index
    %irow = arith.muli %iii, %c_sn : index
    %inmicro = arith.addi %irow, %jjj : index
    %o1 = arith.addi %mstart, %ustart : index
    %off = arith.addi %o1, %inmicro : index
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
    %c_tm = arith.constant @TM@ : index
    %c_tn = arith.constant @TN@ : index
    %c_sm = arith.constant @SM@ : index
    %c_sn = arith.constant @SN@ : index
    %c_mpr = arith.constant @MPR@ : index
    %c_tntn = arith.constant @MICRO_PER_ROW@ : index
    %c_tmtn = arith.constant @TMTN@ : index
    %c_smsn = arith.constant @SMSN@ : index
    %i = arith.divui %e, %c_n : index
    %j = arith.remui %e, %c_n : index
    %mi = arith.divui %i, %c_tm : index
    %mj = arith.divui %j, %c_tn : index
    %mrow = arith.muli %mi, %c_mpr : index
    %macro = arith.addi %mrow, %mj : index
    %ii = arith.remui %i, %c_tm : index
    %jj = arith.remui %j, %c_tn : index
    %ui = arith.divui %ii, %c_sm : index
    %uj = arith.divui %jj, %c_sn : index
    %urow = arith.muli %ui, %c_tntn : index
    %micro = arith.addi %urow, %uj : index
    %iii = arith.remui %ii, %c_sm : index
    %jjj = arith.remui %jj, %c_sn : index
    %mstart = arith.muli %macro, %c_tmtn : index
    %ustart = arith.muli %micro, %c_smsn : index
    %irow = arith.muli %iii, %c_sn : index
    %inmicro = arith.addi %irow, %jjj : index
    %o1 = arith.addi %mstart, %ustart : index
    %off = arith.addi %o1, %inmicro : index
    %v = memref.load %src[%off] : memref<?xf32>
    memref.store %v, %dst[%e] : memref<?xf32>
  }
  return
}
