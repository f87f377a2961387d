// A valid Graph IR program with an op the GPU lowering does not handle
// (a reduction over the rows): on vulkan, tessera-run must print a
// diagnostic naming the op and the backend and exit 1 (ctest
// example.ir.vulkan.graph_not_lowered).
func.func @column_sums(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %s = tessera_graph.reduce sum %x dims = [0] order = sequential : tensor<64x32xf32> -> tensor<32xf32>
  return %s : tensor<32xf32>
}
