// RUN: tessera-opt %s --tessera-graph-to-schedule --tessera-schedule-to-cpu | FileCheck %s

// A matmul with a fused bias+relu epilogue becomes a BLIS nest on memrefs:
// packed A/B buffers, an MRxNR register tile of vector<8xf32> updated with
// vector.fma, and the epilogue applied before the store.
// CHECK-LABEL: func.func @dense
// CHECK-SAME: (%{{.*}}: memref<96x64xf32>, %{{.*}}: memref<64x32xf32>, %{{.*}}: memref<32xf32>, %{{.*}}: memref<96x32xf32>, %{{.*}}: index
// CHECK-SAME: tessera.cpu_kernel = {grid = array<i64: 2, 1, 1>
// Packed A: (MC/MR + 1) slivers of KC x MR floats (MC = 96, KC = 64).
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<6528xf32>
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: arith.maxf
// CHECK: vector.store
func.func @dense(%x: tensor<96x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<96x32xf32> {
  %m = tessera_graph.matmul %x, %w : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
  %a = tessera_graph.add %m, %b : tensor<96x32xf32>, tensor<32xf32>
  %r = tessera_graph.relu %a : tensor<96x32xf32>
  return %r : tensor<96x32xf32>
}
