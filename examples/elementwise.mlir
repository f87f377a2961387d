// Every elementwise Graph IR op of docs/ir.md ("Elementwise ops"), fused
// into as few kernels as the fusion rules allow, on f32, bf16 and i32, and
// verified against the reference interpreter (std::erf, std::tanh, ...):
//
//   tessera-run examples/elementwise.mlir                      (cpu)
//   TESSERA_BACKEND=vulkan tessera-run examples/elementwise.mlir
//
// Inputs are random in [-1, 1]: p = |x| + 0.5 keeps sqrt, rsqrt, log and
// pow in their domains; the scales stretch the inputs over the ranges
// where tanh, sigmoid, erf and the GELUs bend.
func.func @elementwise(%x: tensor<64x96xf32>, %y: tensor<64x96xf32>, %i: tensor<64x96xi32>, %j: tensor<96xi32>)
    -> (tensor<64x96xf32>, tensor<64x96xf32>, tensor<64x96xf32>, tensor<64x96xf32>,
        tensor<64x96xf32>, tensor<64x96xbf16>, tensor<64x96xi32>) {
  %half = arith.constant dense<0.5> : tensor<64x96xf32>
  %four = arith.constant dense<4.0> : tensor<64x96xf32>
  %ax = tessera_graph.abs %x : tensor<64x96xf32>
  %p = tessera_graph.add %ax, %half : tensor<64x96xf32>, tensor<64x96xf32>
  // sqrt(p) + log(p) - rsqrt(p) + p ** y
  %s = tessera_graph.sqrt %p : tensor<64x96xf32>
  %l = tessera_graph.log %p : tensor<64x96xf32>
  %r = tessera_graph.rsqrt %p : tensor<64x96xf32>
  %w = tessera_graph.pow %p, %y : tensor<64x96xf32>, tensor<64x96xf32>
  %a0 = tessera_graph.add %s, %l : tensor<64x96xf32>, tensor<64x96xf32>
  %a1 = tessera_graph.sub %a0, %r : tensor<64x96xf32>, tensor<64x96xf32>
  %o0 = tessera_graph.add %a1, %w : tensor<64x96xf32>, tensor<64x96xf32>
  // tanh, sigmoid and erf over [-4, 4]
  %x4 = tessera_graph.mul %x, %four : tensor<64x96xf32>, tensor<64x96xf32>
  %o1 = tessera_graph.tanh %x4 : tensor<64x96xf32>
  %sg = tessera_graph.sigmoid %x4 : tensor<64x96xf32>
  %er = tessera_graph.erf %x4 : tensor<64x96xf32>
  %o2 = tessera_graph.sub %sg, %er : tensor<64x96xf32>, tensor<64x96xf32>
  // The activations
  %y4 = tessera_graph.mul %y, %four : tensor<64x96xf32>, tensor<64x96xf32>
  %ge = tessera_graph.gelu %y4 {approximate = "none"} : tensor<64x96xf32>
  %gt = tessera_graph.gelu %y4 : tensor<64x96xf32>
  %o3 = tessera_graph.sub %ge, %gt : tensor<64x96xf32>, tensor<64x96xf32>
  %si = tessera_graph.silu %y4 : tensor<64x96xf32>
  %mn = tessera_graph.min %x, %y : tensor<64x96xf32>, tensor<64x96xf32>
  %ng = tessera_graph.neg %mn : tensor<64x96xf32>
  %o4 = tessera_graph.max %si, %ng : tensor<64x96xf32>, tensor<64x96xf32>
  // bf16: every op rounds to bf16
  %xb = tessera_graph.cast %x4 : tensor<64x96xf32> -> tensor<64x96xbf16>
  %eb = tessera_graph.erf %xb : tensor<64x96xbf16>
  %o5 = tessera_graph.tanh %eb : tensor<64x96xbf16>
  // i32: neg, abs, min with a broadcast row (exact)
  %ni = tessera_graph.neg %i : tensor<64x96xi32>
  %ai = tessera_graph.abs %ni : tensor<64x96xi32>
  %o6 = tessera_graph.min %ai, %j : tensor<64x96xi32>, tensor<96xi32>
  return %o0, %o1, %o2, %o3, %o4, %o5, %o6 : tensor<64x96xf32>, tensor<64x96xf32>, tensor<64x96xf32>,
      tensor<64x96xf32>, tensor<64x96xf32>, tensor<64x96xbf16>, tensor<64x96xi32>
}
