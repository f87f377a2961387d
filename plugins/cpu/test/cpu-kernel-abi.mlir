// RUN: tessera-opt %s --tessera-cpu-graph-pipeline | FileCheck %s

// The exported entry point reads the launch context (tessera/cpu_kernel.h)
// and calls the internal kernel.
// CHECK: llvm.func @tessera_kernel_scale(%{{.*}}: !llvm.ptr<i8>)
// CHECK: llvm.call @scale
// CHECK: llvm.func internal @scale
func.func @scale(%x: tensor<16x16xf32>, %y: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %r = tessera_graph.mul %x, %y : tensor<16x16xf32>, tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
