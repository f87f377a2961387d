// Row-parallel matmul that returns its partial sums: x split by columns and
// w by rows over tp, so each device's x w is a partial sum of the global
// product, and the result's sharding says so (reduce = ["tp"]): tessera-run
// adds the partial sums when it assembles the global result
// (tests/tessera_run_spmd.sh compares it with matmul_global.mlir).
tessera_graph.mesh @mesh axes = ["tp"] shape = [4]
func.func @row_parallel(
    %x: tensor<64x32xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w: tensor<32x48xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<64x48xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = [], reduce = ["tp"]>}) {
  %p = tessera_graph.matmul %x, %w : tensor<64x32xf32>, tensor<32x48xf32> -> tensor<64x48xf32>
  return %p : tensor<64x48xf32>
}
