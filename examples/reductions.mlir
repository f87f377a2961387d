// Reductions over any set of dims, in both association orders, on f32 and
// i32: the reduced elements of each output are taken in row-major order
// over the reduced dims, left to right (sequential) or as a balanced tree
// (pairwise), so results are the same run to run.
//
//   tessera-run examples/reductions.mlir
func.func @reductions(%a: tensor<4x6x8xf32>, %i: tensor<4x6x8xi32>)
    -> (tensor<6xf32>, tensor<4x8xf32>, tensor<f32>, tensor<8xi32>, tensor<4x6xi32>) {
  %r = tessera_graph.reduce sum %a dims = [0, 2] order = sequential : tensor<4x6x8xf32> -> tensor<6xf32>
  %m = tessera_graph.reduce max %a dims = [1] order = pairwise : tensor<4x6x8xf32> -> tensor<4x8xf32>
  %all = tessera_graph.reduce sum %a dims = [0, 1, 2] order = pairwise : tensor<4x6x8xf32> -> tensor<f32>
  %is = tessera_graph.reduce sum %i dims = [1, 0] order = sequential : tensor<4x6x8xi32> -> tensor<8xi32>
  %im = tessera_graph.reduce max %i dims = [2] order = pairwise : tensor<4x6x8xi32> -> tensor<4x6xi32>
  return %r, %m, %all, %is, %im : tensor<6xf32>, tensor<4x8xf32>, tensor<f32>, tensor<8xi32>, tensor<4x6xi32>
}

// Softmax along a dim other than the last (one element at a time: the
// elements of a column are not contiguous), and along the last.
func.func @softmax_dims(%a: tensor<4x6x8xf32>) -> (tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xbf16>) {
  %s0 = tessera_graph.softmax %a dim = 0 : tensor<4x6x8xf32>
  %s1 = tessera_graph.softmax %a dim = 1 : tensor<4x6x8xf32>
  %h = tessera_graph.cast %a : tensor<4x6x8xf32> -> tensor<4x6x8xbf16>
  %s2 = tessera_graph.softmax %h dim = 1 : tensor<4x6x8xbf16>
  return %s0, %s1, %s2 : tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xbf16>
}
