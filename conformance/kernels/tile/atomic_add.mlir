// atomic_add(counters, scope, iters): every lane adds 1 `iters` times with an
// atomic of the given scope (docs/memory-model.md):
//   0 tile:   the lane's own counter, counters[global lane]
//   1 group:  a counter in shared memory; lane 0 publishes it to
//             counters[group] after the group's last barrier
//   2 device: counters[0], shared by every group of the launch
// Scope 3 (mesh) is atomic_add_mesh.mlir: a plugin without system-scope
// atomics need not compile it.  The barriers are taken whatever the scope
// (uniform control flow).
func.func @atomic_add(%counters: memref<?xi32>, %scope: i32, %iters: i32)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %shared = tessera_tile.shared_alloc : memref<1xi32, 3>
  %t = tessera_tile.tile_id : index
  %lane = tessera_tile.lane_id 0 : index
  %lanes = tessera_tile.lane_count 0 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %first = arith.cmpi eq, %lane, %c0 : index
  scf.if %first {
    memref.store %zero, %shared[%c0] : memref<1xi32, 3>
  }
  tessera_tile.barrier
  %base = arith.muli %t, %lanes : index
  %global = arith.addi %base, %lane : index
  %is_tile = arith.cmpi eq, %scope, %zero : i32
  %is_group = arith.cmpi eq, %scope, %one : i32
  %n = arith.index_cast %iters : i32 to index
  scf.for %k = %c0 to %n step %c1 {
    scf.if %is_tile {
      %o = tessera_tile.atomic_rmw add %one, %counters[%global] scope = tile : i32, memref<?xi32>
    } else {
      scf.if %is_group {
        %o = tessera_tile.atomic_rmw add %one, %shared[%c0] scope = group : i32, memref<1xi32, 3>
      } else {
        %o = tessera_tile.atomic_rmw add %one, %counters[%c0] scope = device : i32, memref<?xi32>
      }
    }
  }
  tessera_tile.barrier
  %publish = arith.andi %first, %is_group : i1
  scf.if %publish {
    %v = memref.load %shared[%c0] : memref<1xi32, 3>
    memref.store %v, %counters[%t] : memref<?xi32>
  }
  return
}
