// The two fp8 storage types (docs/ir.md, "Element types on the cpu"):
// f8E4M3FN (4 exponent bits, no infinities: saturates to +-448) for
// activations and weights, and f8E5M2 (5 exponent bits, the top byte of an
// f16: +-57344, overflow to inf) for gradients, whose range matters more
// than their precision. Both are stored as bytes and computed in f32.
//
//   tessera-run examples/fp8.mlir --function casts_e5m2 --tolerance 0   # bit-exact
//   tessera-run examples/fp8.mlir --function dgrad                      # f32 accumulation
//
// @casts_e5m2: values that overflow e5m2 (x 1e5: to +-inf), infinities
// (x / 0), NaN (inf - inf), e5m2 subnormals (x 1e-5, below 2^-14) and
// underflow (x 1e-7, under 2^-17: to +-0); e5m2 -> e4m3 (inf saturates to
// +-448), e5m2 -> f16 (exact: e5m2 is a truncated f16), e5m2 -> i8
// (saturates), and e5m2 <- bf16.
func.func @casts_e5m2(%x: tensor<64x64xf32>) -> (tensor<64x64xf8E5M2>, tensor<64x64xf8E5M2>,
    tensor<64x64xf8E5M2>, tensor<64x64xf8E5M2>, tensor<64x64xf8E5M2>, tensor<64x64xf8E4M3FN>,
    tensor<64x64xf16>, tensor<64x64xi8>, tensor<64x64xf8E5M2>, tensor<64x64xf32>) {
  %cbig = arith.constant dense<100000.0> : tensor<64xf32>
  %c0 = arith.constant dense<0.0> : tensor<64xf32>
  %csub = arith.constant dense<1.0e-5> : tensor<64xf32>
  %ctiny = arith.constant dense<1.0e-7> : tensor<64xf32>
  %y = tessera_graph.mul %x, %cbig : tensor<64x64xf32>, tensor<64xf32>
  %z = tessera_graph.div %x, %c0 : tensor<64x64xf32>, tensor<64xf32>
  %n = tessera_graph.sub %z, %z : tensor<64x64xf32>, tensor<64x64xf32>
  %s = tessera_graph.mul %x, %csub : tensor<64x64xf32>, tensor<64xf32>
  %t = tessera_graph.mul %x, %ctiny : tensor<64x64xf32>, tensor<64xf32>
  %y5 = tessera_graph.cast %y : tensor<64x64xf32> -> tensor<64x64xf8E5M2>
  %z5 = tessera_graph.cast %z : tensor<64x64xf32> -> tensor<64x64xf8E5M2>
  %n5 = tessera_graph.cast %n : tensor<64x64xf32> -> tensor<64x64xf8E5M2>
  %s5 = tessera_graph.cast %s : tensor<64x64xf32> -> tensor<64x64xf8E5M2>
  %t5 = tessera_graph.cast %t : tensor<64x64xf32> -> tensor<64x64xf8E5M2>
  %y4 = tessera_graph.cast %y5 : tensor<64x64xf8E5M2> -> tensor<64x64xf8E4M3FN>
  %yh = tessera_graph.cast %y5 : tensor<64x64xf8E5M2> -> tensor<64x64xf16>
  %yi = tessera_graph.cast %y5 : tensor<64x64xf8E5M2> -> tensor<64x64xi8>
  %xb = tessera_graph.cast %x : tensor<64x64xf32> -> tensor<64x64xbf16>
  %xb5 = tessera_graph.cast %xb : tensor<64x64xbf16> -> tensor<64x64xf8E5M2>
  %back = tessera_graph.cast %s5 : tensor<64x64xf8E5M2> -> tensor<64x64xf32>
  return %y5, %z5, %n5, %s5, %t5, %y4, %yh, %yi, %xb5, %back
    : tensor<64x64xf8E5M2>, tensor<64x64xf8E5M2>, tensor<64x64xf8E5M2>, tensor<64x64xf8E5M2>,
      tensor<64x64xf8E5M2>, tensor<64x64xf8E4M3FN>, tensor<64x64xf16>, tensor<64x64xi8>,
      tensor<64x64xf8E5M2>, tensor<64x64xf32>
}

// The input gradient of a linear layer in fp8 training: dX = dY W^T with
// dY in e5m2 and W^T in e4m3, accumulated in f32 (the stated policy), then
// rounded stochastically to e5m2 for the next layer's backward (seeded:
// reproducible, the same bits on every backend).
func.func @dgrad(%dy: tensor<96x160xf8E5M2>, %wt: tensor<160x72xf8E4M3FN>)
    -> (tensor<96x72xf32>, tensor<96x72xf8E5M2>) {
  %dx = tessera_graph.matmul %dy, %wt {accum = f32} : tensor<96x160xf8E5M2>, tensor<160x72xf8E4M3FN> -> tensor<96x72xf32>
  %dx5 = tessera_graph.cast %dx {rounding = "stochastic", seed = 17} : tensor<96x72xf32> -> tensor<96x72xf8E5M2>
  return %dx, %dx5 : tensor<96x72xf32>, tensor<96x72xf8E5M2>
}
