// Casts between the element types on values that overflow, divide by zero
// and underflow (docs/ir.md, "Element types on the cpu"):
//   y = 1000 x in [-1000, 1000): beyond fp8 (+-448, saturates) and i8 (wraps
//       when stored from i32, saturates when cast from a float);
//   z = x / 0: +-inf (fp8 saturates to +-448, bf16/f16 keep inf, i32 saturates);
//   n = z - z: NaN (fp8 0x7F / 0xFF, bf16 NaN, i32 0);
//   t = 1e-7 x: f16 subnormals, fp8 underflow to (negative) zero;
//   s = 0.01 x: fp8 subnormals (below 2^-6).
// Then a chain through every type: f32 -> fp8 -> bf16 -> i8 -> f16 -> i32 -> f32.
//
//   tessera-run examples/casts.mlir --tolerance 0     # every result is exact
func.func @casts(%x: tensor<64x64xf32>) -> (tensor<64x64xf8E4M3FN>, tensor<64x64xbf16>,
    tensor<64x64xf16>, tensor<64x64xi8>, tensor<64x64xi32>, tensor<64x64xf8E4M3FN>,
    tensor<64x64xbf16>, tensor<64x64xi32>, tensor<64x64xf16>, tensor<64x64xf8E4M3FN>,
    tensor<64x64xf32>, tensor<64x64xf8E4M3FN>, tensor<64x64xbf16>, tensor<64x64xi32>,
    tensor<64x64xf8E4M3FN>) {
  %c1000 = arith.constant dense<1000.0> : tensor<64xf32>
  %c0 = arith.constant dense<0.0> : tensor<64xf32>
  %ctiny = arith.constant dense<1.0e-7> : tensor<64xf32>
  %csmall = arith.constant dense<0.01> : tensor<64xf32>
  %y = tessera_graph.mul %x, %c1000 : tensor<64x64xf32>, tensor<64xf32>
  %z = tessera_graph.div %x, %c0 : tensor<64x64xf32>, tensor<64xf32>
  %t = tessera_graph.mul %x, %ctiny : tensor<64x64xf32>, tensor<64xf32>
  %n = tessera_graph.sub %z, %z : tensor<64x64xf32>, tensor<64x64xf32>
  %s = tessera_graph.mul %x, %csmall : tensor<64x64xf32>, tensor<64xf32>
  %n8 = tessera_graph.cast %n : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  %nbf = tessera_graph.cast %n : tensor<64x64xf32> -> tensor<64x64xbf16>
  %ni = tessera_graph.cast %n : tensor<64x64xf32> -> tensor<64x64xi32>
  %s8 = tessera_graph.cast %s : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  %y8 = tessera_graph.cast %y : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  %ybf = tessera_graph.cast %y : tensor<64x64xf32> -> tensor<64x64xbf16>
  %yh = tessera_graph.cast %y : tensor<64x64xf32> -> tensor<64x64xf16>
  %yi8 = tessera_graph.cast %y : tensor<64x64xf32> -> tensor<64x64xi8>
  %yi32 = tessera_graph.cast %y : tensor<64x64xf32> -> tensor<64x64xi32>
  %z8 = tessera_graph.cast %z : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  %zbf = tessera_graph.cast %z : tensor<64x64xf32> -> tensor<64x64xbf16>
  %zi = tessera_graph.cast %z : tensor<64x64xf32> -> tensor<64x64xi32>
  %th = tessera_graph.cast %t : tensor<64x64xf32> -> tensor<64x64xf16>
  %t8 = tessera_graph.cast %t : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  %a = tessera_graph.cast %y8 : tensor<64x64xf8E4M3FN> -> tensor<64x64xbf16>
  %b = tessera_graph.cast %a : tensor<64x64xbf16> -> tensor<64x64xi8>
  %c = tessera_graph.cast %b : tensor<64x64xi8> -> tensor<64x64xf16>
  %d = tessera_graph.cast %c : tensor<64x64xf16> -> tensor<64x64xi32>
  %e = tessera_graph.cast %d : tensor<64x64xi32> -> tensor<64x64xf32>
  return %y8, %ybf, %yh, %yi8, %yi32, %z8, %zbf, %zi, %th, %t8, %e, %n8, %nbf, %ni, %s8
    : tensor<64x64xf8E4M3FN>, tensor<64x64xbf16>, tensor<64x64xf16>, tensor<64x64xi8>,
      tensor<64x64xi32>, tensor<64x64xf8E4M3FN>, tensor<64x64xbf16>, tensor<64x64xi32>,
      tensor<64x64xf16>, tensor<64x64xf8E4M3FN>, tensor<64x64xf32>, tensor<64x64xf8E4M3FN>,
      tensor<64x64xbf16>, tensor<64x64xi32>, tensor<64x64xf8E4M3FN>
}
