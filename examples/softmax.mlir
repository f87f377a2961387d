// Row-wise, numerically stable softmax in Graph IR: p[i, :] = exp(x[i, :] - max) / sum.
//
//   TESSERA_BACKEND=cpu tessera-run examples/softmax.mlir   # compile, run, verify
//
// The cpu backend lowers `softmax` to three loops per row (max, exp and sum,
// scale by 1/sum); rows are independent, so tile groups split the rows.
func.func @softmax(%x: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %p = tessera_graph.softmax %x dim = 1 : tensor<512x1024xf32>
  return %p : tensor<512x1024xf32>
}
