// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// Ids, atomics with scopes, subgroup ops, math; two scalars in one
// push-constant block (argument order, offsets 0 and 4); buffers keep
// bindings 0..2 in argument order, whatever the scalars between them.
// CHECK: spirv.module @__spv__ops
// CHECK-DAG: spirv.GlobalVariable @__tessera_push_constants : !spirv.ptr<!spirv.struct<(f32 [0], i32 [4])>, PushConstant>
// CHECK-DAG: built_in("NumWorkgroups")
// CHECK-DAG: bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<1024 x f32, stride=4> [0])>, StorageBuffer>
// CHECK-DAG: bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.array<16 x i32, stride=4> [0])>, StorageBuffer>
// CHECK-DAG: bind(0, 2) : !spirv.ptr<!spirv.struct<(!spirv.array<16 x f32, stride=4> [0])>, StorageBuffer>
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
// CHECK: spirv.AtomicIAdd "Device" "AcquireRelease|UniformMemory" %{{.*}}, %{{.*}} : !spirv.ptr<i32, StorageBuffer>
// CHECK: spirv.AtomicSMax "Workgroup" "AcquireRelease|WorkgroupMemory" %{{.*}}, %{{.*}} : !spirv.ptr<i32, Workgroup>
// CHECK: spirv.AtomicExchange "Workgroup" "AcquireRelease|UniformMemory" %{{.*}}, %{{.*}} : !spirv.ptr<i32, StorageBuffer>
// CHECK: spirv.EXT.AtomicFAdd "Device" "AcquireRelease|UniformMemory" %{{.*}}, %{{.*}} : !spirv.ptr<f32, StorageBuffer>
// CHECK: spirv.GroupNonUniformFMax "Subgroup" "Reduce" %{{.*}} : f32
// CHECK: spirv.GroupNonUniformShuffleXor <Subgroup> %{{.*}}, %{{.*}} : i32, i32
// CHECK: spirv.GL.Exp %{{.*}} : f32
// CHECK: spirv.EntryPoint "GLCompute" @ops
// CHECK: spirv.ExecutionMode @ops "LocalSize", 64, 2, 1
func.func @ops(%s: f32, %g: memref<1024xf32>, %n: i32, %o: memref<16xi32>, %fo: memref<16xf32>)
    attributes {tessera_tile.group_size = array<i64: 64, 2>, tessera_tile.grid = array<i64: 8, 2>} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %gy = tessera_tile.group_count 1 : index
  %t = tessera_tile.tile_id : index
  %ly = tessera_tile.lane_id 1 : index
  %sh = tessera_tile.shared_alloc : memref<64xi32, 3>
  %sf = tessera_tile.shared_alloc swizzle = 32 : memref<64xf32, 3>
  tessera_tile.cp_async %g[%t], %sf[%gy] elements = 4 : memref<1024xf32>, memref<64xf32, 3>
  tessera_tile.cp_async_commit
  tessera_tile.cp_async_wait 0
  tessera_tile.barrier
  %a1 = tessera_tile.atomic_rmw add %n, %o[%ly] scope = device : i32, memref<16xi32>
  %a2 = tessera_tile.atomic_rmw max %a1, %sh[%ly] scope = group : i32, memref<64xi32, 3>
  %a3 = tessera_tile.atomic_rmw xchg %a2, %o[%c0] scope = tile : i32, memref<16xi32>
  %f1 = tessera_tile.atomic_rmw add %s, %fo[%c0] scope = device : f32, memref<16xf32>
  %r = tessera_tile.subgroup_reduce max %f1 : f32
  %x = tessera_tile.shuffle xor %a3, %gy : i32
  %e = tessera_tile.math exp(%r) : f32
  memref.store %e, %fo[%ly] : memref<16xf32>
  memref.store %x, %o[%ly] : memref<16xi32>
  return
}
