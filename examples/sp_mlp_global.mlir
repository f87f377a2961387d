// A transformer's MLP sub-block with Megatron's sequence parallelism, in the
// global view, on a 2 x 2 mesh (dp x tp). Outside the tensor-parallel
// matmuls the rows (batch x sequence) are split over both axes at once --
// `dims = [["dp", "tp"], ""]`, one dim over several axes, the device's block
// being its coordinates taken row-major -- so the layernorm and the residual
// each run on a quarter of the rows instead of every tp device repeating
// them. W1 is split by columns and W2 by rows over tp, as in tp_mlp.
//
// --tessera-shard-propagation places it: the column-split matmul needs its
// rows over dp only, so the normalized activations are all-gathered over tp
// (cheaper than gathering W1); the row-split matmul's result is a partial
// sum over tp, which is reduce-scattered back onto rows over dp x tp where
// the residual meets it. One all_gather + one reduce_scatter, where the
// plain Megatron split has one all_reduce of twice the bytes and repeats
// the layernorm on every tp device.
//
//   tessera-run examples/sp_mlp_global.mlir                 # 4 cpu devices, verified
//   tessera-opt --tessera-shard-propagation examples/sp_mlp_global.mlir   # every op's decision
//   mpirun -np 4 tessera-run examples/sp_mlp_global.mlir    # one process per device
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]

func.func @sp_mlp(
    %x: tensor<512x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>},
    %gamma: tensor<256xf32>,
    %beta: tensor<256xf32>,
    %w1: tensor<256x1024xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w2: tensor<1024x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<512x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %n = tessera_graph.layernorm %x, %gamma, %beta : tensor<512x256xf32>, tensor<256xf32>, tensor<256xf32>
  %h0 = tessera_graph.matmul %n, %w1 : tensor<512x256xf32>, tensor<256x1024xf32> -> tensor<512x1024xf32>
  %h = tessera_graph.gelu %h0 : tensor<512x1024xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<512x1024xf32>, tensor<1024x256xf32> -> tensor<512x256xf32>
  %y = tessera_graph.add %p, %x : tensor<512x256xf32>, tensor<512x256xf32>
  return %y : tensor<512x256xf32>
}
