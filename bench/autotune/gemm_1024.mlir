// A 1024^3 f32 GEMM in Graph IR: the GEMM of bench/autotune/run.sh
// (docs/autotune.md "Measured").
func.func @gemm(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %c : tensor<1024x1024xf32>
}
