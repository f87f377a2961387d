// IEEE special values on the GPU path (ctest example.ir.vulkan.graph.inf_nan,
// --tolerance 0): x / 0 is +-inf with the sign of x * y and 0 / 0 NaN
// (Vulkan leaves OpFDiv by zero undefined: the lowering selects the IEEE
// result), inf - inf is NaN (SignedZeroInfNanPreserve keeps the driver from
// folding x - x to 0), and the casts of inf and NaN saturate or give 0 as
// on cpu.
func.func @inf_nan(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xbf16>,
                                           tensor<64xi32>, tensor<64xf8E4M3FN>, tensor<64xf32>) {
  %c0 = arith.constant dense<0.0> : tensor<64xf32>
  %m0 = arith.constant dense<-0.0> : tensor<64xf32>
  %big = arith.constant dense<1.0e30> : tensor<64xf32>
  %z = tessera_graph.div %x, %c0 : tensor<64xf32>, tensor<64xf32>
  %zm = tessera_graph.div %x, %m0 : tensor<64xf32>, tensor<64xf32>
  %n = tessera_graph.sub %z, %z : tensor<64xf32>, tensor<64xf32>
  %b = tessera_graph.cast %z : tensor<64xf32> -> tensor<64xbf16>
  %i = tessera_graph.cast %n : tensor<64xf32> -> tensor<64xi32>
  %y = tessera_graph.mul %x, %big : tensor<64xf32>, tensor<64xf32>
  %y2 = tessera_graph.mul %y, %big : tensor<64xf32>, tensor<64xf32>
  %f8 = tessera_graph.cast %y2 : tensor<64xf32> -> tensor<64xf8E4M3FN>
  %zz = tessera_graph.div %c0, %c0 : tensor<64xf32>, tensor<64xf32>
  return %z, %zm, %n, %b, %i, %f8, %zz : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xbf16>,
                                         tensor<64xi32>, tensor<64xf8E4M3FN>, tensor<64xf32>
}
