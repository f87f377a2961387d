// A linear layer in int8 (docs/ir.md, "Numerics policies"): the
// activations quantized per tensor and the weight per output channel, each
// scale taken from the data (max |value| / 127), an i8 x i8 -> i32 matmul,
// and the i32 accumulator dequantized with the product of the two scales.
// Every backend runs quantize / dequantize as the same composition of
// Graph ops (--tessera-lower-quantization), fused into the neighbouring
// kernels, so the i8 values are the same bits everywhere.
//
//   tessera-run examples/int8_linear.mlir                    # cpu, checked against the reference
//   TESSERA_BACKEND=vulkan tessera-run examples/int8_linear.mlir
//   tessera-run examples/int8_linear.mlir --function linear_f32   # the same layer in f32
func.func @int8_linear(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>) -> tensor<64x128xf32> {
  %c127 = arith.constant dense<127.0> : tensor<1xf32>
  // Per tensor: one scale for the activations.
  %ax = tessera_graph.abs %x : tensor<64x256xf32>
  %mx = tessera_graph.reduce max %ax dims = [0, 1] order = pairwise : tensor<64x256xf32> -> tensor<1x1xf32>
  %mx1 = tessera_graph.reshape %mx : tensor<1x1xf32> -> tensor<1xf32>
  %sx = tessera_graph.div %mx1, %c127 : tensor<1xf32>, tensor<1xf32>
  // Per output channel: one scale per column of the weight.
  %aw = tessera_graph.abs %w : tensor<256x128xf32>
  %mw = tessera_graph.reduce max %aw dims = [0] order = pairwise : tensor<256x128xf32> -> tensor<128xf32>
  %sw = tessera_graph.div %mw, %c127 : tensor<128xf32>, tensor<1xf32>
  %q = tessera_graph.quantize %x, %sx : tensor<64x256xf32>, tensor<1xf32> -> tensor<64x256xi8>
  %w8 = tessera_graph.quantize %w, %sw axis = 1 : tensor<256x128xf32>, tensor<128xf32> -> tensor<256x128xi8>
  %acc = tessera_graph.matmul %q, %w8 : tensor<64x256xi8>, tensor<256x128xi8> -> tensor<64x128xi32>
  %sxw = tessera_graph.mul %sw, %sx : tensor<128xf32>, tensor<1xf32>
  %y = tessera_graph.dequantize %acc, %sxw axis = 1 : tensor<64x128xi32>, tensor<128xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// The same layer in f32, to compare with (--output of both).
func.func @linear_f32(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>) -> tensor<64x128xf32> {
  %y = tessera_graph.matmul %x, %w : tensor<64x256xf32>, tensor<256x128xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// Per-row (axis 0) int8 round trip: each row scaled by its own max |x| / 127.
func.func @int8_rows(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %c127 = arith.constant dense<127.0> : tensor<1xf32>
  %ax = tessera_graph.abs %x : tensor<64x256xf32>
  %mx = tessera_graph.reduce max %ax dims = [1] order = pairwise : tensor<64x256xf32> -> tensor<64xf32>
  %s = tessera_graph.div %mx, %c127 : tensor<64xf32>, tensor<1xf32>
  %q = tessera_graph.quantize %x, %s axis = 0 : tensor<64x256xf32>, tensor<64xf32> -> tensor<64x256xi8>
  %y = tessera_graph.dequantize %q, %s axis = 0 : tensor<64x256xi8>, tensor<64xf32> -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}
