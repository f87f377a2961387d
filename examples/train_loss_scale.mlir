// Loss scaling with overflow detection (docs/autodiff.md, "Loss scaling"):
// the MLP of train_mlp.mlir, whose gradient declaration asks for a loss
// scale (tessera.loss_scale: the loss's cotangent is S, every gradient is
// divided by S at the end) and for the finite flag (a last result
// tensor<1xi1>: every gradient finite, on every device). The step returns
// the flag marked {tessera.step_ok}: when it is false, tessera-run does
// not apply the step's updates and says the step was skipped.
//
//   tessera-run examples/train_loss_scale.mlir --function train_step --iterations 20
//       # S = 1024: no overflow, the loss falls as in train_mlp.mlir
//   tessera-run examples/train_loss_scale.mlir --function train_step_overflow --iterations 5
//       # S = 3e38: the scaled cotangents overflow f32, every step is skipped,
//       # the weights (and the loss) stay as they were
func.func private @loss(%x: tensor<64x16xf32>, %t: tensor<64x4xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                        %w2: tensor<32x4xf32>, %b2: tensor<4xf32>) -> tensor<1x1xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<64x16xf32>, tensor<16x32xf32> -> tensor<64x32xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<64x32xf32>, tensor<32xf32>
  %h = tessera_graph.gelu %h1 : tensor<64x32xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<64x32xf32>, tensor<32x4xf32> -> tensor<64x4xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<64x4xf32>, tensor<4xf32>
  %e = tessera_graph.sub %y, %t : tensor<64x4xf32>, tensor<64x4xf32>
  %e2 = tessera_graph.mul %e, %e : tensor<64x4xf32>, tensor<64x4xf32>
  %l = tessera_graph.reduce mean %e2 dims = [0, 1] order = pairwise : tensor<64x4xf32> -> tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}

func.func private @loss_grad(tensor<64x16xf32>, tensor<64x4xf32>, tensor<16x32xf32>, tensor<32xf32>,
                             tensor<32x4xf32>, tensor<4xf32>)
    -> (tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<1xi1>)
    attributes {tessera.grad_of = @loss, tessera.wrt = [2, 3, 4, 5], tessera.loss_scale = 1024.0}

func.func @train_step(%x: tensor<64x16xf32>, %wt: tensor<16x4xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                      %w2: tensor<32x4xf32>, %b2: tensor<4xf32>)
    -> (tensor<1x1xf32>, tensor<16x32xf32> {tessera.update = 2}, tensor<32xf32> {tessera.update = 3},
        tensor<32x4xf32> {tessera.update = 4}, tensor<4xf32> {tessera.update = 5}, tensor<1xi1> {tessera.step_ok}) {
  %t0 = tessera_graph.matmul %x, %wt : tensor<64x16xf32>, tensor<16x4xf32> -> tensor<64x4xf32>
  %t = tessera_graph.tanh %t0 : tensor<64x4xf32>
  %l, %g1, %gb1, %g2, %gb2, %ok = func.call @loss_grad(%x, %t, %w1, %b1, %w2, %b2)
      : (tensor<64x16xf32>, tensor<64x4xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>)
      -> (tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<1xi1>)
  %lr = arith.constant dense<0.05> : tensor<1xf32>
  %u1 = tessera_graph.mul %g1, %lr : tensor<16x32xf32>, tensor<1xf32>
  %w1n = tessera_graph.sub %w1, %u1 : tensor<16x32xf32>, tensor<16x32xf32>
  %ub1 = tessera_graph.mul %gb1, %lr : tensor<32xf32>, tensor<1xf32>
  %b1n = tessera_graph.sub %b1, %ub1 : tensor<32xf32>, tensor<32xf32>
  %u2 = tessera_graph.mul %g2, %lr : tensor<32x4xf32>, tensor<1xf32>
  %w2n = tessera_graph.sub %w2, %u2 : tensor<32x4xf32>, tensor<32x4xf32>
  %ub2 = tessera_graph.mul %gb2, %lr : tensor<4xf32>, tensor<1xf32>
  %b2n = tessera_graph.sub %b2, %ub2 : tensor<4xf32>, tensor<4xf32>
  return %l, %w1n, %b1n, %w2n, %b2n, %ok : tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<1xi1>
}

func.func private @loss_grad_overflow(tensor<64x16xf32>, tensor<64x4xf32>, tensor<16x32xf32>, tensor<32xf32>,
                             tensor<32x4xf32>, tensor<4xf32>)
    -> (tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<1xi1>)
    attributes {tessera.grad_of = @loss, tessera.wrt = [2, 3, 4, 5], tessera.loss_scale = 3.0e38}

func.func @train_step_overflow(%x: tensor<64x16xf32>, %wt: tensor<16x4xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                      %w2: tensor<32x4xf32>, %b2: tensor<4xf32>)
    -> (tensor<1x1xf32>, tensor<16x32xf32> {tessera.update = 2}, tensor<32xf32> {tessera.update = 3},
        tensor<32x4xf32> {tessera.update = 4}, tensor<4xf32> {tessera.update = 5}, tensor<1xi1> {tessera.step_ok}) {
  %t0 = tessera_graph.matmul %x, %wt : tensor<64x16xf32>, tensor<16x4xf32> -> tensor<64x4xf32>
  %t = tessera_graph.tanh %t0 : tensor<64x4xf32>
  %l, %g1, %gb1, %g2, %gb2, %ok = func.call @loss_grad_overflow(%x, %t, %w1, %b1, %w2, %b2)
      : (tensor<64x16xf32>, tensor<64x4xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>)
      -> (tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<1xi1>)
  %lr = arith.constant dense<0.05> : tensor<1xf32>
  %u1 = tessera_graph.mul %g1, %lr : tensor<16x32xf32>, tensor<1xf32>
  %w1n = tessera_graph.sub %w1, %u1 : tensor<16x32xf32>, tensor<16x32xf32>
  %ub1 = tessera_graph.mul %gb1, %lr : tensor<32xf32>, tensor<1xf32>
  %b1n = tessera_graph.sub %b1, %ub1 : tensor<32xf32>, tensor<32xf32>
  %u2 = tessera_graph.mul %g2, %lr : tensor<32x4xf32>, tensor<1xf32>
  %w2n = tessera_graph.sub %w2, %u2 : tensor<32x4xf32>, tensor<32x4xf32>
  %ub2 = tessera_graph.mul %gb2, %lr : tensor<4xf32>, tensor<1xf32>
  %b2n = tessera_graph.sub %b2, %ub2 : tensor<4xf32>, tensor<4xf32>
  return %l, %w1n, %b1n, %w2n, %b2n, %ok : tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>, tensor<1xi1>
}
