// What the cuda compiler's generic tier cannot lower gets a diagnostic at
// the op, never a crash.
// RUN: not tessera-compile %s --function mesh_fmax --target cuda:sm_80 --emit ptx -o %t.ptx 2>&1 | FileCheck %s --check-prefix=FMAX
// RUN: not tessera-compile %s --function shuffle_i128 --target cuda:sm_80 --emit ptx -o %t.ptx 2>&1 | FileCheck %s --check-prefix=WIDE

// FMAX: invalid.mlir:[[@LINE+4]]:{{[0-9]+}}: error: 'tessera_tile.atomic_rmw' op float max/min at mesh scope is not lowered on cuda
func.func @mesh_fmax(%c: memref<?xf32>, %v: f32)
    attributes {tessera_tile.group_size = array<i64: 32>} {
  %c0 = arith.constant 0 : index
  %o = tessera_tile.atomic_rmw max %v, %c[%c0] scope = mesh : f32, memref<?xf32>
  return
}

// WIDE: invalid.mlir:[[@LINE+6]]:{{[0-9]+}}: error: 'tessera_tile.shuffle' op the NVVM lowering shuffles scalars of 8 to 64 bits (f16, bf16, f32, f64, i8 to i64, index), not 'i128'
func.func @shuffle_i128(%x: memref<32xi128>)
    attributes {tessera_tile.group_size = array<i64: 32>} {
  %c1 = arith.constant 1 : index
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<32xi128>
  %s = tessera_tile.shuffle xor %v, %c1 : i128
  memref.store %s, %x[%l] : memref<32xi128>
  return
}

// A device whose atomics on host memory race with the host's compiles with
// mesh_atomics=false: a mesh-scope atomic is then refused, naming the op.
// RUN: not tessera-compile %s --function mesh_add --target cuda:sm_90a --compile-option mesh_atomics=false --emit ptx -o %t.ptx 2>&1 | FileCheck %s --check-prefix=NOMESH
// NOMESH: invalid.mlir:[[@LINE+5]]:{{[0-9]+}}: error: 'tessera_tile.atomic_rmw' op has scope 'mesh' (the host and peer devices), and the target device's atomics on host memory are not atomic with the host's
func.func @mesh_add(%c: memref<?xi32>)
    attributes {tessera_tile.group_size = array<i64: 32>} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %o = tessera_tile.atomic_rmw add %one, %c[%c0] scope = mesh : i32, memref<?xi32>
  return
}
