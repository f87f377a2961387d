// f32 matmuls of shapes that divide nothing: 33 x 70 times 70 x 17 (M, K and
// N are not multiples of the 6 x 16 register tile, the 8-wide vectors or the
// unrolled k loop), with a bias + relu epilogue, then 17 -> 5 columns.
//
//   tessera-run examples/odd_shapes.mlir
//
// Remainder columns use a narrower register tile with masked vector loads
// and stores (vector.maskedload / maskedstore), remainder rows a shorter tile.
func.func @odd(%x: tensor<33x70xf32>, %w1: tensor<70x17xf32>, %b1: tensor<17xf32>,
               %w2: tensor<17x5xf32>) -> tensor<33x5xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<33x70xf32>, tensor<70x17xf32> -> tensor<33x17xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<33x17xf32>, tensor<17xf32>
  %h = tessera_graph.relu %h1 : tensor<33x17xf32>
  %y = tessera_graph.matmul %h, %w2 : tensor<33x17xf32>, tensor<17x5xf32> -> tensor<33x5xf32>
  return %y : tensor<33x5xf32>
}
