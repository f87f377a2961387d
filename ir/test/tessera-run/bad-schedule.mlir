// --schedule takes --tessera-graph-to-schedule options: anything else is a
// clear error before anything is compiled, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --schedule "tile-q=3"; echo "exit code $?"' %s 2>&1 | FileCheck %s

func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
// CHECK: no such option tile-q
// CHECK: schedule 'tile-q=3' is not a list of --tessera-graph-to-schedule options
// CHECK: exit code 1
