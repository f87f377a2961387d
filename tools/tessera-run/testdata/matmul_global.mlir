// x w on one device: the global result of spmd_partial_sums.mlir.
func.func @mm(%x: tensor<64x128xf32>, %w: tensor<128x48xf32>) -> tensor<64x48xf32> {
  %p = tessera_graph.matmul %x, %w : tensor<64x128xf32>, tensor<128x48xf32> -> tensor<64x48xf32>
  return %p : tensor<64x48xf32>
}
