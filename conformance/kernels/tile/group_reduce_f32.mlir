// group_reduce_f32(out, in, n): group g sums in[g*L .. g*L+L) (zero past n)
// into out[g] with a shared-memory tree and group barriers (L = @L@, a power
// of two; @LOG2L@ halving steps).  The association order is fixed, so the
// host reproduces the result bit for bit.
func.func @group_reduce_f32(%out: memref<?xf32>, %in: memref<?xf32>, %n: i64)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %shared = tessera_tile.shared_alloc : memref<@L@xf32, 3>
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cL = arith.constant @L@ : index
  %steps = arith.constant @LOG2L@ : index
  %zero = arith.constant 0.0 : f32
  %base = arith.muli %t, %cL : index
  %i = arith.addi %base, %lane : index
  %i64 = arith.index_cast %i : index to i64
  %inside = arith.cmpi ult, %i64, %n : i64
  %v = scf.if %inside -> (f32) {
    %x = memref.load %in[%i] : memref<?xf32>
    scf.yield %x : f32
  } else {
    scf.yield %zero : f32
  }
  memref.store %v, %shared[%lane] : memref<@L@xf32, 3>
  tessera_tile.barrier
  scf.for %k = %c0 to %steps step %c1 {
    %k1 = arith.addi %k, %c1 : index
    %s = arith.shrui %cL, %k1 : index
    %active = arith.cmpi ult, %lane, %s : index
    scf.if %active {
      %j = arith.addi %lane, %s : index
      %a = memref.load %shared[%lane] : memref<@L@xf32, 3>
      %b = memref.load %shared[%j] : memref<@L@xf32, 3>
      %sum = arith.addf %a, %b : f32
      memref.store %sum, %shared[%lane] : memref<@L@xf32, 3>
    }
    tessera_tile.barrier
  }
  %first = arith.cmpi eq, %lane, %c0 : index
  scf.if %first {
    %r = memref.load %shared[%c0] : memref<@L@xf32, 3>
    memref.store %r, %out[%t] : memref<?xf32>
  }
  return
}
