// An op no dialect defines: named, with file:line:col, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0"; echo "exit code $?"' %s 2>&1 | FileCheck %s

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = tessera_graph.frobnicate %a : tensor<4xf32>
  return %b : tensor<4xf32>
}
// CHECK: unknown-op.mlir:5:8: error: custom op 'tessera_graph.frobnicate' is unknown
// CHECK: exit code 1
