// RUN: tessera-opt %s --tessera-lower-quantization | FileCheck %s

// quantize: v = x / s, then cast<i8>(v >= 0 ? v + 0.5 : v - 0.5);
// dequantize: cast<f32>(q) * s. A per-channel scale on the last dim
// broadcasts as it is; on another dim it is reshaped to [C, 1].
// CHECK-LABEL: func.func @per_tensor
// CHECK: %[[V:.*]] = tessera_graph.div %arg0, %arg1 : tensor<4x8xf32>, tensor<1xf32>
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK: %[[GE:.*]] = tessera_graph.compare ge %[[V]], %[[Z]]
// CHECK: %[[UP:.*]] = tessera_graph.add %[[V]]
// CHECK: %[[DOWN:.*]] = tessera_graph.sub %[[V]]
// CHECK: %[[R:.*]] = tessera_graph.select %[[GE]], %[[UP]], %[[DOWN]]
// CHECK: %[[Q:.*]] = tessera_graph.cast %[[R]] : tensor<4x8xf32> -> tensor<4x8xi8>
// CHECK: %[[F:.*]] = tessera_graph.cast %[[Q]] : tensor<4x8xi8> -> tensor<4x8xf32>
// CHECK: tessera_graph.mul %[[F]], %arg1 : tensor<4x8xf32>, tensor<1xf32>
// CHECK-NOT: quantize
func.func @per_tensor(%x: tensor<4x8xf32>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  %q = tessera_graph.quantize %x, %s : tensor<4x8xf32>, tensor<1xf32> -> tensor<4x8xi8>
  %y = tessera_graph.dequantize %q, %s : tensor<4x8xi8>, tensor<1xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @per_channel
// CHECK: tessera_graph.div %arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>
// CHECK: %[[S0:.*]] = tessera_graph.reshape %arg2 : tensor<4xf32> -> tensor<4x1xf32>
// CHECK: tessera_graph.mul %{{.*}}, %[[S0]] : tensor<4x8xf32>, tensor<4x1xf32>
func.func @per_channel(%x: tensor<4x8xf32>, %s: tensor<8xf32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  %q = tessera_graph.quantize %x, %s axis = 1 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi8>
  %y = tessera_graph.dequantize %q, %r axis = 0 : tensor<4x8xi8>, tensor<4xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
