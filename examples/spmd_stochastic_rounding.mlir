// Stochastic rounding in an SPMD program written on global tensors
// (docs/ir.md, "Numerics policies: stochastic rounding"; docs/spmd.md):
// --tessera-shard-propagation gives each stochastic cast of a split tensor
// the device's tessera_graph.mesh_position and the global strides, so every
// device keys its random bits by the element's index in the global tensor,
// and the parts put together are the single-device program's bits.
//
//   tessera-run examples/spmd_stochastic_rounding.mlir     # 2 cpu devices, verified
//   tessera-opt --tessera-shard-propagation examples/spmd_stochastic_rounding.mlir
//
// (Verified at the default bf16 and e5m2 tolerances: the f32 sums of the
// backend's matmul are not in the reference's order, so a sum one f32 ulp
// away can round to the other neighbour. The bits against the one-device
// program: python/tests/test_dist.py, with exact sums.)
//
// h: rows of x split over "tp", rounded after a matmul with the replicated
// w (in the matmul's epilogue); g: the columns of a matmul split over "tp",
// rounded to fp8 e5m2.
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

func.func @rounded(
    %x: tensor<128x96xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %w: tensor<96x64xf32>,
    %a: tensor<40x96xf32>,
    %v: tensor<96x80xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>})
    -> (tensor<128x64xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
        tensor<40x80xf8E5M2> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %m = tessera_graph.matmul %x, %w : tensor<128x96xf32>, tensor<96x64xf32> -> tensor<128x64xf32>
  %h = tessera_graph.cast %m {rounding = "stochastic", seed = 31} : tensor<128x64xf32> -> tensor<128x64xbf16>
  %c = tessera_graph.matmul %a, %v : tensor<40x96xf32>, tensor<96x80xf32> -> tensor<40x80xf32>
  %g = tessera_graph.cast %c {rounding = "stochastic", seed = 32} : tensor<40x80xf32> -> tensor<40x80xf8E5M2>
  return %h, %g : tensor<128x64xbf16>, tensor<40x80xf8E5M2>
}
