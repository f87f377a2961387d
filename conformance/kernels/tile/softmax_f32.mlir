// softmax_f32(out, in, rows, cols): one group of @L@ lanes per row (the
// launch gives exactly `rows` groups); lane l handles columns l, l + L, ...;
// the row's max and sum meet in shared memory ([L]: max, [L + 1]: sum).
func.func @softmax_f32(%out: memref<?xf32>, %in: memref<?xf32>, %rows: i32, %cols32: i32)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %partial = tessera_tile.shared_alloc : memref<@L2@xf32, 3>
  %row = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cL = arith.constant @L@ : index
  %cL1 = arith.constant @L1@ : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %cols = arith.index_cast %cols32 : i32 to index
  %base = arith.muli %row, %cols : index
  %first = arith.cmpi eq, %lane, %c0 : index
  %m = scf.for %c = %lane to %cols step %cL iter_args(%mx = %ninf) -> (f32) {
    %i = arith.addi %base, %c : index
    %x = memref.load %in[%i] : memref<?xf32>
    %y = tessera_tile.math max(%mx, %x) : f32
    scf.yield %y : f32
  }
  memref.store %m, %partial[%lane] : memref<@L2@xf32, 3>
  tessera_tile.barrier
  scf.if %first {
    %m0 = memref.load %partial[%c0] : memref<@L2@xf32, 3>
    %mx = scf.for %l = %c1 to %cL step %c1 iter_args(%a = %m0) -> (f32) {
      %x = memref.load %partial[%l] : memref<@L2@xf32, 3>
      %y = tessera_tile.math max(%a, %x) : f32
      scf.yield %y : f32
    }
    memref.store %mx, %partial[%cL] : memref<@L2@xf32, 3>
  }
  tessera_tile.barrier
  %row_max = memref.load %partial[%cL] : memref<@L2@xf32, 3>
  %s = scf.for %c = %lane to %cols step %cL iter_args(%acc = %zero) -> (f32) {
    %i = arith.addi %base, %c : index
    %x = memref.load %in[%i] : memref<?xf32>
    %d = arith.subf %x, %row_max : f32
    %e = tessera_tile.math exp(%d) : f32
    %t = arith.addf %acc, %e : f32
    scf.yield %t : f32
  }
  tessera_tile.barrier
  memref.store %s, %partial[%lane] : memref<@L2@xf32, 3>
  tessera_tile.barrier
  scf.if %first {
    %t = scf.for %l = %c0 to %cL step %c1 iter_args(%a = %zero) -> (f32) {
      %x = memref.load %partial[%l] : memref<@L2@xf32, 3>
      %y = arith.addf %a, %x : f32
      scf.yield %y : f32
    }
    memref.store %t, %partial[%cL1] : memref<@L2@xf32, 3>
  }
  tessera_tile.barrier
  %row_sum = memref.load %partial[%cL1] : memref<@L2@xf32, 3>
  scf.for %c = %lane to %cols step %cL {
    %i = arith.addi %base, %c : index
    %x = memref.load %in[%i] : memref<?xf32>
    %d = arith.subf %x, %row_max : f32
    %e = tessera_tile.math exp(%d) : f32
    %r = arith.divf %e, %row_sum : f32
    memref.store %r, %out[%i] : memref<?xf32>
  }
  return
}
