// Collectives along a middle dim: the SPMD runtime concatenates flat
// buffers along dim 0, so --tessera-spmd-stages moves the dim first with a
// transpose and back after (docs/spmd.md); tessera-run checks every
// device's results against the reference.
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @middle_dim(%x: tensor<2x4x8xf32>)
    -> (tensor<2x8x8xf32>, tensor<2x4x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "", "tp"], replicate = [], reduce = []>}) {
  %g = tessera_graph.all_gather %x over @mesh ["tp"] dim = 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
  %s = tessera_graph.reduce_scatter sum %x over @mesh ["tp"] dim = 2 : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  return %g, %s : tensor<2x8x8xf32>, tensor<2x4x4xf32>
}
