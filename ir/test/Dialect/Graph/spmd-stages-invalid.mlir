// RUN: tessera-opt %s --split-input-file --tessera-spmd-stages -verify-diagnostics

#blocked = #tessera_graph.layout<blocked<2, 2>>
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @middle_dim_in_a_layout(%x: tensor<2x4x8xf32, #blocked>) -> tensor<2x8x8xf32, #blocked> {
  // expected-error @+1 {{along dim 1 of a rank-3 tensor in a layout is not supported by the SPMD runtime}}
  %g = tessera_graph.all_gather %x over @mesh ["tp"] dim = 1 : tensor<2x4x8xf32, #blocked> -> tensor<2x8x8xf32, #blocked>
  return %g : tensor<2x8x8xf32, #blocked>
}

// -----

tessera_graph.mesh @a axes = ["tp"] shape = [2]
tessera_graph.mesh @b axes = ["tp"] shape = [4]
// expected-error @+1 {{uses the meshes @a and @b: an SPMD function runs on one mesh}}
func.func @two_meshes(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = tessera_graph.all_reduce sum %x over @a ["tp"] : tensor<8xf32> -> tensor<8xf32>
  %s = tessera_graph.all_reduce sum %r over @b ["tp"] : tensor<8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}
