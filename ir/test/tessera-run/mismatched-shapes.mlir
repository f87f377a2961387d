// A matmul whose contraction dims differ: the verifier names both, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0"; echo "exit code $?"' %s 2>&1 | FileCheck %s

func.func @f(%a: tensor<4x8xf32>, %b: tensor<7x4xf32>) -> tensor<4x4xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<4x8xf32>, tensor<7x4xf32> -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}
// CHECK: mismatched-shapes.mlir:5:8: error: 'tessera_graph.matmul' op contraction dimensions differ: lhs has K = 8, rhs has K = 7
// CHECK: exit code 1
