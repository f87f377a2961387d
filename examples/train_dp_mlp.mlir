// examples/train_mlp.mlir data-parallel over 2 devices: each device holds
// half of the batch (x and the targets sharded over "dp") and a replica of
// every weight; the loss is the mean of the devices' means. The global
// sizes and argument order are train_mlp's, so tessera-run generates the
// same inputs and the losses printed step by step are the single-device
// run's.
//
// --tessera-grad sees each replicated weight read by ops whose results
// differ between the devices: its gradient is a partial sum, and gets one
// all_reduce over "dp" (the data-parallel gradient all-reduce), so the
// replicas stay equal.
//
//   tessera-run examples/train_dp_mlp.mlir --iterations 100
//   tessera-opt --tessera-grad examples/train_dp_mlp.mlir   # 4 all_reduce for the gradients
tessera_graph.mesh @mesh axes = ["dp"] shape = [2]

func.func private @loss(%x: tensor<32x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>}, %t: tensor<32x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>}, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                        %w2: tensor<32x4xf32>, %b2: tensor<4xf32>) -> tensor<1x1xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<32x16xf32>, tensor<16x32xf32> -> tensor<32x32xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<32x32xf32>, tensor<32xf32>
  %h = tessera_graph.gelu %h1 : tensor<32x32xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<32x32xf32>, tensor<32x4xf32> -> tensor<32x4xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<32x4xf32>, tensor<4xf32>
  %e = tessera_graph.sub %y, %t : tensor<32x4xf32>, tensor<32x4xf32>
  %e2 = tessera_graph.mul %e, %e : tensor<32x4xf32>, tensor<32x4xf32>
  %ll = tessera_graph.reduce mean %e2 dims = [0, 1] order = pairwise : tensor<32x4xf32> -> tensor<1x1xf32>
  // the mean over the global batch: the mean of the 2 devices' means
  %ls = tessera_graph.all_reduce sum %ll over @mesh ["dp"] : tensor<1x1xf32> -> tensor<1x1xf32>
  %half = arith.constant dense<0.5> : tensor<1x1xf32>
  %l = tessera_graph.mul %ls, %half : tensor<1x1xf32>, tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}

// (the loss, then d loss / d W1, b1, W2, b2)
func.func private @loss_grad(tensor<32x16xf32>, tensor<32x4xf32>, tensor<16x32xf32>, tensor<32xf32>,
                             tensor<32x4xf32>, tensor<4xf32>)
    -> (tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>)
    attributes {tessera.grad_of = @loss, tessera.wrt = [2, 3, 4, 5]}

func.func @train_step(%x: tensor<32x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>}, %wt: tensor<16x4xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                      %w2: tensor<32x4xf32>, %b2: tensor<4xf32>)
    -> (tensor<1x1xf32>, tensor<16x32xf32> {tessera.update = 2}, tensor<32xf32> {tessera.update = 3},
        tensor<32x4xf32> {tessera.update = 4}, tensor<4xf32> {tessera.update = 5}) {
  %t0 = tessera_graph.matmul %x, %wt : tensor<32x16xf32>, tensor<16x4xf32> -> tensor<32x4xf32>
  %t = tessera_graph.tanh %t0 : tensor<32x4xf32>
  %l, %g1, %gb1, %g2, %gb2 = func.call @loss_grad(%x, %t, %w1, %b1, %w2, %b2)
      : (tensor<32x16xf32>, tensor<32x4xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>)
      -> (tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>)
  %lr = arith.constant dense<0.05> : tensor<1xf32>
  %u1 = tessera_graph.mul %g1, %lr : tensor<16x32xf32>, tensor<1xf32>
  %w1n = tessera_graph.sub %w1, %u1 : tensor<16x32xf32>, tensor<16x32xf32>
  %ub1 = tessera_graph.mul %gb1, %lr : tensor<32xf32>, tensor<1xf32>
  %b1n = tessera_graph.sub %b1, %ub1 : tensor<32xf32>, tensor<32xf32>
  %u2 = tessera_graph.mul %g2, %lr : tensor<32x4xf32>, tensor<1xf32>
  %w2n = tessera_graph.sub %w2, %u2 : tensor<32x4xf32>, tensor<32x4xf32>
  %ub2 = tessera_graph.mul %gb2, %lr : tensor<4xf32>, tensor<1xf32>
  %b2n = tessera_graph.sub %b2, %ub2 : tensor<4xf32>, tensor<4xf32>
  return %l, %w1n, %b1n, %w2n, %b2n : tensor<1x1xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x4xf32>, tensor<4xf32>
}
