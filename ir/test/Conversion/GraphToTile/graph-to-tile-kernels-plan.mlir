// RUN: tessera-opt %s --tessera-gpu-graph-pipeline | FileCheck %s

// Launch plan corner cases (run on vulkan by ctest
// example.ir.vulkan.graph.edge_cases, tools/tessera-run/testdata/gpu_edge_cases.mlir).
// CHECK-LABEL: func.func @edge(
// A splat constant result: a fill kernel with no input (lower-layouts'
// folding moved the constant to the top of the block).
// CHECK-NEXT: call @edge_k0_elementwise(%arg8) {tessera.grid = array<i64: 1, 1, 1>}
// A tree holds one matmul: %m2 gets a buffer and its own GEMM first, %m1
// is computed in the GEMM whose epilogue adds %m2; the sum goes straight
// into output 0.
// CHECK-NEXT: %[[M2:.*]] = memref.alloc() {tessera.buffer = "intermediate", tessera.bytes = 5760 : i64}
// CHECK-NEXT: call @edge_k1_gemm(%arg0, %arg2, %[[M2]])
// CHECK-NEXT: call @edge_k2_gemm(%arg0, %arg1, %[[M2]], %arg4)
// %m3 has two users: materialized once, read by two elementwise kernels.
// CHECK-NEXT: %[[M3:.*]] = memref.alloc()
// CHECK-NEXT: call @edge_k3_gemm(%arg0, %arg1, %[[M3]])
// CHECK-NEXT: call @edge_k4_elementwise(%[[M3]], %arg5)
// CHECK-NEXT: call @edge_k5_elementwise(%[[M3]], %arg3, %arg6)
// %s returned twice and %a returned: copies.
// CHECK-NEXT: call @edge_k6_copy(%arg4, %arg7)
// CHECK-NEXT: call @edge_k7_copy(%arg0, %arg9)
// CHECK-NEXT: memref.dealloc %[[M2]]
// CHECK-NEXT: memref.dealloc %[[M3]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @edge_k0_elementwise(
// CHECK: %[[C:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: memref.store %[[C]], %arg0
// CHECK-LABEL: func.func @edge_k2_gemm(
// CHECK: math.fma
// CHECK: memref.load %arg2
// CHECK-NEXT: arith.addf
func.func @edge(%a: tensor<40x24xf32>, %b: tensor<24x36xf32>, %c: tensor<24x36xf32>, %d: tensor<40x36xf32>)
    -> (tensor<40x36xf32>, tensor<40x36xf32>, tensor<40x36xf32>, tensor<40x36xf32>, tensor<36xf32>, tensor<40x24xf32>) {
  %m1 = tessera_graph.matmul %a, %b : tensor<40x24xf32>, tensor<24x36xf32> -> tensor<40x36xf32>
  %m2 = tessera_graph.matmul %a, %c : tensor<40x24xf32>, tensor<24x36xf32> -> tensor<40x36xf32>
  %s = tessera_graph.add %m1, %m2 : tensor<40x36xf32>, tensor<40x36xf32>
  %m3 = tessera_graph.matmul %a, %b : tensor<40x24xf32>, tensor<24x36xf32> -> tensor<40x36xf32>
  %e = tessera_graph.exp %m3 : tensor<40x36xf32>
  %f = tessera_graph.mul %m3, %d : tensor<40x36xf32>, tensor<40x36xf32>
  %k = arith.constant dense<2.5> : tensor<36xf32>
  return %s, %e, %f, %s, %k, %a : tensor<40x36xf32>, tensor<40x36xf32>, tensor<40x36xf32>, tensor<40x36xf32>, tensor<36xf32>, tensor<40x24xf32>
}
