// A blocked layout whose blocks do not divide the shape, exit 1.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0"; echo "exit code $?"' %s 2>&1 | FileCheck %s

func.func @f(%a: tensor<64x24xf32>) -> tensor<64x24xf32, #tessera_graph.layout<blocked<16, 16>>> {
  %b = tessera_graph.convert_layout %a : tensor<64x24xf32> -> tensor<64x24xf32, #tessera_graph.layout<blocked<16, 16>>>
  return %b : tensor<64x24xf32, #tessera_graph.layout<blocked<16, 16>>>
}
// CHECK: layout-not-dividing.mlir:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}layout blocked block [16, 16] does not divide the shape [64, 24]
// CHECK: exit code 1
