// Every Graph IR collective on a 2-D mesh (dp = 2 data-parallel replicas x
// tp = 2 tensor-parallel devices): all_gather and reduce_scatter along dim 0
// and along the last dim, all_reduce (max), broadcast, and a collective over
// both axes at once.  tessera-run checks every device's results against the
// reference and assembles the global results from their shardings.
//
//   tessera-run examples/spmd_collectives.mlir          # 4 cpu devices
//   tessera-opt --tessera-spmd-stages examples/spmd_collectives.mlir
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]

func.func @collectives(
    // x: global [128, 128], rows split over dp, copies on tp.
    %x: tensor<64x128xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = ["tp"], reduce = []>},
    // w: global [128, 128], columns split over tp, copies on dp.
    %w: tensor<128x64xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = ["dp"], reduce = []>},
    %bias: tensor<128xbf16>)
    -> (tensor<64x128xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = ["tp"], reduce = []>},
        tensor<32x128xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = ["dp"], reduce = []>},
        tensor<256x64xbf16>) {
  // Each device: its rows of x times its columns of w.
  %h = tessera_graph.matmul %x, %w : tensor<64x128xbf16>, tensor<128x64xbf16> -> tensor<64x64xbf16>
  // Gather the columns over tp (the last dim of a rank-2 tensor).
  %g = tessera_graph.all_gather %h over @mesh ["tp"] dim = 1 : tensor<64x64xbf16> -> tensor<64x128xbf16>
  %gb = tessera_graph.add %g, %bias : tensor<64x128xbf16>, tensor<128xbf16>
  %gr = tessera_graph.relu %gb : tensor<64x128xbf16>
  // Sum over tp and keep a slice of rows (dim 0), then the max over dp.
  %r = tessera_graph.reduce_scatter sum %gr over @mesh ["tp"] dim = 0 : tensor<64x128xbf16> -> tensor<32x128xbf16>
  %m = tessera_graph.all_reduce max %r over @mesh ["dp"] : tensor<32x128xbf16> -> tensor<32x128xbf16>
  // dp rank 1's rows of x everywhere, summed over tp by column slices.
  %b = tessera_graph.broadcast %x over @mesh ["dp"] root = 1 : tensor<64x128xbf16> -> tensor<64x128xbf16>
  %c = tessera_graph.reduce_scatter sum %b over @mesh ["tp"] dim = 1 : tensor<64x128xbf16> -> tensor<64x64xbf16>
  %e = tessera_graph.exp %c : tensor<64x64xbf16>
  // Everything from every device, in (dp, tp) rank order.
  %k = tessera_graph.all_gather %e over @mesh ["dp", "tp"] dim = 0 : tensor<64x64xbf16> -> tensor<256x64xbf16>
  return %gr, %m, %k : tensor<64x128xbf16>, tensor<32x128xbf16>, tensor<256x64xbf16>
}
