// Softmax and reduce with the elementwise ops that consume them fused into
// their tile (docs/ir.md, "Schedule IR: the groups"): on cpu in the
// softmax's / reduce's store loop, on vulkan in the row kernel before its
// store. The reductions are in an explicit association order and their
// epilogues are exact operations (scale by a power of two, add an input,
// max, cast to bf16 with one rounding), so `--kernel reductions` is checked
// with --tolerance 0 against the reference on both backends.
func.func @reductions(%x: tensor<6x1000xf32>, %y: tensor<6xf32>, %z: tensor<7x64xi32>)
    -> (tensor<6xbf16>, tensor<6xf32>, tensor<7xi32>) {
  %half = arith.constant dense<0.5> : tensor<6xf32>
  %p = tessera_graph.reduce sum %x dims = [1] order = pairwise : tensor<6x1000xf32> -> tensor<6xf32>
  %p1 = tessera_graph.mul %p, %half : tensor<6xf32>, tensor<6xf32>
  %p2 = tessera_graph.add %p1, %y : tensor<6xf32>, tensor<6xf32>
  %p3 = tessera_graph.cast %p2 : tensor<6xf32> -> tensor<6xbf16>
  %s = tessera_graph.reduce max %x dims = [1] order = sequential : tensor<6x1000xf32> -> tensor<6xf32>
  %s1 = tessera_graph.max %s, %y : tensor<6xf32>, tensor<6xf32>
  %i = tessera_graph.reduce sum %z dims = [1] order = sequential : tensor<7x64xi32> -> tensor<7xi32>
  %three = arith.constant dense<3> : tensor<7xi32>
  %i1 = tessera_graph.mul %i, %three : tensor<7xi32>, tensor<7xi32>
  return %p3, %s1, %i1 : tensor<6xbf16>, tensor<6xf32>, tensor<7xi32>
}

// Softmax along each dim with a scale and a cast after it.
func.func @softmax(%x: tensor<4x33x40xf32>, %b: tensor<40xf32>) -> (tensor<4x33x40xbf16>, tensor<4x33x40xf32>) {
  %two = arith.constant dense<2.0> : tensor<4x33x40xf32>
  %s = tessera_graph.softmax %x dim = 2 : tensor<4x33x40xf32>
  %s1 = tessera_graph.mul %s, %two : tensor<4x33x40xf32>, tensor<4x33x40xf32>
  %s2 = tessera_graph.cast %s1 : tensor<4x33x40xf32> -> tensor<4x33x40xbf16>
  %t = tessera_graph.softmax %x dim = 1 : tensor<4x33x40xf32>
  %t1 = tessera_graph.add %t, %b : tensor<4x33x40xf32>, tensor<40xf32>
  return %s2, %t1 : tensor<4x33x40xbf16>, tensor<4x33x40xf32>
}
