tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @f(tensor<8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>}) {
  return
}
