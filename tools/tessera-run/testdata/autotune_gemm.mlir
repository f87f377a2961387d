// A small GEMM for ctest tessera_run.autotune (tools/tessera-run/autotune_test.sh).
func.func @gemm(%a: tensor<64x96xf32>, %b: tensor<96x80xf32>) -> tensor<64x80xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<64x96xf32>, tensor<96x80xf32> -> tensor<64x80xf32>
  return %c : tensor<64x80xf32>
}
