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

// Half a warp-specialized pipeline would hang on the device; setmaxnreg
// needs whole warpgroups:
// RUN: not tessera-compile %s --function acquire_alone --target cuda:sm_90a --emit ptx -o %t.ptx 2>&1 | FileCheck %s --check-prefix=ACQUIRE
// RUN: not tessera-compile %s --function release_alone --target cuda:sm_90a --emit ptx -o %t.ptx 2>&1 | FileCheck %s --check-prefix=RELEASE
// RUN: not tessera-compile %s --function budget_96 --target cuda:sm_90a --emit ptx -o %t.ptx 2>&1 | FileCheck %s --check-prefix=BUDGET
// ACQUIRE: invalid.mlir:[[@LINE+6]]:{{[0-9]+}}: error: 'tessera_tile.tile_load_acquire' op waits for releases of its stage, and the kernel has no tessera_tile.tile_load_release: it would wait forever
func.func @acquire_alone(%x: memref<32xf32>)
    attributes {tessera_tile.group_size = array<i64: 128>} {
  %c0 = arith.constant 0 : index
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<32xf32>
  tessera_tile.tile_load_acquire stage %c0 phase %c0 {releasers = 128 : i64, stages = 2 : i64}
  memref.store %v, %x[%l] : memref<32xf32>
  return
}

// RELEASE: invalid.mlir:[[@LINE+5]]:{{[0-9]+}}: error: 'tessera_tile.tile_load_release' op releases a stage, and the kernel has no tessera_tile.tile_load_acquire to say how many lanes release it (releasers)
func.func @release_alone(%x: memref<32xf32>)
    attributes {tessera_tile.group_size = array<i64: 128>} {
  %c0 = arith.constant 0 : index
  %l = tessera_tile.lane_id 0 : index
  tessera_tile.tile_load_release stage %c0 {stages = 2 : i64}
  return
}

// BUDGET: invalid.mlir:[[@LINE+3]]:{{[0-9]+}}: error: 'tessera_tile.set_max_registers' op needs groups of whole 128-lane warpgroups (setmaxnreg); this kernel's group has 96 lanes
func.func @budget_96()
    attributes {tessera_tile.group_size = array<i64: 96>} {
  tessera_tile.set_max_registers {registers = 40 : i64}
  return
}
