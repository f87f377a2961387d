// 48 KiB of shared memory: fits the cpu plugin (64 KiB per group), not
// lavapipe (32 KiB): tessera-run verifies kernels against the device it runs
// on, so the diagnostic points at the shared_alloc that crosses the limit.
func.func @big(%x: memref<1024xf32>) attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1>} {
  %a = tessera_tile.shared_alloc : memref<8192xf32, 3>
  %b = tessera_tile.shared_alloc : memref<4096xf32, 3>
  %c0 = arith.constant 0 : index
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<1024xf32>
  memref.store %v, %a[%l] : memref<8192xf32, 3>
  memref.store %v, %b[%l] : memref<4096xf32, 3>
  return
}
