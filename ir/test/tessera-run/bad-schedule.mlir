// --schedule takes --tessera-graph-to-schedule options: anything else is a
// clear error before anything is compiled, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --schedule "tile-q=3"; echo "exit code $?"' %s 2>&1 | FileCheck %s

func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
// One message, naming the options (MLIR's option parser printed its own
// "no such option tile-q" to stderr beside it), and a value of the wrong
// kind names the key.
// CHECK-NOT: no such option
// CHECK: schedule 'tile-q=3': --tessera-graph-to-schedule has no option 'tile-q'; its options are {{.*}}tile-m{{.*}}
// CHECK-NOT: no such option
// CHECK: exit code 1
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --schedule "tile-m=big"; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: schedule 'tile-m=big': tile-m takes a whole number (tile-m=64), not 'big'
// VALUE: exit code 1
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --schedule "fuse=True tile-m=8" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=OK
// OK: PASS
// OK: exit code 0
