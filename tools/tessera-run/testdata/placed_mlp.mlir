// A program on global tensors that declares no placement: tessera-run
// places it with --mesh, --in-sharding and --out-sharding (docs/spmd.md,
// "Shardings given at compile time"), e.g. sequence-parallel around a
// Megatron MLP on a 2 x 2 mesh:
//
//   tessera-run placed_mlp.mlir --mesh dp=2,tp=2 --in-sharding 'dp*tp,-' \
//     --in-sharding '-,tp' --in-sharding 'tp,-' --out-sharding 'dp*tp,-'
//
// and, without the flags, on one device.
func.func @mlp(%x: tensor<64x32xf32>, %w1: tensor<32x128xf32>, %w2: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  %h = tessera_graph.relu %h0 : tensor<64x128xf32>
  %y0 = tessera_graph.matmul %h, %w2 : tensor<64x128xf32>, tensor<128x32xf32> -> tensor<64x32xf32>
  %y = tessera_graph.add %y0, %x : tensor<64x32xf32>, tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
