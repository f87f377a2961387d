// The global computation of examples/tp_mlp.mlir on one device (the same
// weights unsplit): tests/tessera_run_spmd.sh checks that the SPMD program's
// assembled global result equals this one's.
func.func @mlp(%x: tensor<256x512xf32>, %w1: tensor<512x2048xf32>, %b1: tensor<2048xf32>,
               %w2: tensor<2048x512xf32>, %b2: tensor<512xf32>) -> tensor<256x512xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<256x512xf32>, tensor<512x2048xf32> -> tensor<256x2048xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<256x2048xf32>, tensor<2048xf32>
  %h = tessera_graph.relu %h1 : tensor<256x2048xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<256x2048xf32>, tensor<2048x512xf32> -> tensor<256x512xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<256x512xf32>, tensor<512xf32>
  return %y : tensor<256x512xf32>
}
