// The serialized binary is a valid Vulkan compute shader (spirv-val) whose
// entry point, LocalSize, bindings and push constants are those of the
// kernel (spirv-dis):
// RUN: tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv > /dev/null
// RUN: spirv-val --target-env vulkan1.1 %t.spv
// RUN: spirv-dis %t.spv | FileCheck %s
// Without output= there is nothing to write: a diagnostic, exit 1.
// RUN: not tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv 2>&1 | FileCheck %s --check-prefix=NOOUT
// A path that cannot be written: a diagnostic naming it.
// RUN: not tessera-opt %s --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.missing/dir/k.spv 2>&1 | FileCheck %s --check-prefix=NOWRITE

// CHECK: OpCapability Shader
// CHECK: OpEntryPoint GLCompute %{{.*}} "scale"
// CHECK: OpExecutionMode %{{.*}} LocalSize 32 1 1
// CHECK-DAG: OpDecorate %{{.*}} Binding 0
// CHECK-DAG: OpDecorate %{{.*}} Binding 1
// CHECK-DAG: OpDecorate %{{.*}} DescriptorSet 0
// CHECK-DAG: OpDecorate %{{.*}} Block
// CHECK: PushConstant
// NOOUT: error: tessera-serialize-spirv: no output= path
// NOWRITE: error: tessera-serialize-spirv: cannot write {{.*}}k.spv
func.func @scale(%s: f32, %x: memref<128xf32>, %y: memref<128xf32>)
    attributes {tessera_tile.group_size = array<i64: 32>, tessera_tile.grid = array<i64: 4>} {
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %c32 = arith.constant 32 : index
  %b = arith.muli %g, %c32 : index
  %i = arith.addi %b, %l : index
  %v = memref.load %x[%i] : memref<128xf32>
  %r = arith.mulf %v, %s : f32
  memref.store %r, %y[%i] : memref<128xf32>
  return
}
