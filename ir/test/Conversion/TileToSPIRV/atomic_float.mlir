// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// Float atomic max / min: a compare-exchange loop on the float's bits (no
// VK_EXT_shader_atomic_float2 needed; MLIR 16 has no OpAtomicFMaxEXT).
// The buffers such atomics touch become i32 arrays (same bytes); their
// plain loads and stores bitcast, and a float add on such a buffer takes
// the loop too.  The loop starts from the value's own bits as a guess (no
// racy plain load) and retries with what the exchange returns.  NaN
// propagates (a NaN value is stored, a stored NaN stays).
// CHECK: spirv.module @__spv__fminmax Logical GLSL450 requires #spirv.vce<v1.0, [Shader, SignedZeroInfNanPreserve], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_float_controls]>
// CHECK-DAG: spirv.GlobalVariable @__workgroup_mem__{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<64 x i32>)>, Workgroup>
// CHECK-DAG: bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<16 x i32, stride=4> [0])>, StorageBuffer>
// The plain store to the retyped buffer stores bits.
// CHECK: spirv.Bitcast %{{.*}} : f32 to i32
// CHECK: spirv.Store "StorageBuffer" %{{.*}}, %{{.*}} : i32
// max on global memory, device scope: a release fence, the loop (header:
// the phi only; body: exchange and break), an acquire fence.
// CHECK: spirv.MemoryBarrier <Device>, <Release|UniformMemory>
// CHECK: spirv.mlir.loop
// CHECK: spirv.Branch ^[[HDR:bb[0-9]+]](%{{.*}} : i32)
// CHECK: ^[[HDR]](%{{.*}}: i32):
// CHECK-NEXT: spirv.Branch ^[[BODY:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// CHECK: spirv.FOrdGreaterThan %{{.*}}, %{{.*}} : f32
// CHECK: spirv.IsNan %{{.*}} : f32
// CHECK: spirv.AtomicCompareExchange "Device" "None" "None" %{{.*}}, %{{.*}}, %{{.*}} : !spirv.ptr<i32, StorageBuffer>
// CHECK: spirv.INotEqual
// CHECK: spirv.BranchConditional %{{.*}}, ^[[CONT:bb[0-9]+]](%{{.*}} : i32), ^[[MERGE:bb[0-9]+]]
// CHECK: ^[[CONT]](%[[P:.*]]: i32):
// CHECK-NEXT: spirv.Branch ^[[HDR]](%[[P]] : i32)
// CHECK: ^[[MERGE]]:
// CHECK-NEXT: spirv.mlir.merge
// CHECK: spirv.MemoryBarrier <Device>, <Acquire|UniformMemory>
// min on shared memory, workgroup scope:
// CHECK: spirv.MemoryBarrier <Workgroup>, <Release|WorkgroupMemory>
// CHECK: spirv.FOrdLessThan %{{.*}}, %{{.*}} : f32
// CHECK: spirv.AtomicCompareExchange "Workgroup" "None" "None" %{{.*}}, %{{.*}}, %{{.*}} : !spirv.ptr<i32, Workgroup>
// CHECK: spirv.MemoryBarrier <Workgroup>, <Acquire|WorkgroupMemory>
// add on the retyped buffer: the loop with an FAdd, no OpAtomicFAddEXT.
// CHECK: spirv.FAdd %{{.*}}, %{{.*}} : f32
// CHECK: spirv.AtomicCompareExchange "Device"
// CHECK-NOT: EXT.AtomicFAdd
func.func @fminmax(%o: memref<16xf32>, %v: f32) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c0 = arith.constant 0 : index
  %l = tessera_tile.lane_id 0 : index
  %sh = tessera_tile.shared_alloc : memref<64xf32, 3>
  memref.store %v, %o[%c0] : memref<16xf32>
  memref.store %v, %sh[%l] : memref<64xf32, 3>
  %m = tessera_tile.atomic_rmw max %v, %o[%c0] scope = device : f32, memref<16xf32>
  %n = tessera_tile.atomic_rmw min %m, %sh[%c0] scope = group : f32, memref<64xf32, 3>
  %s = tessera_tile.atomic_rmw add %n, %o[%c0] scope = device : f32, memref<16xf32>
  %x = memref.load %sh[%l] : memref<64xf32, 3>
  %y = arith.addf %x, %s : f32
  memref.store %y, %o[%c0] : memref<16xf32>
  return
}
