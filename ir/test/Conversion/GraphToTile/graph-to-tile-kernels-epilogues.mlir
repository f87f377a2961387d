// Softmax and reduce tiles with fused epilogues (the GPU schedule keeps
// them, as on cpu): one row kernel each, the epilogue applied to the value
// before its store, no buffer for the softmax / reduce result.
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=f_k0_softmax --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.s.spv
// RUN: spirv-val --target-env vulkan1.1 %t.s.spv
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=f_k1_reduce --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.r.spv
// RUN: spirv-val --target-env vulkan1.1 %t.r.spv

// CHECK-LABEL: func.func @f(
// CHECK-NOT: memref.alloc
// CHECK: call @f_k0_softmax(%arg0, %arg2)
// CHECK-NEXT: call @f_k1_reduce(%arg0, %arg1, %arg3)
// CHECK-NEXT: return
// The softmax's quotient is rounded to its type (f32: nothing), scaled by
// the constant, cast to bf16 (round to nearest even on the bits), stored.
// CHECK-LABEL: func.func @f_k0_softmax(
// CHECK: %[[P:.*]] = arith.divf
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[P]], %cst
// CHECK: memref.store %{{.*}}, %arg1
// The pairwise reduce's result (lane 0) plus the bias, stored by lane 0.
// CHECK-LABEL: func.func @f_k1_reduce(
// CHECK: scf.if
// CHECK: %[[R:.*]] = memref.load
// CHECK: %[[B:.*]] = memref.load %arg1
// CHECK-NEXT: arith.addf %[[R]], %[[B]]
// CHECK-NEXT: memref.store %{{.*}}, %arg2
func.func @f(%x: tensor<16x64xf32>, %b: tensor<16xf32>) -> (tensor<16x64xbf16>, tensor<16xf32>) {
  %two = arith.constant dense<2.0> : tensor<16x64xf32>
  %s = tessera_graph.softmax %x dim = 1 : tensor<16x64xf32>
  %m = tessera_graph.mul %s, %two : tensor<16x64xf32>, tensor<16x64xf32>
  %c = tessera_graph.cast %m : tensor<16x64xf32> -> tensor<16x64xbf16>
  %r = tessera_graph.reduce sum %x dims = [1] order = pairwise : tensor<16x64xf32> -> tensor<16xf32>
  %y = tessera_graph.add %r, %b : tensor<16xf32>, tensor<16xf32>
  return %c, %y : tensor<16x64xbf16>, tensor<16xf32>
}
