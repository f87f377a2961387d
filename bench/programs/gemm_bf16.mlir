// bf16 GEMM with f32 accumulation, rounded to bf16 once: the issue's
// gemm_bf16 measurement (docs/cuda.md, "Measured on a GPU"), compared on a
// GPU machine with torch.matmul (cuBLAS) on the same bf16 inputs.
//
//   tessera-run bench/programs/gemm_bf16.mlir --function gemm_bf16_4096 --iterations 10
// Small enough for --check (the reference interpreter runs on the host).
func.func @gemm_bf16_1024(%a: tensor<1024x1024xbf16>, %b: tensor<1024x1024xbf16>)
    -> tensor<1024x1024xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<1024x1024xbf16>, tensor<1024x1024xbf16> -> tensor<1024x1024xf32>
  %y = tessera_graph.cast %c : tensor<1024x1024xf32> -> tensor<1024x1024xbf16>
  return %y : tensor<1024x1024xbf16>
}

func.func @gemm_bf16_4096(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>)
    -> tensor<4096x4096xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xf32>
  %y = tessera_graph.cast %c : tensor<4096x4096xf32> -> tensor<4096x4096xbf16>
  return %y : tensor<4096x4096xbf16>
}

func.func @gemm_bf16_8192(%a: tensor<8192x8192xbf16>, %b: tensor<8192x8192xbf16>)
    -> tensor<8192x8192xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<8192x8192xbf16>, tensor<8192x8192xbf16> -> tensor<8192x8192xf32>
  %y = tessera_graph.cast %c : tensor<8192x8192xf32> -> tensor<8192x8192xbf16>
  return %y : tensor<8192x8192xbf16>
}
