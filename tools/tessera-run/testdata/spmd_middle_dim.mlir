// A gather along a middle dim: the SPMD runtime cannot do it on flat
// buffers, so tessera-run must stop with a diagnostic (exit 1).
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @middle_dim(%x: tensor<2x4x8xf32>) -> tensor<2x8x8xf32> {
  %g = tessera_graph.all_gather %x over @mesh ["tp"] dim = 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
  return %g : tensor<2x8x8xf32>
}
