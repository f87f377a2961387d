// Tensor-parallel MLP (the Megatron-LM split) on a mesh of 2 devices:
// y = relu(x W1 + b1) W2 + b2 with W1 split by columns and W2 by rows, so
// each device computes half of the hidden layer and a partial sum of y; one
// all_reduce adds the partial sums. Global sizes: batch 256, 512 -> 2048 -> 512.
//
// Types are what ONE device holds (SPMD); the shardings say how the local
// tensors make up the global ones (docs/spmd.md).
//
//   tessera-run examples/tp_mlp.mlir     # 2 cpu devices, verified per device
//   tessera-opt --tessera-spmd-stages examples/tp_mlp.mlir   # the stages and the plan
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

func.func @tp_mlp(
    %x: tensor<256x512xf32>,
    %w1: tensor<512x1024xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %b1: tensor<1024xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>},
    %w2: tensor<1024x512xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %b2: tensor<512xf32>)
    -> (tensor<256x512xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = ["tp"], reduce = []>}) {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<256x512xf32>, tensor<512x1024xf32> -> tensor<256x1024xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<256x1024xf32>, tensor<1024xf32>
  %h = tessera_graph.relu %h1 : tensor<256x1024xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<256x1024xf32>, tensor<1024x512xf32> -> tensor<256x512xf32>
  %y0 = tessera_graph.all_reduce sum %p over @mesh ["tp"] : tensor<256x512xf32> -> tensor<256x512xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<256x512xf32>, tensor<512xf32>
  return %y : tensor<256x512xf32>
}
