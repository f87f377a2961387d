// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s
// RUN: tessera-opt %s --tessera-gpu-graph-pipeline --tessera-strip-launch-plans=keep=odd_k0_gemm --tessera-tile-to-spirv --tessera-serialize-spirv=output=%t.spv
// RUN: spirv-val --target-env vulkan1.1 %t.spv

// M = 100, K = 70, N = 50: no dimension is a multiple of the 128x128x16 tile.
// Out-of-range A/B elements are read as 0 from a clamped address (select,
// no branch); out-of-range outputs are not stored (scf.if).
// CHECK-LABEL: func.func @odd(
// CHECK: call @odd_k0_gemm(%arg0, %arg1, %arg2, %arg3) {tessera.grid = array<i64: 1, 1, 1>}
// CHECK-LABEL: func.func @odd_k0_gemm(
// K rounded up to the slice: 80.
// CHECK: scf.for %{{.*}} = %c0 to %c80 step %c16
// CHECK: %[[KOK:.*]] = arith.cmpi ult, %{{.*}}, %c70 : index
// CHECK: %[[MOK:.*]] = arith.cmpi ult, %{{.*}}, %c100 : index
// CHECK: %[[OK:.*]] = arith.andi %[[MOK]], %[[KOK]] : i1
// CHECK: %[[IDX:.*]] = arith.select %[[OK]], %{{.*}}, %c0 : index
// CHECK: %[[V:.*]] = memref.load %arg0[%[[IDX]]]
// CHECK: arith.select %[[OK]], %[[V]], %cst : f32
// CHECK: tessera_tile.barrier
// CHECK: %[[ROK:.*]] = arith.cmpi ult, %{{.*}}, %c100 : index
// CHECK: %[[COK:.*]] = arith.cmpi ult, %{{.*}}, %c50 : index
// CHECK: %[[STORE:.*]] = arith.andi %[[ROK]], %[[COK]] : i1
// CHECK: scf.if %[[STORE]] {
// CHECK: arith.remui %{{.*}}, %c50 : index
// CHECK: arith.addf
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: memref.store %{{.*}}, %arg3
func.func @odd(%a: tensor<100x70xf32>, %w: tensor<70x50xf32>, %b: tensor<50xf32>) -> tensor<100x50xf32> {
  %0 = tessera_graph.matmul %a, %w : tensor<100x70xf32>, tensor<70x50xf32> -> tensor<100x50xf32>
  %1 = tessera_graph.add %0, %b : tensor<100x50xf32>, tensor<50xf32>
  %2 = tessera_graph.relu %1 : tensor<100x50xf32>
  return %2 : tensor<100x50xf32>
}
