// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s
// Several functions in one module: each Graph function becomes its own
// launch plan in place, its kernels right after it in launch order; a
// hand-written Tile IR kernel between them is left as it is (the
// conversion touches only the functions it planned).
// CHECK-LABEL: func.func @first(%arg0: memref<64xf32> {tessera.buffer = "input"}, %arg1: memref<64xf32> {tessera.buffer = "output"}) attributes {tessera.launch_plan}
// CHECK-NEXT: call @first_k0_elementwise(%arg0, %arg1)
// CHECK-NEXT: return
// CHECK: func.func @first_k0_elementwise(
// CHECK: math.exp
// CHECK: func.func @handwritten(%arg0: memref<64xf32>) attributes {tessera_tile.grid = array<i64: 1, 1, 1>, tessera_tile.group_size = array<i64: 64>}
// CHECK-NEXT: return
// CHECK: func.func @second(%arg0: memref<64xf32> {tessera.buffer = "input"}, %arg1: memref<64xf32> {tessera.buffer = "output"}) attributes {tessera.launch_plan}
// CHECK-NEXT: call @second_k0_elementwise(%arg0, %arg1)
// CHECK: func.func @second_k0_elementwise(
// CHECK: arith.cmpf olt
// CHECK-NOT: tessera_graph
func.func @first(%a: tensor<64xf32>) -> tensor<64xf32> {
  %e = tessera_graph.exp %a : tensor<64xf32>
  return %e : tensor<64xf32>
}
func.func @handwritten(%x: memref<64xf32>) attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 1, 1, 1>} {
  return
}
func.func @second(%a: tensor<64xf32>) -> tensor<64xf32> {
  %r = tessera_graph.relu %a : tensor<64xf32>
  return %r : tensor<64xf32>
}
