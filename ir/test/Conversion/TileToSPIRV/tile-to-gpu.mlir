// RUN: tessera-opt %s --tessera-tile-to-gpu | FileCheck %s
// RUN: tessera-opt %s --tessera-tile-to-gpu=float-atomic-add=cas | FileCheck %s --check-prefix=CAS

// One gpu.module per kernel, carrying the Vulkan target environment; ids
// become gpu ids, shared_alloc a Workgroup (space 3) alloc, barrier
// gpu.barrier; buffers get set 0 bindings in argument order and the kernel
// its group size as LocalSize; vectors are scalarized.
// CHECK-LABEL: gpu.module @k attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader
// CHECK: gpu.func @k(%{{.*}}: memref<1024xf32> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 0)>}, %{{.*}}: memref<1024xf32> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 1)>}, %{{.*}}: f32
// CHECK-SAME: kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.thread_id x
// CHECK-DAG: memref.alloc() : memref<256xf32, 3>
// CHECK: gpu.barrier
// CHECK-NOT: vector<
// CHECK: gpu.return
// CHECK-NOT: tessera_tile.
func.func @k(%x: memref<1024xf32>, %y: memref<1024xf32>, %s: f32)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 4>} {
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %sh = tessera_tile.shared_alloc : memref<256xf32, 3>
  %base = arith.muli %g, %c256 : index
  %lo = arith.muli %l, %c4 : index
  %i = arith.addi %base, %lo : index
  %v = tessera_tile.load %x[%i] : memref<1024xf32>, vector<4xf32>
  tessera_tile.store %v, %sh[%lo] : vector<4xf32>, memref<256xf32, 3>
  tessera_tile.barrier
  %w = tessera_tile.load %sh[%lo] : memref<256xf32, 3>, vector<4xf32>
  %sv = vector.broadcast %s : f32 to vector<4xf32>
  %r = arith.mulf %w, %sv : vector<4xf32>
  tessera_tile.store %r, %y[%i] : vector<4xf32>, memref<1024xf32>
  return
}

// Float atomic add: native OpAtomicFAddEXT, or (cas) the buffer retyped to
// i32 for a compare-exchange loop.
// CHECK-LABEL: gpu.module @acc
// CHECK: gpu.func @acc(%{{.*}}: memref<16xf32>
// CAS-LABEL: gpu.module @acc
// CAS: gpu.func @acc(%{{.*}}: memref<16xi32>
func.func @acc(%out: memref<16xf32>, %v: f32)
    attributes {tessera_tile.group_size = array<i64: 32>} {
  %l = tessera_tile.lane_id 0 : index
  %c16 = arith.constant 16 : index
  %i = arith.remui %l, %c16 : index
  %o = tessera_tile.atomic_rmw add %v, %out[%i] scope = device : f32, memref<16xf32>
  return
}
