// f32 atomic add compiled with float-atomic-add=cas (no
// VK_EXT_shader_atomic_float needed), run by VulkanTileIr.FloatAddCas:
// every lane adds 0.5 to out[0] (device scope) and to a shared sum (group
// scope) that lane 0 adds to out[1] at the end.
func.func @fadd_cas(%out: memref<2xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %l = tessera_tile.lane_id 0 : index
  %sh = tessera_tile.shared_alloc : memref<1xf32, 3>
  %is0 = arith.cmpi eq, %l, %c0 : index
  scf.if %is0 {
    memref.store %zero, %sh[%c0] : memref<1xf32, 3>
  }
  tessera_tile.barrier
  %a = tessera_tile.atomic_rmw add %half, %out[%c0] scope = device : f32, memref<2xf32>
  %b = tessera_tile.atomic_rmw add %half, %sh[%c0] scope = group : f32, memref<1xf32, 3>
  tessera_tile.barrier
  scf.if %is0 {
    %s = memref.load %sh[%c0] : memref<1xf32, 3>
    %c = tessera_tile.atomic_rmw add %s, %out[%c1] scope = device : f32, memref<2xf32>
  }
  return
}
