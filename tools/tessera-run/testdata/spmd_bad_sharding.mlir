// Declares its result replicated over tp, but the devices of tp hold
// different values: tessera-run must say so (tests/tessera_run_spmd.sh).
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @wrong(%x: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = ["tp"], reduce = []>}) {
  %e = tessera_graph.exp %x : tensor<8x8xf32>
  return %e : tensor<8x8xf32>
}
