// Attention whose query block (--schedule "attention=1 attn-block-q=300")
// has more rows than the GPU kernel has lanes (256): the online-softmax
// statistics are kept by lanes looping over the rows (rows 256.. used to be
// left uninitialized: inf).
func.func @att(%q: tensor<300x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<8x4xf32>) -> tensor<300x4xf32> {
  %s = tessera_graph.matmul %q, %kt : tensor<300x4xf32>, tensor<4x8xf32> -> tensor<300x8xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<300x8xf32>
  %o = tessera_graph.matmul %p, %v : tensor<300x8xf32>, tensor<8x4xf32> -> tensor<300x4xf32>
  return %o : tensor<300x4xf32>
}
