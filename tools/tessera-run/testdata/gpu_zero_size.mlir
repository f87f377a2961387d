// A reduce over a dim of length 0: the GPU lowering divided by zero
// (SIGFPE) sizing its kernel; now a diagnostic at the op, exit 1.
func.func @w(%x: tensor<4x0xf32>) -> tensor<4xf32> {
  %y = tessera_graph.reduce sum %x dims = [1] order = pairwise : tensor<4x0xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
