// RUN: tessera-opt %s --tessera-tile-to-spirv=float-atomic-add=cas --tessera-serialize-spirv=output=%t.spv | FileCheck %s
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s --check-prefix=BIN
// RUN: tessera-opt %s --tessera-tile-to-spirv | FileCheck %s --check-prefix=NATIVE
// RUN: not tessera-opt %s --tessera-tile-to-gpu=float-atomic-add=fast 2>&1 | FileCheck %s --check-prefix=BAD

// f32 atomic add for devices without VK_EXT_shader_atomic_float
// (VulkanTargetOptions::nativeFloatAtomicAdd = false): the buffer moves to
// its integer bits and the add is the compare-exchange loop of float
// max/min, so the module needs no AtomicFloat32AddEXT.  The default
// (native) emits OpAtomicFAddEXT.
// CHECK: spirv.module @__spv__fadd Logical GLSL450 requires #spirv.vce<v1.0, [Shader, SignedZeroInfNanPreserve], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_float_controls]>
// CHECK-DAG: bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<16 x i32, stride=4> [0])>, StorageBuffer>
// CHECK: spirv.mlir.loop
// CHECK: spirv.FAdd %{{.*}}, %{{.*}} : f32
// CHECK: spirv.AtomicCompareExchange "Device" "None" "None"
// CHECK-NOT: EXT.AtomicFAdd
// BIN-NOT: OpCapability AtomicFloat32AddEXT
// NATIVE: spirv.EXT.AtomicFAdd "Device" "AcquireRelease|UniformMemory" %{{.*}}, %{{.*}} : !spirv.ptr<f32, StorageBuffer>
// BAD: float-atomic-add must be 'native' or 'cas', not 'fast'
func.func @fadd(%o: memref<16xf32>, %v: f32) attributes {tessera_tile.group_size = array<i64: 64>} {
  %c0 = arith.constant 0 : index
  %r = tessera_tile.atomic_rmw add %v, %o[%c0] scope = device : f32, memref<16xf32>
  return
}
