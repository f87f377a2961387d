// One Adam step of a data-parallel linear layer in the global view, with
// the optimizer's moments split over "dp" (ZeRO stage 1: each device keeps
// the moments of its rows of W). The batch (x and the output gradient dy)
// is split over dp, W is replicated.
//
// --tessera-shard-propagation places it: the weight gradient x^T dy is a
// partial sum over dp (the transpose keeps x split); where it meets the
// split moments it is reduce-scattered (half the bytes of an all_reduce);
// every update term is computed on the device's rows, and the update is
// all-gathered once and subtracted from W on every device (the search's
// placement; the rules' own has W take its rows locally and all-gathers the
// new W: the same bytes, more ops). One reduce_scatter + one all_gather, where a
// replicated optimizer state would need one all_reduce and every device
// would update all of W.
//
//   tessera-run examples/dp_adam_global.mlir                 # 2 cpu devices, verified
//   tessera-opt --tessera-shard-propagation examples/dp_adam_global.mlir   # every op's decision
tessera_graph.mesh @mesh axes = ["dp"] shape = [2]

func.func @adam_step(
    %x: tensor<64x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %dy: tensor<64x128xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %w: tensor<256x128xf32>,
    %m: tensor<256x128xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %v: tensor<256x128xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>})
    -> (tensor<256x128xf32>,
        tensor<256x128xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
        tensor<256x128xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %xt = tessera_graph.transpose %x perm = [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
  %g = tessera_graph.matmul %xt, %dy : tensor<256x64xf32>, tensor<64x128xf32> -> tensor<256x128xf32>
  %beta1 = arith.constant dense<0.9> : tensor<1xf32>
  %one_minus_beta1 = arith.constant dense<0.1> : tensor<1xf32>
  %beta2 = arith.constant dense<0.999> : tensor<1xf32>
  %one_minus_beta2 = arith.constant dense<0.001> : tensor<1xf32>
  %eps = arith.constant dense<1.0e-8> : tensor<1xf32>
  %lr = arith.constant dense<0.001> : tensor<1xf32>
  // m' = beta1 m + (1 - beta1) g
  %m1 = tessera_graph.mul %m, %beta1 : tensor<256x128xf32>, tensor<1xf32>
  %g1 = tessera_graph.mul %g, %one_minus_beta1 : tensor<256x128xf32>, tensor<1xf32>
  %mn = tessera_graph.add %m1, %g1 : tensor<256x128xf32>, tensor<256x128xf32>
  // v' = beta2 |v| + (1 - beta2) g^2 (|v|: the example's inputs are random)
  %va = tessera_graph.abs %v : tensor<256x128xf32>
  %v1 = tessera_graph.mul %va, %beta2 : tensor<256x128xf32>, tensor<1xf32>
  %gg = tessera_graph.mul %g, %g : tensor<256x128xf32>, tensor<256x128xf32>
  %g2 = tessera_graph.mul %gg, %one_minus_beta2 : tensor<256x128xf32>, tensor<1xf32>
  %vn = tessera_graph.add %v1, %g2 : tensor<256x128xf32>, tensor<256x128xf32>
  // W' = W - lr m' / (sqrt(v') + eps)
  %r = tessera_graph.sqrt %vn : tensor<256x128xf32>
  %d = tessera_graph.add %r, %eps : tensor<256x128xf32>, tensor<1xf32>
  %s = tessera_graph.div %mn, %d : tensor<256x128xf32>, tensor<256x128xf32>
  %u = tessera_graph.mul %s, %lr : tensor<256x128xf32>, tensor<1xf32>
  %wn = tessera_graph.sub %w, %u : tensor<256x128xf32>, tensor<256x128xf32>
  return %wn, %mn, %vn : tensor<256x128xf32>, tensor<256x128xf32>, tensor<256x128xf32>
}
