// RUN: tessera-opt %s --tessera-schedule-to-cpu --canonicalize | FileCheck %s

// Elementwise ops and softmax outside matmul tiles run over their last dim
// in vector<8> chunks, then a scalar remainder (20 = 2 chunks + 4).

// CHECK-LABEL: func.func @softmax
// 1. row max: vector partial maxima, one horizontal max, the remainder.
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c8 iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// CHECK: arith.maxf %{{.*}} : vector<8xf32>
// CHECK: vector.reduction <maxf>
// CHECK: scf.for %{{.*}} = %c16 to %c20 step %c1 iter_args
// 2. exp(x - max) in vectors, kept in the output, summed.
// CHECK: math.exp %{{.*}} : vector<8xf32>
// CHECK: vector.store
// CHECK: vector.reduction <add>
// 3. the scale by 1/sum.
// CHECK: arith.divf
// CHECK: arith.mulf %{{.*}} : vector<8xf32>
func.func @softmax(%x: tensor<4x20xf32>) -> tensor<4x20xf32> {
  %p = tessera_graph.softmax %x dim = 1 : tensor<4x20xf32>
  return %p : tensor<4x20xf32>
}

// A bias add on bf16: bf16 chunks widened to f32, added, rounded back.
// CHECK-LABEL: func.func @bias_bf16
// CHECK: vector.load %{{.*}} : memref<4x20xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} : memref<20xbf16>, vector<8xbf16>
// CHECK: arith.addf %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}} : memref<4x20xbf16>, vector<8xbf16>
func.func @bias_bf16(%x: tensor<4x20xbf16>, %b: tensor<20xbf16>) -> tensor<4x20xbf16> {
  %y = tessera_graph.add %x, %b : tensor<4x20xbf16>, tensor<20xbf16>
  return %y : tensor<4x20xbf16>
}

// A rank-0 operand is broadcast to the chunk.
// CHECK-LABEL: func.func @scale
// CHECK: vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK: arith.mulf %{{.*}} : vector<8xf32>
func.func @scale(%x: tensor<4x20xf32>, %s: tensor<f32>) -> tensor<4x20xf32> {
  %y = tessera_graph.mul %x, %s : tensor<4x20xf32>, tensor<f32>
  return %y : tensor<4x20xf32>
}

// Not contiguous along the last dim (col_major): one element at a time.
// CHECK-LABEL: func.func @colmajor
// CHECK-NOT: vector<8x
// CHECK: return
func.func @colmajor(%x: tensor<8x16xf32, #tessera_graph.layout<col_major>>) -> tensor<8x16xf32, #tessera_graph.layout<col_major>> {
  %y = tessera_graph.exp %x : tensor<8x16xf32, #tessera_graph.layout<col_major>>
  return %y : tensor<8x16xf32, #tessera_graph.layout<col_major>>
}
