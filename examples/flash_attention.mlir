// Attention in Graph IR: O = softmax(Q K^T / sqrt(d)) V, sequence 256, head dim 64.
//
//   TESSERA_BACKEND=cpu tessera-run examples/flash_attention.mlir
//
// K^T without a transpose op: the argument %kt is K^T in col_major layout,
// whose physical order is exactly K [256x64] row-major; the convert_layout
// to row_major materialises K^T.  1/sqrt(64) = 0.125 is a splat constant.
//
// On the cpu backend --tessera-graph-to-schedule rewrites the chain into one
// tessera_schedule.flash_attention (blocks of 64 queries x 64 keys, scale
// 0.125, K taken straight from %kt: the convert_layout disappears), and the
// kernel computes it in the FlashAttention form: per block of queries a
// running max, a running sum and an O accumulator, updated key block by key
// block with an online softmax.  The 256x256 score matrix is never formed.
// See docs/ir.md, "Attention".
func.func @attention(%q: tensor<256x64xf32>,
                     %kt: tensor<64x256xf32, #tessera_graph.layout<col_major>>,
                     %v: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %scale = arith.constant dense<0.125> : tensor<256xf32>
  %k_t = tessera_graph.convert_layout %kt : tensor<64x256xf32, #tessera_graph.layout<col_major>> -> tensor<64x256xf32>
  %s0 = tessera_graph.matmul %q, %k_t : tensor<256x64xf32>, tensor<64x256xf32> -> tensor<256x256xf32>
  %s = tessera_graph.mul %s0, %scale : tensor<256x256xf32>, tensor<256xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<256x256xf32>
  %o = tessera_graph.matmul %p, %v : tensor<256x256xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %o : tensor<256x64xf32>
}
