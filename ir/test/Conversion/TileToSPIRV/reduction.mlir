// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// examples/reduction.mlir: shared memory is a Workgroup variable, barriers
// are control barriers, scf.for / scf.if are structured loops and
// selections (merge blocks), subgroup_size is the SubgroupSize builtin and
// subgroup_reduce a GroupNonUniformFAdd Reduce (SPIR-V 1.3).
// CHECK: spirv.module @__spv__block_sum Logical GLSL450 requires #spirv.vce<v1.3, [Shader, GroupNonUniformArithmetic, SignedZeroInfNanPreserve]
// CHECK-DAG: spirv.GlobalVariable @__workgroup_mem__{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<256 x f32>)>, Workgroup>
// CHECK-DAG: built_in("SubgroupSize")
// CHECK-DAG: bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<65536 x f32, stride=4> [0])>, StorageBuffer>
// CHECK-DAG: bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.array<64 x f32, stride=4> [0])>, StorageBuffer>
// CHECK: spirv.func @block_sum() "None"
// subgroup_size is clamped to the group's 256 lanes.
// CHECK: spirv.GL.UMin %{{.*}}, %{{.*}} : i32
// CHECK: spirv.mlir.loop
// CHECK: spirv.mlir.merge
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
// CHECK: spirv.mlir.loop
// CHECK: spirv.mlir.selection
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
// CHECK: spirv.GroupNonUniformFAdd "Subgroup" "Reduce" %{{.*}} : f32
// CHECK: spirv.ExecutionMode @block_sum "LocalSize", 256, 1, 1
func.func @block_sum(%x: memref<65536xf32>, %partial: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 256>, tessera_tile.grid = array<i64: 64>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %sg = tessera_tile.subgroup_size : index
  %sh = tessera_tile.shared_alloc : memref<256xf32, 3>
  %base = arith.muli %g, %c1024 : index
  %sum = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %o = arith.muli %j, %c256 : index
    %o2 = arith.addi %base, %o : index
    %i = arith.addi %o2, %l : index
    %v = memref.load %x[%i] : memref<65536xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  memref.store %sum, %sh[%l] : memref<256xf32, 3>
  tessera_tile.barrier
  // strides 128, 64, ..., 1; steps below the subgroup size are skipped
  scf.for %step = %c0 to %c8 step %c1 {
    %stride = arith.shrui %c128, %step : index
    %active = arith.cmpi uge, %stride, %sg : index
    scf.if %active {
      %mine = arith.cmpi ult, %l, %stride : index
      scf.if %mine {
        %p = arith.addi %l, %stride : index
        %a = memref.load %sh[%l] : memref<256xf32, 3>
        %b = memref.load %sh[%p] : memref<256xf32, 3>
        %s = arith.addf %a, %b : f32
        memref.store %s, %sh[%l] : memref<256xf32, 3>
      }
    }
    tessera_tile.barrier
  }
  %first = arith.cmpi ult, %l, %sg : index
  scf.if %first {
    %v = memref.load %sh[%l] : memref<256xf32, 3>
    %r = tessera_tile.subgroup_reduce add %v : f32
    %is0 = arith.cmpi eq, %l, %c0 : index
    scf.if %is0 {
      memref.store %r, %partial[%g] : memref<64xf32>
    }
  }
  return
}
