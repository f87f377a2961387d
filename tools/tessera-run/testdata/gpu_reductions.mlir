// Reductions and softmax over any dims on the GPU path
// (tessera-graph-to-tile-kernels, tools/tessera-run/CMakeLists.txt).
//
// @reductions runs with --tolerance 0: the reduce kernels add in the
// association order the op names (sequential: left to right; pairwise: the
// balanced tree), the same additions as the cpu backend and the reference,
// so every result must be bitwise equal. The shapes exercise the pairwise
// split between lanes (256 per group) and shared memory: n = 1000 (chunks
// of 4, the last partial), n = 1024 (exact, no guard), n = 15000 (chunks of
// 64), n = 6 (fewer elements than lanes), n = 1 and all dims (rank 0).
func.func @reductions(%a: tensor<3x1000x5xf32>, %b: tensor<2x1024xf32>, %c: tensor<4x6x8xf32>, %d: tensor<5x1xf32>)
    -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<1000xf32>, tensor<f32>, tensor<f32>, tensor<2xf32>,
        tensor<6xf32>, tensor<4x8xf32>, tensor<4x6xf32>, tensor<5xf32>, tensor<3x1000xf32>) {
  %r0 = tessera_graph.reduce sum %a dims = [1] order = pairwise : tensor<3x1000x5xf32> -> tensor<3x5xf32>
  %r1 = tessera_graph.reduce sum %a dims = [1] order = sequential : tensor<3x1000x5xf32> -> tensor<3x5xf32>
  %r2 = tessera_graph.reduce sum %a dims = [0, 2] order = sequential : tensor<3x1000x5xf32> -> tensor<1000xf32>
  %r3 = tessera_graph.reduce sum %a dims = [0, 1, 2] order = pairwise : tensor<3x1000x5xf32> -> tensor<f32>
  %r4 = tessera_graph.reduce sum %a dims = [2, 0, 1] order = sequential : tensor<3x1000x5xf32> -> tensor<f32>
  %r5 = tessera_graph.reduce sum %b dims = [1] order = pairwise : tensor<2x1024xf32> -> tensor<2xf32>
  %r6 = tessera_graph.reduce sum %c dims = [0, 2] order = pairwise : tensor<4x6x8xf32> -> tensor<6xf32>
  %r7 = tessera_graph.reduce max %c dims = [1] order = pairwise : tensor<4x6x8xf32> -> tensor<4x8xf32>
  %r8 = tessera_graph.reduce max %c dims = [2] order = sequential : tensor<4x6x8xf32> -> tensor<4x6xf32>
  %r9 = tessera_graph.reduce sum %d dims = [1] order = pairwise : tensor<5x1xf32> -> tensor<5xf32>
  %r10 = tessera_graph.reduce max %a dims = [2] order = pairwise : tensor<3x1000x5xf32> -> tensor<3x1000xf32>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10
      : tensor<3x5xf32>, tensor<3x5xf32>, tensor<1000xf32>, tensor<f32>, tensor<f32>, tensor<2xf32>,
        tensor<6xf32>, tensor<4x8xf32>, tensor<4x6xf32>, tensor<5xf32>, tensor<3x1000xf32>
}

// Softmax along every dim of a rank-3 tensor (rows strided by 48, 8 and 1
// elements), and a softmax fed by an elementwise op and feeding a reduce.
func.func @softmax_dims(%a: tensor<4x6x8xf32>, %b: tensor<3x300x2xf32>)
    -> (tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<3x2xf32>) {
  %s0 = tessera_graph.softmax %a dim = 0 : tensor<4x6x8xf32>
  %s1 = tessera_graph.softmax %a dim = 1 : tensor<4x6x8xf32>
  %s2 = tessera_graph.softmax %a dim = 2 : tensor<4x6x8xf32>
  %e = tessera_graph.relu %b : tensor<3x300x2xf32>
  %s3 = tessera_graph.softmax %e dim = 1 : tensor<3x300x2xf32>
  %m = tessera_graph.reduce max %s3 dims = [1] order = pairwise : tensor<3x300x2xf32> -> tensor<3x2xf32>
  return %s0, %s1, %s2, %m : tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<3x2xf32>
}
