// Attention, sequence 512, head dim 64, K^T given row-major and the score
// divided by sqrt(d) = 8:
//
//   TESSERA_BACKEND=cpu tessera-run examples/flash_attention_512.mlir
//
// --tessera-graph-to-schedule turns the chain into one
// tessera_schedule.flash_attention (blocks of 64 queries x 64 keys); the
// cpu kernel reads K^T rows directly (see docs/ir.md, "Attention").
func.func @attention512(%q: tensor<512x64xf32>, %kt: tensor<64x512xf32>,
                        %v: tensor<512x64xf32>) -> tensor<512x64xf32> {
  %d = arith.constant dense<8.0> : tensor<512x512xf32>
  %s0 = tessera_graph.matmul %q, %kt : tensor<512x64xf32>, tensor<64x512xf32> -> tensor<512x512xf32>
  %s = tessera_graph.div %s0, %d : tensor<512x512xf32>, tensor<512x512xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<512x512xf32>
  %o = tessera_graph.matmul %p, %v : tensor<512x512xf32>, tensor<512x64xf32> -> tensor<512x64xf32>
  return %o : tensor<512x64xf32>
}
