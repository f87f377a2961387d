// A bf16 MLP layer: y = bf16(gelu(x W + b)), bf16 activations and weights,
// f32 accumulation (stated as the policy `accum = f32` on the matmul), bias
// and activation, one rounding to bf16 at the end.
//
//   tessera-run examples/mixed_precision.mlir      # compile, run, verify
//   tessera-opt --tessera-graph-to-schedule examples/mixed_precision.mlir
//
// graph-to-schedule fuses matmul, add, gelu and the cast into one tile; the
// cpu kernel widens x and W to f32 while packing them (the f32 micro-kernel
// runs unchanged), keeps the partial sums of the K = 512 slices in f32
// scratch and stores each output once, rounded to bf16 (docs/ir.md).
func.func @mlp_bf16(%x: tensor<128x512xbf16>, %w: tensor<512x1024xbf16>,
                    %b: tensor<1024xf32>) -> tensor<128x1024xbf16> {
  %h0 = tessera_graph.matmul %x, %w {accum = f32} : tensor<128x512xbf16>, tensor<512x1024xbf16> -> tensor<128x1024xf32>
  %h1 = tessera_graph.add %h0, %b : tensor<128x1024xf32>, tensor<1024xf32>
  %h = tessera_graph.gelu %h1 : tensor<128x1024xf32>
  %y = tessera_graph.cast %h : tensor<128x1024xf32> -> tensor<128x1024xbf16>
  return %y : tensor<128x1024xbf16>
}
