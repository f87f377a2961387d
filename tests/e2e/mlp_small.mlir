// Two layers with odd sizes: relu(x W1 + b1) W2 + b2, x [37x130],
// W1 [130x70], W2 [70x19]: every dimension leaves a remainder tile.
func.func @mlp_small(%x: tensor<37x130xf32>, %w1: tensor<130x70xf32>, %b1: tensor<70xf32>,
                     %w2: tensor<70x19xf32>, %b2: tensor<19xf32>) -> tensor<37x19xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<37x130xf32>, tensor<130x70xf32> -> tensor<37x70xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<37x70xf32>, tensor<70xf32>
  %h = tessera_graph.relu %h1 : tensor<37x70xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<37x70xf32>, tensor<70x19xf32> -> tensor<37x19xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<37x19xf32>, tensor<19xf32>
  return %y : tensor<37x19xf32>
}
