// Fused MLP in Graph IR: y = relu(x W1 + b1) W2 + b2, batch 512, 1024 -> 4096 -> 1024.
//
//   tessera-run examples/mlp.mlir            # compile for the cpu backend, run, verify
//   tessera-opt --tessera-graph-to-schedule examples/mlp.mlir   # see the fused tiles
func.func @mlp(%x: tensor<512x1024xf32>, %w1: tensor<1024x4096xf32>, %b1: tensor<4096xf32>,
               %w2: tensor<4096x1024xf32>, %b2: tensor<1024xf32>) -> tensor<512x1024xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<512x1024xf32>, tensor<1024x4096xf32> -> tensor<512x4096xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<512x4096xf32>, tensor<4096xf32>
  %h = tessera_graph.relu %h1 : tensor<512x4096xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<512x4096xf32>, tensor<4096x1024xf32> -> tensor<512x1024xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<512x1024xf32>, tensor<1024xf32>
  return %y : tensor<512x1024xf32>
}
