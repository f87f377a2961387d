// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s --check-prefix=BIN

// The serialized module declares exactly what it uses:
// BIN-DAG: OpCapability GroupNonUniformShuffleRelative{{$}}
// BIN-NOT: OpCapability Int64

// shuffle up / down -> OpGroupNonUniformShuffleUp / Down (SPIR-V 1.3,
// GroupNonUniformShuffleRelative).  A lane whose source lane is outside its
// subgroup reads its own value (Tile IR's rule; SPIR-V leaves it undefined):
// the result is a select on SubgroupLocalInvocationId + delta < lanes of
// this subgroup (down) or SubgroupLocalInvocationId >= delta (up).  Index
// values shuffle as i32.
// CHECK: spirv.module @__spv__shuffles Logical GLSL450 requires #spirv.vce<v1.3, [Shader, GroupNonUniformShuffleRelative, SignedZeroInfNanPreserve]
// CHECK-DAG: built_in("SubgroupLocalInvocationId")
// CHECK-DAG: built_in("SubgroupSize")
// CHECK-DAG: built_in("SubgroupId")
// CHECK: %[[DOWN:.*]] = spirv.GroupNonUniformShuffleDown <Subgroup> %[[V:.*]], %{{.*}} : f32, i32
// The lanes of this subgroup: min(SubgroupSize, 96 - SubgroupId * SubgroupSize).
// (a select of the smaller: no GLSL.std.450 UMin, which OpenCL Kernels lack)
// CHECK: spirv.ISub
// CHECK: %[[LT:.*]] = spirv.ULessThan
// CHECK: %[[LANES:.*]] = spirv.Select %[[LT]]
// CHECK: %[[IN:.*]] = spirv.ULessThan %{{.*}}, %[[LANES]] : i32
// CHECK: spirv.Select %[[IN]], %[[DOWN]], %[[V]] : i1, f32
// CHECK: %[[UP:.*]] = spirv.GroupNonUniformShuffleUp <Subgroup> %[[W:.*]], %{{.*}} : i32, i32
// CHECK: %[[GE:.*]] = spirv.UGreaterThanEqual %{{.*}}, %{{.*}} : i32
// CHECK: spirv.Select %[[GE]], %[[UP]], %[[W]] : i1, i32
// CHECK: spirv.ExecutionMode @shuffles "LocalSize", 96, 1, 1
func.func @shuffles(%x: memref<96xf32>, %n: memref<96xi32>)
    attributes {tessera_tile.group_size = array<i64: 96>} {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<96xf32>
  %d = tessera_tile.shuffle down %v, %c1 : f32
  memref.store %d, %x[%l] : memref<96xf32>
  %u = tessera_tile.shuffle up %l, %c2 : index
  %ui = arith.index_cast %u : index to i32
  memref.store %ui, %n[%l] : memref<96xi32>
  return
}
