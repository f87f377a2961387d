// Float atomic max/min (compare-exchange loops), run by
// VulkanTileIr.FloatAtomicMaxMin: every lane of every group folds x[i] into
// out[0] (max, device scope) and out[1] (min, device scope), and into a
// shared slot (max, group scope) that lane 0 then writes to part[g]; out[2]
// gets max over y, whose one NaN must propagate.  old[i] receives the value
// each max replaced (some earlier value of out[0]).
func.func @fatomics(%x: memref<1024xf32>, %y: memref<1024xf32>, %out: memref<4xf32>,
                    %part: memref<8xf32>, %old: memref<1024xf32>)
    attributes {tessera_tile.group_size = array<i64: 128>, tessera_tile.grid = array<i64: 8>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  %g = tessera_tile.group_id 0 : index
  %n = tessera_tile.lane_count 0 : index
  %l = tessera_tile.lane_id 0 : index
  %b = arith.muli %g, %n : index
  %i = arith.addi %b, %l : index
  %sh = tessera_tile.shared_alloc : memref<1xf32, 3>
  %is0 = arith.cmpi eq, %l, %c0 : index
  scf.if %is0 {
    memref.store %ninf, %sh[%c0] : memref<1xf32, 3>
  }
  tessera_tile.barrier
  %v = memref.load %x[%i] : memref<1024xf32>
  %o = tessera_tile.atomic_rmw max %v, %out[%c0] scope = device : f32, memref<4xf32>
  memref.store %o, %old[%i] : memref<1024xf32>
  %o1 = tessera_tile.atomic_rmw min %v, %out[%c1] scope = device : f32, memref<4xf32>
  %o2 = tessera_tile.atomic_rmw max %v, %sh[%c0] scope = group : f32, memref<1xf32, 3>
  %w = memref.load %y[%i] : memref<1024xf32>
  %o3 = tessera_tile.atomic_rmw max %w, %out[%c2] scope = device : f32, memref<4xf32>
  tessera_tile.barrier
  scf.if %is0 {
    %m = memref.load %sh[%c0] : memref<1xf32, 3>
    memref.store %m, %part[%g] : memref<8xf32>
  }
  return
}
