// The same Megatron self-attention as tp_attention_global.mlir, with the
// fused QKV projection of GPT-style checkpoints: one Wqkv [D, 3 D] split by
// columns, and q, k, v sliced out of its product. The slices cut the split
// dim (device 0 holds all of q and half of k), so --tessera-shard-propagation
// all-gathers the projection once (shared by the three slices) and each
// slice takes its device's columns again: the heads, their scores, softmax
// and P V stay split, and Wo's rows give the one all_reduce (docs/spmd.md,
// "Automatic sharding"). Two collectives: one all_gather, one all_reduce.
//
//   tessera-run examples/tp_attention_fused_qkv_global.mlir     # 2 cpu devices, verified
//   tessera-opt --tessera-shard-propagation examples/tp_attention_fused_qkv_global.mlir
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

func.func @tp_attention_fused_qkv(
    %x: tensor<128x256xf32>,
    %wqkv: tensor<256x768xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %wo: tensor<256x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<128x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = ["tp"], reduce = []>})
    attributes {tessera.global_view} {
  // The fused projection [S, D] x [D, 3 H*dh], split by columns, and q, k,
  // v as column slices of it.
  %qkv = tessera_graph.matmul %x, %wqkv : tensor<128x256xf32>, tensor<256x768xf32> -> tensor<128x768xf32>
  %q0 = tessera_graph.slice %qkv offsets = [0, 0] strides = [1, 1] : tensor<128x768xf32> -> tensor<128x256xf32>
  %k0 = tessera_graph.slice %qkv offsets = [0, 256] strides = [1, 1] : tensor<128x768xf32> -> tensor<128x256xf32>
  %v0 = tessera_graph.slice %qkv offsets = [0, 512] strides = [1, 1] : tensor<128x768xf32> -> tensor<128x256xf32>
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
