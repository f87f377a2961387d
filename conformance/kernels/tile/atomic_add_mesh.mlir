// atomic_add_mesh(counter, scope, iters): every lane adds 1 `iters` times
// to counter[0] with a system-scope atomic (host-visible memory shared with
// the host and launches on peer devices); `scope` is 3, kept for the same
// argument list as atomic_add.mlir.
func.func @atomic_add_mesh(%counters: memref<?xi32>, %scope: i32, %iters: i32)
    attributes {tessera_tile.group_size = array<i64: @L@>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %n = arith.index_cast %iters : i32 to index
  scf.for %k = %c0 to %n step %c1 {
    %o = tessera_tile.atomic_rmw add %one, %counters[%c0] scope = mesh : i32, memref<?xi32>
  }
  return
}
