// RUN: tessera-opt %s --tessera-lower-layouts | FileCheck %s
// RUN: tessera-opt %s --tessera-lower-layouts | tessera-opt --tessera-lower-layouts | FileCheck %s
// The folded program computes the same values, bit for bit:
// RUN: env TESSERA_BACKEND=cpu tessera-run %s --kernel chain --tolerance 0 --iterations 1 | FileCheck %s --check-prefix=EXEC

#col = #tessera_graph.layout<col_major>
#blk = #tessera_graph.layout<blocked<16, 8>>
#til = #tessera_graph.layout<tiled<[32, 16], [8, 4]>>
#ilv = #tessera_graph.layout<interleaved<4>>

// A conversion to the type the tensor already has vanishes.
// CHECK-LABEL: func.func @identity
// CHECK-NOT: convert_layout
// CHECK: return %arg0
func.func @identity(%x: tensor<64x64xf32, #blk>) -> tensor<64x64xf32, #blk> {
  %y = tessera_graph.convert_layout %x : tensor<64x64xf32, #blk> -> tensor<64x64xf32, #blk>
  return %y : tensor<64x64xf32, #blk>
}

// A round trip through every layout is its input.
// CHECK-LABEL: func.func @round_trip
// CHECK-NOT: convert_layout
// CHECK: return %arg0
func.func @round_trip(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = tessera_graph.convert_layout %x : tensor<64x64xf32> -> tensor<64x64xf32, #col>
  %b = tessera_graph.convert_layout %c : tensor<64x64xf32, #col> -> tensor<64x64xf32, #blk>
  %t = tessera_graph.convert_layout %b : tensor<64x64xf32, #blk> -> tensor<64x64xf32, #til>
  %i = tessera_graph.convert_layout %t : tensor<64x64xf32, #til> -> tensor<64x64xf32, #ilv>
  %r = tessera_graph.convert_layout %i : tensor<64x64xf32, #ilv> -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// A chain becomes one conversion from the first layout to the last.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[Y:.*]] = tessera_graph.convert_layout %arg0 : tensor<64x64xf32, #tessera_graph.layout<col_major>> -> tensor<64x64xf32, #tessera_graph.layout<interleaved<4>>>
// CHECK-NEXT: return %[[Y]]
func.func @chain(%x: tensor<64x64xf32, #col>) -> tensor<64x64xf32, #ilv> {
  %b = tessera_graph.convert_layout %x : tensor<64x64xf32, #col> -> tensor<64x64xf32, #blk>
  %t = tessera_graph.convert_layout %b : tensor<64x64xf32, #blk> -> tensor<64x64xf32, #til>
  %i = tessera_graph.convert_layout %t : tensor<64x64xf32, #til> -> tensor<64x64xf32, #ilv>
  return %i : tensor<64x64xf32, #ilv>
}

// An intermediate the program returns is kept; the conversion after it
// starts from the source instead.
// CHECK-LABEL: func.func @shared_intermediate
// CHECK-DAG: %[[B:.*]] = tessera_graph.convert_layout %arg0 : tensor<64x64xf32> -> tensor<64x64xf32, #tessera_graph.layout<blocked<16, 8>>>
// CHECK-DAG: %[[T:.*]] = tessera_graph.convert_layout %arg0 : tensor<64x64xf32> -> tensor<64x64xf32, #tessera_graph.layout<tiled<[32, 16], [8, 4]>>>
// CHECK: return %[[B]], %[[T]]
func.func @shared_intermediate(%x: tensor<64x64xf32>)
    -> (tensor<64x64xf32, #blk>, tensor<64x64xf32, #til>) {
  %b = tessera_graph.convert_layout %x : tensor<64x64xf32> -> tensor<64x64xf32, #blk>
  %t = tessera_graph.convert_layout %b : tensor<64x64xf32, #blk> -> tensor<64x64xf32, #til>
  return %b, %t : tensor<64x64xf32, #blk>, tensor<64x64xf32, #til>
}

// Conversions feeding compute are not touched by anything but their chain.
// CHECK-LABEL: func.func @feeds_matmul
// CHECK: %[[K:.*]] = tessera_graph.convert_layout %arg1 : tensor<64x64xf32, #tessera_graph.layout<col_major>> -> tensor<64x64xf32>
// CHECK: tessera_graph.matmul %arg0, %[[K]]
func.func @feeds_matmul(%a: tensor<64x64xf32>, %kt: tensor<64x64xf32, #col>) -> tensor<64x64xf32> {
  %k = tessera_graph.convert_layout %kt : tensor<64x64xf32, #col> -> tensor<64x64xf32>
  %y = tessera_graph.matmul %a, %k : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

// EXEC: chain for cpu
// EXEC: max abs error 0 {{.*}} PASS
