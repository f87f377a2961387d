// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=f_k1_elementwise | FileCheck %s --check-prefix=KEEP
// RUN: not tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=nope 2>&1 | FileCheck %s --check-prefix=BAD

// The launch plan (the function rewritten on memrefs) goes; the kernels
// stay, ready for a Tile IR compiler on their own.
// CHECK-NOT: tessera.launch_plan
// CHECK-DAG: func.func @f_k0_gemm(
// CHECK-DAG: func.func @f_k1_elementwise(
// keep=NAME keeps that kernel only (one kernel per SPIR-V module).
// KEEP-NOT: tessera.launch_plan
// KEEP-NOT: @f_k0_gemm
// KEEP: func.func @f_k1_elementwise(
// KEEP-NOT: @f_k0_gemm
// BAD: error: tessera-strip-launch-plans: no kernel named 'nope'
func.func @f(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>) {
  %c = tessera_graph.matmul %a, %b : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  %e = tessera_graph.exp %c : tensor<64x16xf32>
  return %c, %e : tensor<64x16xf32>, tensor<64x16xf32>
}
