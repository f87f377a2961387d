// An architecture the compiler does not offer is an error naming the ones
// it does.
// RUN: not tessera-compile %s --target cuda:sm_61 --emit ptx -o %t.ptx 2>&1 | FileCheck %s
// CHECK: sm_61
// CHECK-SAME: sm_70,sm_75,sm_80
func.func @k(%x: memref<?xf32>) attributes {tessera_tile.group_size = array<i64: 32>} {
  return
}
