// Shared-memory reduction with barriers in Tile IR: one partial sum per
// tile group (partial[g] = sum of x[g*1024 .. g*1024+1023]).
//
// Each of the 256 lanes sums 4 elements (coalesced), writes its sum to
// shared memory, then a tree halves the active lanes each step with a
// barrier between steps, down to the subgroup size; the last subgroup
// finishes with subgroup_reduce. The code is portable: on a GPU the tree
// stops at 32 (or 64) lanes and the subgroup reduction does the rest; on the
// cpu the subgroup size is 1, the tree runs to the end and subgroup_reduce
// is the identity.
//
//   tessera-run examples/reduction.mlir
func.func @block_sum(%x: memref<65536xf32>, %partial: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 256>, tessera_tile.grid = array<i64: 64>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %sg = tessera_tile.subgroup_size : index
  %sh = tessera_tile.shared_alloc : memref<256xf32, 3>
  %base = arith.muli %g, %c1024 : index
  %sum = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %o = arith.muli %j, %c256 : index
    %o2 = arith.addi %base, %o : index
    %i = arith.addi %o2, %l : index
    %v = memref.load %x[%i] : memref<65536xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  memref.store %sum, %sh[%l] : memref<256xf32, 3>
  tessera_tile.barrier
  // strides 128, 64, ..., 1; steps below the subgroup size are skipped
  scf.for %step = %c0 to %c8 step %c1 {
    %stride = arith.shrui %c128, %step : index
    %active = arith.cmpi uge, %stride, %sg : index
    scf.if %active {
      %mine = arith.cmpi ult, %l, %stride : index
      scf.if %mine {
        %p = arith.addi %l, %stride : index
        %a = memref.load %sh[%l] : memref<256xf32, 3>
        %b = memref.load %sh[%p] : memref<256xf32, 3>
        %s = arith.addf %a, %b : f32
        memref.store %s, %sh[%l] : memref<256xf32, 3>
      }
    }
    tessera_tile.barrier
  }
  %first = arith.cmpi ult, %l, %sg : index
  scf.if %first {
    %v = memref.load %sh[%l] : memref<256xf32, 3>
    %r = tessera_tile.subgroup_reduce add %v : f32
    %is0 = arith.cmpi eq, %l, %c0 : index
    scf.if %is0 {
      memref.store %r, %partial[%g] : memref<64xf32>
    }
  }
  return
}
