// The tensor-parallel MLP with a wide output, for tessera-mpi-bench's
// overlap metric: per rank 2048 x 512 -> 256 (its half of the hidden
// layer) -> 2048, so the all_reduce moves 16 MiB per rank per call while
// the compute is about 2.7 GFLOP per rank: a case where the collective is
// a large part of the step and overlapping it with compute can show.
//
//   mpirun -np 2 tessera-mpi-bench --program=bench/programs/tp_mlp_wide.mlir
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]

func.func @tp_mlp_wide(
    %x: tensor<2048x512xf32>,
    %w1: tensor<512x256xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w2: tensor<256x2048xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<2048x2048xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = ["tp"], reduce = []>}) {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<2048x512xf32>, tensor<512x256xf32> -> tensor<2048x256xf32>
  %h = tessera_graph.relu %h0 : tensor<2048x256xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<2048x256xf32>, tensor<256x2048xf32> -> tensor<2048x2048xf32>
  %y = tessera_graph.all_reduce sum %p over @mesh ["tp"] : tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %y : tensor<2048x2048xf32>
}
