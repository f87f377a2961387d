// bf16 attention over heads, causal (a decoder's): on cuda sm_90a one
// warpgroup kernel (flash_attention {mma = "wgmma"}, docs/cuda.md
// "Attention on sm_90a"); `--schedule wgmma-attention=0` keeps the
// unfused form (Q K^T GEMM, the mask, softmax, P V GEMM) to compare with
// in the same run (scripts/gpu-check.sh).  The scores, softmax and output
// are f32 in the fused kernel, so its results are at least as close to the
// reference as the unfused program's (which rounds S and P to bf16).
//
//   tessera-run bench/programs/attention_bf16.mlir --function attention_bf16_2048 --iterations 10

// Small enough for --check (the reference interpreter runs on the host).
func.func @attention_bf16_512(%q: tensor<4x512x64xbf16>, %kt: tensor<4x64x512xbf16>, %v: tensor<4x512x64xbf16>)
    -> tensor<4x512x64xbf16> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<4x512x64xbf16>, tensor<4x64x512xbf16> -> tensor<4x512x512xbf16>
  %scale = arith.constant dense<0.125> : tensor<4x512x512xbf16>
  %s1 = tessera_graph.mul %s0, %scale : tensor<4x512x512xbf16>, tensor<4x512x512xbf16>
  %qi = tessera_graph.iota dim = 0 : tensor<512x512xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<512x512xi32>
  %ok = tessera_graph.compare le %ki, %qi : tensor<512x512xi32>, tensor<512x512xi32> -> tensor<512x512xi1>
  %ninf = arith.constant dense<0xFF80> : tensor<bf16>
  %s2 = tessera_graph.select %ok, %s1, %ninf : tensor<512x512xi1>, tensor<4x512x512xbf16>, tensor<bf16> -> tensor<4x512x512xbf16>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<4x512x512xbf16>
  %o = tessera_graph.matmul %p, %v : tensor<4x512x512xbf16>, tensor<4x512x64xbf16> -> tensor<4x512x64xbf16>
  return %o : tensor<4x512x64xbf16>
}

// 32 heads (a batch of heads) of 2048 queries, head dim 128:
// 4 * 32 * 2048^2 * 128 / 2 = 34.4 GFLOP (causal: half the blocks).  A
// causal mask is recognized by evaluating it row by row (up to 8192 x 8192).
func.func @attention_bf16_2048(%q: tensor<32x2048x128xbf16>, %kt: tensor<32x128x2048xbf16>,
                               %v: tensor<32x2048x128xbf16>) -> tensor<32x2048x128xbf16> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<32x2048x128xbf16>, tensor<32x128x2048xbf16> -> tensor<32x2048x2048xbf16>
  %scale = arith.constant dense<0.08838834764> : tensor<32x2048x2048xbf16>
  %s1 = tessera_graph.mul %s0, %scale : tensor<32x2048x2048xbf16>, tensor<32x2048x2048xbf16>
  %qi = tessera_graph.iota dim = 0 : tensor<2048x2048xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<2048x2048xi32>
  %ok = tessera_graph.compare le %ki, %qi : tensor<2048x2048xi32>, tensor<2048x2048xi32> -> tensor<2048x2048xi1>
  %ninf = arith.constant dense<0xFF80> : tensor<bf16>
  %s2 = tessera_graph.select %ok, %s1, %ninf : tensor<2048x2048xi1>, tensor<32x2048x2048xbf16>, tensor<bf16> -> tensor<32x2048x2048xbf16>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<32x2048x2048xbf16>
  %o = tessera_graph.matmul %p, %v : tensor<32x2048x2048xbf16>, tensor<32x2048x128xbf16> -> tensor<32x2048x128xbf16>
  return %o : tensor<32x2048x128xbf16>
}
