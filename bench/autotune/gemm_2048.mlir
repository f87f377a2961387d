// A 2048^3 f32 GEMM in Graph IR: the GEMM of bench/autotune/run.sh
// (docs/autotune.md "Measured").
func.func @gemm(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %c : tensor<2048x2048xf32>
}
