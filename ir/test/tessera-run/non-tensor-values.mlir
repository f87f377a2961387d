// A Graph IR function whose body makes an index or a scalar (here for a
// tensor.extract): the cpu backend says so; it aborted ("SmallVector unable
// to grow") or crashed when it gave the value a buffer.
// RUN: not tessera-compile %s --target cpu -o %t.tsp 2>&1 | FileCheck %s
// CHECK: cpu backend: 'arith.constant' produces a 'index': a Graph IR function computes on tensors only
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.extract %x[%c0, %c0] : tensor<4x8xf32>
  %s = tensor.splat %e : tensor<4x8xf32>
  %y = tessera_graph.add %x, %s : tensor<4x8xf32>, tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
