// The first result of examples/spmd_collectives.mlir computed on one device
// from the global x [128, 128] and w [128, 128] (tests/tessera_run_spmd.sh).
func.func @first(%x: tensor<128x128xf32>, %w: tensor<128x128xf32>, %bias: tensor<128xf32>) -> tensor<128x128xf32> {
  %h = tessera_graph.matmul %x, %w : tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
  %b = tessera_graph.add %h, %bias : tensor<128x128xf32>, tensor<128xf32>
  %r = tessera_graph.relu %b : tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
