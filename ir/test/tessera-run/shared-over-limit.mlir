// Shared memory over the cpu device's limit per group (64 KiB): the
// diagnostic points at the shared_alloc that crosses it, exit 1, before
// anything is compiled or loaded.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --no-verify; echo "exit code $?"' %s 2>&1 | FileCheck %s

func.func @big(%x: memref<1024xf32>) attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1>} {
  %a = tessera_tile.shared_alloc : memref<12288xf32, 3>
  %b = tessera_tile.shared_alloc : memref<8192xf32, 3>
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<1024xf32>
  memref.store %v, %a[%l] : memref<12288xf32, 3>
  memref.store %v, %b[%l] : memref<8192xf32, 3>
  return
}
// CHECK: shared-over-limit.mlir:8:8: error: 'tessera_tile.shared_alloc' op kernel needs 81920 bytes of shared memory, more than the limit of 65536 bytes
// CHECK: exit code 1
