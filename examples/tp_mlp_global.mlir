// examples/tp_mlp.mlir written in the global view: global tensors, and the
// shardings of the arguments and the result only (the Megatron split: W1
// and b1 by columns, W2 by rows over "tp"). --tessera-shard-propagation
// decides the rest: the hidden layer stays split by columns, the second
// matmul contracts over the split dim, so its result is a partial sum, and
// one all_reduce completes y before b2 is added -- the collective
// tp_mlp.mlir writes by hand, found by the pass.
//
//   tessera-run examples/tp_mlp_global.mlir                 # 2 cpu devices, verified
//   tessera-opt --tessera-shard-propagation examples/tp_mlp_global.mlir   # every op's decision
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

func.func @tp_mlp(
    %x: tensor<256x512xf32>,
    %w1: tensor<512x2048xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %b1: tensor<2048xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>},
    %w2: tensor<2048x512xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %b2: tensor<512xf32>)
    -> (tensor<256x512xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = ["tp"], reduce = []>})
    attributes {tessera.global_view} {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<256x512xf32>, tensor<512x2048xf32> -> tensor<256x2048xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<256x2048xf32>, tensor<2048xf32>
  %h = tessera_graph.relu %h1 : tensor<256x2048xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<256x2048xf32>, tensor<2048x512xf32> -> tensor<256x512xf32>
  %y = tessera_graph.add %p, %b2 : tensor<256x512xf32>, tensor<512xf32>
  return %y : tensor<256x512xf32>
}
