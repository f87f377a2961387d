// examples/train_mlp.mlir split tensor-parallel over 2 devices (the
// Megatron split of examples/tp_mlp.mlir): W1 and b1 by columns, W2 by
// rows; one all_reduce completes y. The global sizes, the argument order
// and hence tessera-run's generated inputs are train_mlp's, so the losses
// printed step by step are the single-device run's (up to the order of
// the f32 sums the all_reduce splits).
//
// --tessera-grad transposes the all_reduce to the identity and keeps every
// weight gradient local: W1, b1 and W2 are sharded and each device owns
// its part exactly; b2 is read after the all_reduce by the replicated
// values only. The backward adds no collective.
//
//   tessera-run examples/train_tp_mlp.mlir --iterations 100
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

func.func private @loss(%x: tensor<64x16xf32>, %t: tensor<64x4xf32>,
    %w1: tensor<16x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %b1: tensor<16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>},
    %w2: tensor<16x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %b2: tensor<4xf32>) -> tensor<1x1xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<64x16xf32>, tensor<16x16xf32> -> tensor<64x16xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<64x16xf32>, tensor<16xf32>
  %h = tessera_graph.gelu %h1 : tensor<64x16xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<64x16xf32>, tensor<16x4xf32> -> tensor<64x4xf32>
  %y0 = tessera_graph.all_reduce sum %p over @mesh ["tp"] : tensor<64x4xf32> -> tensor<64x4xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<64x4xf32>, tensor<4xf32>
  %e = tessera_graph.sub %y, %t : tensor<64x4xf32>, tensor<64x4xf32>
  %e2 = tessera_graph.mul %e, %e : tensor<64x4xf32>, tensor<64x4xf32>
  %l = tessera_graph.reduce mean %e2 dims = [0, 1] order = pairwise : tensor<64x4xf32> -> tensor<1x1xf32>
  return %l : tensor<1x1xf32>
}

func.func private @loss_grad(tensor<64x16xf32>, tensor<64x4xf32>, tensor<16x16xf32>, tensor<16xf32>,
                             tensor<16x4xf32>, tensor<4xf32>)
    -> (tensor<1x1xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>)
    attributes {tessera.grad_of = @loss, tessera.wrt = [2, 3, 4, 5]}

func.func @train_step(%x: tensor<64x16xf32>, %wt: tensor<16x4xf32>,
    %w1: tensor<16x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %b1: tensor<16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>},
    %w2: tensor<16x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %b2: tensor<4xf32>)
    -> (tensor<1x1xf32>,
        tensor<16x16xf32> {tessera.update = 2, tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
        tensor<16xf32> {tessera.update = 3, tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>},
        tensor<16x4xf32> {tessera.update = 4, tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
        tensor<4xf32> {tessera.update = 5}) {
  %t0 = tessera_graph.matmul %x, %wt : tensor<64x16xf32>, tensor<16x4xf32> -> tensor<64x4xf32>
  %t = tessera_graph.tanh %t0 : tensor<64x4xf32>
  %l, %g1, %gb1, %g2, %gb2 = func.call @loss_grad(%x, %t, %w1, %b1, %w2, %b2)
      : (tensor<64x16xf32>, tensor<64x4xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>)
      -> (tensor<1x1xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>)
  %lr = arith.constant dense<0.05> : tensor<1xf32>
  %u1 = tessera_graph.mul %g1, %lr : tensor<16x16xf32>, tensor<1xf32>
  %w1n = tessera_graph.sub %w1, %u1 : tensor<16x16xf32>, tensor<16x16xf32>
  %ub1 = tessera_graph.mul %gb1, %lr : tensor<16xf32>, tensor<1xf32>
  %b1n = tessera_graph.sub %b1, %ub1 : tensor<16xf32>, tensor<16xf32>
  %u2 = tessera_graph.mul %g2, %lr : tensor<16x4xf32>, tensor<1xf32>
  %w2n = tessera_graph.sub %w2, %u2 : tensor<16x4xf32>, tensor<16x4xf32>
  %ub2 = tessera_graph.mul %gb2, %lr : tensor<4xf32>, tensor<1xf32>
  %b2n = tessera_graph.sub %b2, %ub2 : tensor<4xf32>, tensor<4xf32>
  return %l, %w1n, %b1n, %w2n, %b2n : tensor<1x1xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>
}
