// fp8 across devices: it moves as bytes, so a gather works and a reduction
// is refused with a diagnostic (tests/tessera_run_spmd.sh).
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @gather(%x: tensor<8x16xf8E4M3FN>) -> tensor<16x16xf8E4M3FN> {
  %g = tessera_graph.all_gather %x over @mesh ["tp"] dim = 0 : tensor<8x16xf8E4M3FN> -> tensor<16x16xf8E4M3FN>
  return %g : tensor<16x16xf8E4M3FN>
}
func.func @reduce(%x: tensor<8x16xf8E4M3FN>) -> tensor<8x16xf8E4M3FN> {
  %r = tessera_graph.all_reduce sum %x over @mesh ["tp"] : tensor<8x16xf8E4M3FN> -> tensor<8x16xf8E4M3FN>
  return %r : tensor<8x16xf8E4M3FN>
}
