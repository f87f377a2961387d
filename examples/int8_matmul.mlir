// An int8 layer: i8 x i8 -> i32 matmul (exact: products summed in i32),
// an i32 bias and relu; also requantized to i8 by a cast (two's complement
// wrap-around, as every integer store).  N = 200 is not a multiple of the
// 16-column register tile (a remainder tile of 8 columns, masked stores).
//
//   tessera-run examples/int8_matmul.mlir      # both results verified exactly
func.func @int8_layer(%x: tensor<96x300xi8>, %w: tensor<300x200xi8>,
                      %b: tensor<200xi32>) -> (tensor<96x200xi32>, tensor<96x200xi8>) {
  %acc = tessera_graph.matmul %x, %w : tensor<96x300xi8>, tensor<300x200xi8> -> tensor<96x200xi32>
  %biased = tessera_graph.add %acc, %b : tensor<96x200xi32>, tensor<200xi32>
  %y = tessera_graph.relu %biased : tensor<96x200xi32>
  %q = tessera_graph.cast %y : tensor<96x200xi32> -> tensor<96x200xi8>
  return %y, %q : tensor<96x200xi32>, tensor<96x200xi8>
}
