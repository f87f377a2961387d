// Shapes the cpu backend cannot compile get a diagnostic at the function,
// never a crash (a zero-sized dim once divided by zero while choosing row
// blocks).  Dynamic shapes are a verifier error (Graph/invalid.mlir).
// RUN: not env TESSERA_BACKEND=cpu tessera-run %s --kernel zero_sized --iterations 1 2>&1 | FileCheck %s --check-prefix=ZERO

// ZERO: bad-shapes.mlir:[[@LINE+1]]:1: error: cpu backend: 'tensor<0x16xf32>' has no elements: zero-sized tensors are not supported
func.func @zero_sized(%a: tensor<0x16xf32>) -> tensor<0x16xf32> {
  %r = tessera_graph.exp %a : tensor<0x16xf32>
  return %r : tensor<0x16xf32>
}


