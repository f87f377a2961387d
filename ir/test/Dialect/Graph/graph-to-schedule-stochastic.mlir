// RUN: tessera-opt %s --tessera-graph-to-schedule | FileCheck %s
// A stochastic cast keys its random bits by each element's index in the
// whole tensor, which elementwise tiles have and matmul / row-op epilogues
// (group-local positions) do not: the matmul's value is stored, and the
// cast (with the elementwise ops between) is a tile of its own.

// CHECK-LABEL: func.func @matmul_then_stochastic
// CHECK: tessera_schedule.tile
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.matmul
// CHECK-NEXT: tessera_schedule.yield
// CHECK: tessera_schedule.tile
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_graph.cast {{.*}}rounding = "stochastic"
func.func @matmul_then_stochastic(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf32>) -> tensor<16x16xbf16> {
  %m = tessera_graph.matmul %a, %b : tensor<16x8xf32>, tensor<8x16xf32> -> tensor<16x16xf32>
  %s = tessera_graph.add %m, %c : tensor<16x16xf32>, tensor<16xf32>
  %y = tessera_graph.cast %s {rounding = "stochastic", seed = 9} : tensor<16x16xf32> -> tensor<16x16xbf16>
  return %y : tensor<16x16xbf16>
}

// Round to nearest even still fuses into the matmul's epilogue.
// CHECK-LABEL: func.func @matmul_then_nearest
// CHECK: tessera_schedule.tile
// CHECK: tessera_graph.matmul
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_graph.cast
// CHECK-NOT: tessera_schedule.tile
func.func @matmul_then_nearest(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf32>) -> tensor<16x16xbf16> {
  %m = tessera_graph.matmul %a, %b : tensor<16x8xf32>, tensor<8x16xf32> -> tensor<16x16xf32>
  %s = tessera_graph.add %m, %c : tensor<16x16xf32>, tensor<16xf32>
  %y = tessera_graph.cast %s : tensor<16x16xf32> -> tensor<16x16xbf16>
  return %y : tensor<16x16xbf16>
}
