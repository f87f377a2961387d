// A valid Graph IR program with an op the GPU lowering does not handle (a
// tensor constant that is not a splat: kernels inline only splats): on
// vulkan, tessera-run must print a diagnostic naming the op and the
// backend and exit 1 (ctest example.ir.vulkan.graph_not_lowered).
func.func @add_table(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = tessera_graph.add %x, %t : tensor<4xf32>, tensor<4xf32>
  return %y : tensor<4xf32>
}
