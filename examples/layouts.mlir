// Layout conversions in Graph IR: row_major -> col_major -> blocked -> tiled
// -> interleaved -> row_major.  Every intermediate is returned in its own
// physical layout, so tessera-run checks each layout's element order against
// the reference (LayoutAttr::offset), and the final row-major tensor must equal
// the input exactly (ctest runs this with --tolerance 0).
//
//   TESSERA_BACKEND=cpu tessera-run examples/layouts.mlir --tolerance 0
func.func @layouts(%x: tensor<64x64xf32>)
    -> (tensor<64x64xf32, #tessera_graph.layout<col_major>>,
        tensor<64x64xf32, #tessera_graph.layout<blocked<16, 8>>>,
        tensor<64x64xf32, #tessera_graph.layout<tiled<[32, 16], [8, 4]>>>,
        tensor<64x64xf32, #tessera_graph.layout<interleaved<4>>>,
        tensor<64x64xf32>) {
  %c = tessera_graph.convert_layout %x : tensor<64x64xf32> -> tensor<64x64xf32, #tessera_graph.layout<col_major>>
  %b = tessera_graph.convert_layout %c : tensor<64x64xf32, #tessera_graph.layout<col_major>> -> tensor<64x64xf32, #tessera_graph.layout<blocked<16, 8>>>
  %t = tessera_graph.convert_layout %b : tensor<64x64xf32, #tessera_graph.layout<blocked<16, 8>>> -> tensor<64x64xf32, #tessera_graph.layout<tiled<[32, 16], [8, 4]>>>
  %i = tessera_graph.convert_layout %t : tensor<64x64xf32, #tessera_graph.layout<tiled<[32, 16], [8, 4]>>> -> tensor<64x64xf32, #tessera_graph.layout<interleaved<4>>>
  %r = tessera_graph.convert_layout %i : tensor<64x64xf32, #tessera_graph.layout<interleaved<4>>> -> tensor<64x64xf32>
  return %c, %b, %t, %i, %r
      : tensor<64x64xf32, #tessera_graph.layout<col_major>>,
        tensor<64x64xf32, #tessera_graph.layout<blocked<16, 8>>>,
        tensor<64x64xf32, #tessera_graph.layout<tiled<[32, 16], [8, 4]>>>,
        tensor<64x64xf32, #tessera_graph.layout<interleaved<4>>>,
        tensor<64x64xf32>
}
