// A pad of a rank-0 tensor (no dims, no padding) is the element itself; it
// crashed every pipeline (an scf.if built on no condition).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline -o /dev/null
// CHECK: PASS
// CHECK: exit code 0
func.func @f(%a: tensor<f32>) -> tensor<f32> {
  %r = tessera_graph.pad %a low = [] high = [] value = 1.0 : tensor<f32> -> tensor<f32>
  return %r : tensor<f32>
}
