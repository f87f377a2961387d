// Corner cases of the GPU lowering, run on vulkan and verified by ctest
// example.ir.vulkan.graph.edge_cases: two matmuls in one elementwise tree (one
// is materialized), a matmul result with two users (materialized once, read
// twice), non-tile-multiple shapes, a splat constant as a result (fill
// kernel), a value returned twice and an argument returned (copy kernels).
func.func @edge(%a: tensor<40x24xf32>, %b: tensor<24x36xf32>, %c: tensor<24x36xf32>, %d: tensor<40x36xf32>)
    -> (tensor<40x36xf32>, tensor<40x36xf32>, tensor<40x36xf32>, tensor<40x36xf32>, tensor<36xf32>, tensor<40x24xf32>) {
  %m1 = tessera_graph.matmul %a, %b : tensor<40x24xf32>, tensor<24x36xf32> -> tensor<40x36xf32>
  %m2 = tessera_graph.matmul %a, %c : tensor<40x24xf32>, tensor<24x36xf32> -> tensor<40x36xf32>
  %s = tessera_graph.add %m1, %m2 : tensor<40x36xf32>, tensor<40x36xf32>
  %m3 = tessera_graph.matmul %a, %b : tensor<40x24xf32>, tensor<24x36xf32> -> tensor<40x36xf32>
  %e = tessera_graph.exp %m3 : tensor<40x36xf32>
  %f = tessera_graph.mul %m3, %d : tensor<40x36xf32>, tensor<40x36xf32>
  %k = arith.constant dense<2.5> : tensor<36xf32>
  return %s, %e, %f, %s, %k, %a : tensor<40x36xf32>, tensor<40x36xf32>, tensor<40x36xf32>, tensor<40x36xf32>, tensor<36xf32>, tensor<40x24xf32>
}
