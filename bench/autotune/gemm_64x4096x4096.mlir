// A skinny f32 GEMM (64 rows: a batch of activations through a 4096x4096
// layer), where the cpu target's default tiles fit worse than on a square
// GEMM: bench/autotune/run.sh (docs/autotune.md "Measured").
func.func @gemm(%a: tensor<64x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<64x4096xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<64x4096xf32>, tensor<4096x4096xf32> -> tensor<64x4096xf32>
  return %c : tensor<64x4096xf32>
}
