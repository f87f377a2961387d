// The attention backward (docs/autodiff.md, "Attention"): --tessera-grad
// writes the VJP of an attention chain as one tessera_graph.attention_grad,
// which the cpu backend runs block by block (flash_attention_grad: the
// scores recomputed from Q and K per block, no Sq x Skv matrix) and the
// GPU backends as matmuls and a softmax. Checked by tessera-run against the
// reference interpreter:
//
//   tessera-run examples/attention_grad.mlir --function heads_loss_grad
//   tessera-run examples/attention_grad.mlir --function odd_loss_grad --schedule "attn-block-kv=48"
//   TESSERA_BACKEND=vulkan tessera-run examples/attention_grad.mlir --function heads_loss_grad
//
// @heads_loss: sum(attention(Q, K, V) * R) over 4 causal heads of 96
// queries (head dim 32), the mask a select of -inf.
func.func private @heads_loss(%q: tensor<4x96x32xf32>, %kt: tensor<4x32x96xf32>, %v: tensor<4x96x32xf32>,
                              %r: tensor<4x96x32xf32>) -> tensor<1x1x1xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<4x96x32xf32>, tensor<4x32x96xf32> -> tensor<4x96x96xf32>
  %c = arith.constant dense<0.17677669529663687> : tensor<4x96x96xf32>
  %s1 = tessera_graph.mul %s0, %c : tensor<4x96x96xf32>, tensor<4x96x96xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<96x96xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<96x96xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<96x96xi32>, tensor<96x96xi32> -> tensor<96x96xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s2 = tessera_graph.select %keep, %s1, %ninf : tensor<96x96xi1>, tensor<4x96x96xf32>, tensor<f32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<4x96x96xf32>
  %o = tessera_graph.matmul %p, %v : tensor<4x96x96xf32>, tensor<4x96x32xf32> -> tensor<4x96x32xf32>
  %w = tessera_graph.mul %o, %r : tensor<4x96x32xf32>, tensor<4x96x32xf32>
  %l = tessera_graph.reduce sum %w dims = [0, 1, 2] order = pairwise : tensor<4x96x32xf32> -> tensor<1x1x1xf32>
  return %l : tensor<1x1x1xf32>
}
func.func private @heads_loss_grad(tensor<4x96x32xf32>, tensor<4x32x96xf32>, tensor<4x96x32xf32>, tensor<4x96x32xf32>)
    -> (tensor<1x1x1xf32>, tensor<4x96x32xf32>, tensor<4x32x96xf32>, tensor<4x96x32xf32>)
    attributes {tessera.grad_of = @heads_loss, tessera.wrt = [0, 1, 2]}

// @odd_loss: one head of 100 queries over 130 keys (cross lengths, causal
// from the top left), head dim 20, value dim 12: sizes that fill no
// register tile; the transformer block's additive mask.
func.func private @odd_loss(%q: tensor<100x20xf32>, %kt: tensor<20x130xf32>, %v: tensor<130x12xf32>,
                            %r: tensor<100x12xf32>) -> tensor<1x1xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<100x20xf32>, tensor<20x130xf32> -> tensor<100x130xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<100x130xf32>
  %ki = tessera_graph.iota dim = 1 : tensor<100x130xf32>
  %one = arith.constant dense<1.0> : tensor<100x130xf32>
  %big = arith.constant dense<-1.0e9> : tensor<100x130xf32>
  %d = tessera_graph.sub %ki, %qi : tensor<100x130xf32>, tensor<100x130xf32>
  %above = tessera_graph.relu %d : tensor<100x130xf32>
  %m = tessera_graph.min %above, %one : tensor<100x130xf32>, tensor<100x130xf32>
  %mask = tessera_graph.mul %m, %big : tensor<100x130xf32>, tensor<100x130xf32>
  %s1 = tessera_graph.add %s0, %mask : tensor<100x130xf32>, tensor<100x130xf32>
  %p = tessera_graph.softmax %s1 dim = 1 : tensor<100x130xf32>
  %o = tessera_graph.matmul %p, %v : tensor<100x130xf32>, tensor<130x12xf32> -> tensor<100x12xf32>
  %w = tessera_graph.mul %o, %r : tensor<100x12xf32>, tensor<100x12xf32>
  %l = tessera_graph.reduce sum %w dims = [0, 1] order = pairwise : tensor<100x12xf32> -> tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}
func.func private @odd_loss_grad(tensor<100x20xf32>, tensor<20x130xf32>, tensor<130x12xf32>, tensor<100x12xf32>)
    -> (tensor<1x1xf32>, tensor<100x20xf32>, tensor<20x130xf32>, tensor<130x12xf32>)
    attributes {tessera.grad_of = @odd_loss, tessera.wrt = [0, 1, 2]}

// @plain_loss: no mask, 3 heads of 37 queries over 53 keys, head dim 24,
// value dim 16, the scores divided by sqrt(24).
func.func private @plain_loss(%q: tensor<3x37x24xf32>, %kt: tensor<3x24x53xf32>, %v: tensor<3x53x16xf32>,
                              %r: tensor<3x37x16xf32>) -> tensor<1x1x1xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<3x37x24xf32>, tensor<3x24x53xf32> -> tensor<3x37x53xf32>
  %c = arith.constant dense<4.898979485566356> : tensor<3x37x53xf32>
  %s1 = tessera_graph.div %s0, %c : tensor<3x37x53xf32>, tensor<3x37x53xf32>
  %p = tessera_graph.softmax %s1 dim = 2 : tensor<3x37x53xf32>
  %o = tessera_graph.matmul %p, %v : tensor<3x37x53xf32>, tensor<3x53x16xf32> -> tensor<3x37x16xf32>
  %w = tessera_graph.mul %o, %r : tensor<3x37x16xf32>, tensor<3x37x16xf32>
  %l = tessera_graph.reduce sum %w dims = [0, 1, 2] order = pairwise : tensor<3x37x16xf32> -> tensor<1x1x1xf32>
  return %l : tensor<1x1x1xf32>
}
func.func private @plain_loss_grad(tensor<3x37x24xf32>, tensor<3x24x53xf32>, tensor<3x53x16xf32>, tensor<3x37x16xf32>)
    -> (tensor<1x1x1xf32>, tensor<3x37x24xf32>, tensor<3x24x53xf32>, tensor<3x53x16xf32>)
    attributes {tessera.grad_of = @plain_loss, tessera.wrt = [0, 1, 2]}
