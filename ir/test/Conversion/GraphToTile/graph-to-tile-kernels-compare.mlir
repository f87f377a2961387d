// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=cs_k0_elementwise --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k0.spv
// RUN: spirv-val --target-env vulkan1.1 %t.k0.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=cs_k1_elementwise --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.k1.spv
// RUN: spirv-val --target-env vulkan1.1 %t.k1.spv

// compare and select on the GPU path: i1 tensors are i8 buffers (one byte,
// 0 or 1; SPIR-V has no storable bool), a compare's i1 is stored as
// extui(c) (select(c, 1, 0), canonicalized), a loaded byte is `!= 0`, and
// select is arith.select; the bias row broadcasts by `flat % 20`.
// CHECK-LABEL: func.func @cs(
// CHECK-SAME: memref<320xf32> {tessera.buffer = "input"}, %{{.*}}: memref<20xf32> {tessera.buffer = "input"}, %{{.*}}: memref<320xi8> {tessera.buffer = "input"}, %{{.*}}: memref<320xf32> {tessera.buffer = "output"}, %{{.*}}: memref<320xi8> {tessera.buffer = "output"})
// CHECK-LABEL: func.func @cs_k0_elementwise(
// CHECK: arith.remui %{{.*}}, %c20
// CHECK: %[[C:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[B:.*]] = arith.extui %[[C]] : i1 to i8
// CHECK: memref.store %[[B]], %{{.*}} : memref<320xi8>
// CHECK-LABEL: func.func @cs_k1_elementwise(
// CHECK: %[[M:.*]] = memref.load %{{.*}} : memref<320xi8>
// CHECK: %[[T:.*]] = arith.cmpi ne, %[[M]], %{{.*}} : i8
// CHECK: arith.select %[[T]], %{{.*}}, %{{.*}} : f32
func.func @cs(%x: tensor<16x20xf32>, %y: tensor<20xf32>, %m: tensor<16x20xi1>) -> (tensor<16x20xf32>, tensor<16x20xi1>) {
  %c = tessera_graph.compare lt %x, %y : tensor<16x20xf32>, tensor<20xf32> -> tensor<16x20xi1>
  %s = tessera_graph.select %m, %x, %y : tensor<16x20xi1>, tensor<16x20xf32>, tensor<20xf32>
  return %s, %c : tensor<16x20xf32>, tensor<16x20xi1>
}
