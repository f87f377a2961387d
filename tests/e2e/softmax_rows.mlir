// Softmax over rows of an odd length (100 is no multiple of a vector) on
// inputs large enough (+-30, set by the test) that a missing max
// subtraction overflows exp.
func.func @softmax_rows(%x: tensor<33x100xf32>) -> tensor<33x100xf32> {
  %y = tessera_graph.softmax %x dim = 1 : tensor<33x100xf32>
  return %y : tensor<33x100xf32>
}
