// Every layout converted to every other one (20 ordered pairs) in one
// program: each result must equal the reference exactly (--tolerance 0), and
// an error in a pair names its result. With layout-storage.mlir (the storage
// order of each layout against an independent oracle) this covers the
// conversions between all five layouts.
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --iterations 1 --tolerance 0 | FileCheck %s
// CHECK: verify: max abs error 0 ({{.*}}): PASS

func.func @all_pairs(%row: tensor<8x12xf32>, %col: tensor<8x12xf32, #tessera_graph.layout<col_major>>, %blk: tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, %til: tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>, %int: tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>)
    -> (tensor<8x12xf32, #tessera_graph.layout<col_major>>, tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>, tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>, tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>, tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>, tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<col_major>>, tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>, tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>, tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<col_major>>, tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>, tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<col_major>>, tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>) {
  %row_col = tessera_graph.convert_layout %row : tensor<8x12xf32> -> tensor<8x12xf32, #tessera_graph.layout<col_major>>
  %row_blk = tessera_graph.convert_layout %row : tensor<8x12xf32> -> tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>
  %row_til = tessera_graph.convert_layout %row : tensor<8x12xf32> -> tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>
  %row_int = tessera_graph.convert_layout %row : tensor<8x12xf32> -> tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>
  %col_row = tessera_graph.convert_layout %col : tensor<8x12xf32, #tessera_graph.layout<col_major>> -> tensor<8x12xf32>
  %col_blk = tessera_graph.convert_layout %col : tensor<8x12xf32, #tessera_graph.layout<col_major>> -> tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>
  %col_til = tessera_graph.convert_layout %col : tensor<8x12xf32, #tessera_graph.layout<col_major>> -> tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>
  %col_int = tessera_graph.convert_layout %col : tensor<8x12xf32, #tessera_graph.layout<col_major>> -> tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>
  %blk_row = tessera_graph.convert_layout %blk : tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>> -> tensor<8x12xf32>
  %blk_col = tessera_graph.convert_layout %blk : tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>> -> tensor<8x12xf32, #tessera_graph.layout<col_major>>
  %blk_til = tessera_graph.convert_layout %blk : tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>> -> tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>
  %blk_int = tessera_graph.convert_layout %blk : tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>> -> tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>
  %til_row = tessera_graph.convert_layout %til : tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>> -> tensor<8x12xf32>
  %til_col = tessera_graph.convert_layout %til : tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>> -> tensor<8x12xf32, #tessera_graph.layout<col_major>>
  %til_blk = tessera_graph.convert_layout %til : tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>> -> tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>
  %til_int = tessera_graph.convert_layout %til : tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>> -> tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>
  %int_row = tessera_graph.convert_layout %int : tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>> -> tensor<8x12xf32>
  %int_col = tessera_graph.convert_layout %int : tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>> -> tensor<8x12xf32, #tessera_graph.layout<col_major>>
  %int_blk = tessera_graph.convert_layout %int : tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>> -> tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>
  %int_til = tessera_graph.convert_layout %int : tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>> -> tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>
  return %row_col, %row_blk, %row_til, %row_int, %col_row, %col_blk, %col_til, %col_int, %blk_row, %blk_col, %blk_til, %blk_int, %til_row, %til_col, %til_blk, %til_int, %int_row, %int_col, %int_blk, %int_til : tensor<8x12xf32, #tessera_graph.layout<col_major>>, tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>, tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>, tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>, tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>, tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<col_major>>, tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>, tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>, tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<col_major>>, tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>, tensor<8x12xf32>, tensor<8x12xf32, #tessera_graph.layout<col_major>>, tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>, tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>
}
