// A batched matmul [4, 33, 300] x [4, 300, 20] -> [4, 33, 20] (attention-like
// heads), with a broadcast bias over the batch.  The tile groups split the
// batch (2 matrices each); each matrix is a BLIS nest with two K slices
// (KC = 256) and a 4-column remainder tile.
//
//   tessera-run examples/batched_matmul.mlir
func.func @heads(%q: tensor<4x33x300xf32>, %k: tensor<4x300x20xf32>,
                 %b: tensor<33x20xf32>) -> tensor<4x33x20xf32> {
  %s = tessera_graph.matmul %q, %k : tensor<4x33x300xf32>, tensor<4x300x20xf32> -> tensor<4x33x20xf32>
  %y = tessera_graph.add %s, %b : tensor<4x33x20xf32>, tensor<33x20xf32>
  return %y : tensor<4x33x20xf32>
}
