// Stochastic rounding (docs/ir.md, "Numerics policies: stochastic
// rounding"): f32 -> bf16, f16 and fp8 (e4m3, e5m2) with rounding = "stochastic",
// random bits from Philox-4x32-10 keyed by the seed and the element's
// row-major index, so every backend gives the reference's bits.
//
//   tessera-run examples/stochastic_rounding.mlir --function sr_bf16 --tolerance 0
//   python3 tests/stochastic_rounding_check.py build/bin/tessera-run   # against numpy
//   tessera-run examples/stochastic_rounding.mlir --function sr_mean
//
// @sr_mean rounds 65536 copies of 1 + 2^-9, which lies a quarter of the way
// from bf16's 1.0 to 1.0078125: round to nearest even gives 1.0 every time
// (mean error -0.00195), stochastic rounding gives 1.0078125 a quarter of
// the time, so its mean is 1 + 2^-9 up to the sampling noise (about 2e-5).
// Many row groups on cpu and many workgroups on GPUs: every element's bits
// depend on its index in the whole tensor.
func.func @sr_bf16(%x: tensor<300x257xf32>) -> tensor<300x257xbf16> {
  %y = tessera_graph.cast %x {rounding = "stochastic", seed = 42} : tensor<300x257xf32> -> tensor<300x257xbf16>
  return %y : tensor<300x257xbf16>
}

// A matmul's f32 result rounded stochastically to bf16 in the matmul's
// epilogue (the random bits keyed by each element's index in the whole
// result, on every backend), and a softmax's rows the same way.
func.func @sr_matmul(%a: tensor<130x96xf32>, %b: tensor<96x70xf32>) -> tensor<130x70xbf16> {
  %c = tessera_graph.matmul %a, %b : tensor<130x96xf32>, tensor<96x70xf32> -> tensor<130x70xf32>
  %y = tessera_graph.cast %c {rounding = "stochastic", seed = 3} : tensor<130x70xf32> -> tensor<130x70xbf16>
  return %y : tensor<130x70xbf16>
}
func.func @sr_softmax(%x: tensor<67x40xf32>) -> tensor<67x40xbf16> {
  %s = tessera_graph.softmax %x dim = 1 : tensor<67x40xf32>
  %y = tessera_graph.cast %s {rounding = "stochastic", seed = 5} : tensor<67x40xf32> -> tensor<67x40xbf16>
  return %y : tensor<67x40xbf16>
}
// The f32 values those epilogues round (the same kernels without the cast):
// tests/stochastic_rounding_check.py rounds them with its own Philox and
// compares bit for bit.
func.func @sr_matmul_f32(%a: tensor<130x96xf32>, %b: tensor<96x70xf32>) -> tensor<130x70xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<130x96xf32>, tensor<96x70xf32> -> tensor<130x70xf32>
  return %c : tensor<130x70xf32>
}
func.func @sr_softmax_f32(%x: tensor<67x40xf32>) -> tensor<67x40xf32> {
  %s = tessera_graph.softmax %x dim = 1 : tensor<67x40xf32>
  return %s : tensor<67x40xf32>
}

// f16: its subnormals (x * 2^-16) and values below them (x * 2^-26).
func.func @sr_f16(%x: tensor<61x130xf32>) -> (tensor<61x130xf16>, tensor<61x130xf16>, tensor<61x130xf16>) {
  %s1 = arith.constant dense<1.52587890625e-05> : tensor<1xf32>
  %s2 = arith.constant dense<1.4901161193847656e-08> : tensor<1xf32>
  %t1 = tessera_graph.mul %x, %s1 : tensor<61x130xf32>, tensor<1xf32>
  %t2 = tessera_graph.mul %x, %s2 : tensor<61x130xf32>, tensor<1xf32>
  %y = tessera_graph.cast %x {rounding = "stochastic", seed = 11} : tensor<61x130xf32> -> tensor<61x130xf16>
  %y1 = tessera_graph.cast %t1 {rounding = "stochastic", seed = 11} : tensor<61x130xf32> -> tensor<61x130xf16>
  %y2 = tessera_graph.cast %t2 {rounding = "stochastic", seed = 11} : tensor<61x130xf32> -> tensor<61x130xf16>
  return %y, %y1, %y2 : tensor<61x130xf16>, tensor<61x130xf16>, tensor<61x130xf16>
}

// Odd sizes (vector remainders on cpu, partial groups on GPUs) and values
// below fp8's smallest subnormal (x * 2^-10).
func.func @sr_fp8(%x: tensor<37x53xf32>) -> (tensor<37x53xf8E4M3FN>, tensor<37x53xf8E4M3FN>) {
  %s = arith.constant dense<9.765625e-04> : tensor<1xf32>
  %t = tessera_graph.mul %x, %s : tensor<37x53xf32>, tensor<1xf32>
  %y = tessera_graph.cast %x {rounding = "stochastic", seed = 7} : tensor<37x53xf32> -> tensor<37x53xf8E4M3FN>
  %z = tessera_graph.cast %t {rounding = "stochastic", seed = 7} : tensor<37x53xf32> -> tensor<37x53xf8E4M3FN>
  return %y, %z : tensor<37x53xf8E4M3FN>, tensor<37x53xf8E4M3FN>
}

// fp8 e5m2 (the top byte of an f16: 2 mantissa bits, f16's exponent range,
// overflow to inf): normal values, and x * 2^-14 in and below its
// subnormals.
func.func @sr_e5m2(%x: tensor<41x47xf32>) -> (tensor<41x47xf8E5M2>, tensor<41x47xf8E5M2>) {
  %s = arith.constant dense<6.103515625e-05> : tensor<1xf32>
  %t = tessera_graph.mul %x, %s : tensor<41x47xf32>, tensor<1xf32>
  %y = tessera_graph.cast %x {rounding = "stochastic", seed = 9} : tensor<41x47xf32> -> tensor<41x47xf8E5M2>
  %z = tessera_graph.cast %t {rounding = "stochastic", seed = 9} : tensor<41x47xf32> -> tensor<41x47xf8E5M2>
  return %y, %z : tensor<41x47xf8E5M2>, tensor<41x47xf8E5M2>
}

func.func @sr_mean(%x: tensor<256x256xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  %zero = arith.constant dense<0.0> : tensor<1xf32>
  %c = arith.constant dense<1.001953125> : tensor<1xf32>
  %x0 = tessera_graph.mul %x, %zero : tensor<256x256xf32>, tensor<1xf32>
  %v = tessera_graph.add %x0, %c : tensor<256x256xf32>, tensor<1xf32>
  %sr = tessera_graph.cast %v {rounding = "stochastic", seed = 1234} : tensor<256x256xf32> -> tensor<256x256xbf16>
  %rn = tessera_graph.cast %v : tensor<256x256xf32> -> tensor<256x256xbf16>
  %srf = tessera_graph.cast %sr : tensor<256x256xbf16> -> tensor<256x256xf32>
  %rnf = tessera_graph.cast %rn : tensor<256x256xbf16> -> tensor<256x256xf32>
  %m1 = tessera_graph.reduce mean %srf dims = [0, 1] order = pairwise : tensor<256x256xf32> -> tensor<1x1xf32>
  %m2 = tessera_graph.reduce mean %rnf dims = [0, 1] order = pairwise : tensor<256x256xf32> -> tensor<1x1xf32>
  %a = tessera_graph.reshape %m1 : tensor<1x1xf32> -> tensor<1xf32>
  %b = tessera_graph.reshape %m2 : tensor<1x1xf32> -> tensor<1xf32>
  return %a, %b : tensor<1xf32>, tensor<1xf32>
}
