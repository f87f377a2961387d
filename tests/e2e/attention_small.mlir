// Attention without layouts: O = softmax(Q Kt * 0.25) V, Q [48x16],
// Kt [16x80] (K transposed, row-major), V [80x16].
func.func @attention_small(%q: tensor<48x16xf32>, %kt: tensor<16x80xf32>,
                           %v: tensor<80x16xf32>) -> tensor<48x16xf32> {
  %scale = arith.constant dense<0.25> : tensor<80xf32>
  %s0 = tessera_graph.matmul %q, %kt : tensor<48x16xf32>, tensor<16x80xf32> -> tensor<48x80xf32>
  %s = tessera_graph.mul %s0, %scale : tensor<48x80xf32>, tensor<80xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<48x80xf32>
  %o = tessera_graph.matmul %p, %v : tensor<48x80xf32>, tensor<80x16xf32> -> tensor<48x16xf32>
  return %o : tensor<48x16xf32>
}
