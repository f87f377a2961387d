// The storage order of every layout, checked element by element against an
// independent oracle (layout_storage_oracle.py enumerates blocks in storage
// order instead of using the offset formulas the compiler and tessera-run's
// reference share). tessera-run writes a layout result as its storage.
// RUN: python3 %S/layout_storage_oracle.py input %t.x.npy 8 12
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --kernel to_col --input %t.x.npy --output %t.col.npy --iterations 1 --tolerance 0
// RUN: python3 %S/layout_storage_oracle.py check %t.col.npy 8 12 col_major | FileCheck %s --check-prefix=COL
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --kernel to_blocked --input %t.x.npy --output %t.blk.npy --iterations 1 --tolerance 0
// RUN: python3 %S/layout_storage_oracle.py check %t.blk.npy 8 12 blocked:4,3 | FileCheck %s --check-prefix=BLK
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --kernel to_tiled --input %t.x.npy --output %t.til.npy --iterations 1 --tolerance 0
// RUN: python3 %S/layout_storage_oracle.py check %t.til.npy 8 12 tiled:4,6,2,3 | FileCheck %s --check-prefix=TIL
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --kernel to_interleaved --input %t.x.npy --output %t.int.npy --iterations 1 --tolerance 0
// RUN: python3 %S/layout_storage_oracle.py check %t.int.npy 8 12 interleaved:2 | FileCheck %s --check-prefix=INT
// COL: col_major: storage order OK (96 values)
// BLK: blocked:4,3: storage order OK (96 values)
// TIL: tiled:4,6,2,3: storage order OK (96 values)
// INT: interleaved:2: storage order OK (96 values)

func.func @to_col(%x: tensor<8x12xf32>) -> tensor<8x12xf32, #tessera_graph.layout<col_major>> {
  %y = tessera_graph.convert_layout %x : tensor<8x12xf32> -> tensor<8x12xf32, #tessera_graph.layout<col_major>>
  return %y : tensor<8x12xf32, #tessera_graph.layout<col_major>>
}
func.func @to_blocked(%x: tensor<8x12xf32>) -> tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>> {
  %y = tessera_graph.convert_layout %x : tensor<8x12xf32> -> tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>
  return %y : tensor<8x12xf32, #tessera_graph.layout<blocked<4, 3>>>
}
func.func @to_tiled(%x: tensor<8x12xf32>) -> tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>> {
  %y = tessera_graph.convert_layout %x : tensor<8x12xf32> -> tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>
  return %y : tensor<8x12xf32, #tessera_graph.layout<tiled<[4, 6], [2, 3]>>>
}
func.func @to_interleaved(%x: tensor<8x12xf32>) -> tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>> {
  %y = tessera_graph.convert_layout %x : tensor<8x12xf32> -> tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>
  return %y : tensor<8x12xf32, #tessera_graph.layout<interleaved<2>>>
}
