// Megatron's tensor-parallel self-attention written in the global view:
// global tensors, and the shardings of the arguments and the result only
// (Wq, Wk, Wv split by columns, Wo by rows over "tp"). The projections
// come out split by columns; the reshapes that make heads of them keep the
// split on the heads (a column block of the model dim is a block of whole
// heads), so every head's scores, causal mask, softmax and P V stay on the
// device that holds it; merging the heads back gives the columns Wo's rows
// contract with, and one all_reduce completes y -- the only collective,
// found by --tessera-shard-propagation (docs/spmd.md).
//
//   tessera-run examples/tp_attention_global.mlir                 # 2 cpu devices, verified
//   tessera-opt --tessera-shard-propagation examples/tp_attention_global.mlir   # every op's decision
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

func.func @tp_attention(
    %x: tensor<128x256xf32>,
    %wq: tensor<256x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %wk: tensor<256x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %wv: tensor<256x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %wo: tensor<256x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<128x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = ["tp"], reduce = []>})
    attributes {tessera.global_view} {
  // Projections: [S, D] x [D, H*dh], split by columns.
  %q0 = tessera_graph.matmul %x, %wq : tensor<128x256xf32>, tensor<256x256xf32> -> tensor<128x256xf32>
  %k0 = tessera_graph.matmul %x, %wk : tensor<128x256xf32>, tensor<256x256xf32> -> tensor<128x256xf32>
  %v0 = tessera_graph.matmul %x, %wv : tensor<128x256xf32>, tensor<256x256xf32> -> tensor<128x256xf32>
  // Heads: [S, H*dh] -> [S, H, dh] -> [H, S, dh] (K^T: [H, dh, S]).
  %q1 = tessera_graph.reshape %q0 : tensor<128x256xf32> -> tensor<128x4x64xf32>
  %q = tessera_graph.transpose %q1 perm = [1, 0, 2] : tensor<128x4x64xf32> -> tensor<4x128x64xf32>
  %k1 = tessera_graph.reshape %k0 : tensor<128x256xf32> -> tensor<128x4x64xf32>
  %kt = tessera_graph.transpose %k1 perm = [1, 2, 0] : tensor<128x4x64xf32> -> tensor<4x64x128xf32>
  %v1 = tessera_graph.reshape %v0 : tensor<128x256xf32> -> tensor<128x4x64xf32>
  %v = tessera_graph.transpose %v1 perm = [1, 0, 2] : tensor<128x4x64xf32> -> tensor<4x128x64xf32>
  // Causal attention per head.
  %s0 = tessera_graph.matmul %q, %kt : tensor<4x128x64xf32>, tensor<4x64x128xf32> -> tensor<4x128x128xf32>
  %scale = arith.constant dense<0.125> : tensor<f32>
  %s1 = tessera_graph.mul %s0, %scale : tensor<4x128x128xf32>, tensor<f32>
  %qi = tessera_graph.iota dim = 0 : tensor<128x128xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<128x128xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<128x128xi32>, tensor<128x128xi32> -> tensor<128x128xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s2 = tessera_graph.select %keep, %s1, %ninf : tensor<128x128xi1>, tensor<4x128x128xf32>, tensor<f32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<4x128x128xf32>
  %o = tessera_graph.matmul %p, %v : tensor<4x128x128xf32>, tensor<4x128x64xf32> -> tensor<4x128x64xf32>
  // Heads merged back: [H, S, dh] -> [S, H, dh] -> [S, H*dh], then Wo.
  %o1 = tessera_graph.transpose %o perm = [1, 0, 2] : tensor<4x128x64xf32> -> tensor<128x4x64xf32>
  %o2 = tessera_graph.reshape %o1 : tensor<128x4x64xf32> -> tensor<128x256xf32>
  %y = tessera_graph.matmul %o2, %wo : tensor<128x256xf32>, tensor<256x256xf32> -> tensor<128x256xf32>
  return %y : tensor<128x256xf32>
}
