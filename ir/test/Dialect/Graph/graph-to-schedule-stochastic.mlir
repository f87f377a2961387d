// RUN: tessera-opt %s --tessera-graph-to-schedule | FileCheck %s
// A stochastic cast keys its random bits by each element's index in the
// whole tensor, which every backend's matmul and row-op epilogues compute
// (the cpu's from its group's first row): it fuses like any elementwise op,
// with no extra pass over the tensor (bits checked against an independent
// definition by tests/stochastic_rounding_check.py, sr_matmul / sr_softmax).

// CHECK-LABEL: func.func @matmul_then_stochastic
// CHECK: tessera_schedule.tile
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tessera_graph.matmul
// CHECK-NEXT: tessera_graph.add
// CHECK-NEXT: tessera_graph.cast {{.*}}rounding = "stochastic"
// CHECK-NEXT: tessera_schedule.yield
// CHECK-NOT: tessera_schedule.tile
// CHECK: return
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
