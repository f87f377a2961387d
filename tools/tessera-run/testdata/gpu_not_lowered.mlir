// A valid Graph IR program with an op the GPU lowering does not handle (an
// element type conversion: the GPU path is f32-only): on vulkan,
// tessera-run must print a diagnostic naming the op and the backend and
// exit 1 (ctest example.ir.vulkan.graph_not_lowered).
func.func @to_half(%x: tensor<64x32xf32>) -> tensor<64x32xf16> {
  %h = tessera_graph.cast %x : tensor<64x32xf32> -> tensor<64x32xf16>
  return %h : tensor<64x32xf16>
}
