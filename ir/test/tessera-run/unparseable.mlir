// A file that is not MLIR: the parser's diagnostic with file:line:col, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0"; echo "exit code $?"' %s 2>&1 | FileCheck %s

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = tessera_graph.add %a, %a : tensor<4xf32>, tensor<4xf32>
  return %b tensor<4xf32>
}
// CHECK: unparseable.mlir:6:12: error: expected ':'
// CHECK-NOT: Segmentation
// CHECK: exit code 1
