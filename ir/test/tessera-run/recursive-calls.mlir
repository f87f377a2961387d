// Graph IR functions that call each other in a cycle: every call is
// inlined, so recursion is refused with the cycle named (it grew the
// module each inlining round, gigabytes in seconds, until killed).
// RUN: not tessera-compile %s --target cpu -o %t.tsp 2>&1 | FileCheck %s
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=RUNS
// CHECK: recursive-calls.mlir:15:8: error: 'func.call' op calls between Graph IR functions form a cycle (@f -> @g -> @f)
// RUNS: calls between Graph IR functions form a cycle
// RUNS: exit code 1
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = func.call @g(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
func.func private @g(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tessera_graph.relu %x : tensor<4x8xf32>
  %y = func.call @f(%r) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
