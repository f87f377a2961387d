// RUN: tessera-opt %s --tessera-tile-to-gpu --map-memref-spirv-storage-class=client-api=vulkan --tessera-gpu-to-spirv | FileCheck %s

// gpu.module kernels become spirv.modules: structured control flow
// (spirv.mlir.loop / selection, which spirv-val requires for Vulkan),
// Workgroup variables for shared memory, ControlBarrier, subgroup
// reductions, atomics with their scopes, and the scalar arguments as the
// members of one PushConstant block.
// CHECK-LABEL: spirv.module @__spv__k Logical GLSL450
// CHECK-DAG: spirv.GlobalVariable @__tessera_push_constants : !spirv.ptr<!spirv.struct<(f32 [0], i32 [4])>, PushConstant>
// CHECK-DAG: spirv.GlobalVariable @__workgroup_mem__{{[0-9]+}} : !spirv.ptr<!spirv.struct<(!spirv.array<64 x f32>)>, Workgroup>
// CHECK: spirv.func @k(%{{.*}}: !spirv.ptr<!spirv.struct<(!spirv.array<256 x f32, stride=4> [0])>, StorageBuffer> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 0)>}, %{{.*}}: !spirv.ptr<!spirv.struct<(!spirv.array<4 x f32, stride=4> [0])>, StorageBuffer> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 1)>}, %{{.*}}: !spirv.ptr<!spirv.struct<(!spirv.array<1 x i32, stride=4> [0])>, StorageBuffer> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 2)>})
// CHECK: spirv.Load "PushConstant"
// CHECK: spirv.mlir.selection
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
// CHECK: spirv.mlir.loop
// CHECK: spirv.GroupNonUniformFAdd "Subgroup" "Reduce"
// CHECK: spirv.AtomicIAdd "Device" "AcquireRelease|UniformMemory"
// CHECK-NOT: gpu.
// CHECK-NOT: tessera_tile.
func.func @k(%x: memref<256xf32>, %out: memref<4xf32>, %scale: f32, %n: i32, %cnt: memref<1xi32>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 4>} {
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %sh = tessera_tile.shared_alloc : memref<64xf32, 3>
  %base = arith.muli %g, %c64 : index
  %i = arith.addi %base, %l : index
  %ii = arith.index_cast %i : index to i32
  %in = arith.cmpi slt, %ii, %n : i32
  %v = scf.if %in -> f32 {
    %x0 = memref.load %x[%i] : memref<256xf32>
    %s = arith.mulf %x0, %scale : f32
    scf.yield %s : f32
  } else {
    scf.yield %zero : f32
  }
  memref.store %v, %sh[%l] : memref<64xf32, 3>
  tessera_tile.barrier
  %t = scf.for %j = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %e = memref.load %sh[%j] : memref<64xf32, 3>
    %a = arith.addf %acc, %e : f32
    scf.yield %a : f32
  }
  %r = tessera_tile.subgroup_reduce add %t : f32
  %one = arith.constant 1 : i32
  %o = tessera_tile.atomic_rmw add %one, %cnt[%c0] scope = device : i32, memref<1xi32>
  memref.store %r, %out[%g] : memref<4xf32>
  return
}
