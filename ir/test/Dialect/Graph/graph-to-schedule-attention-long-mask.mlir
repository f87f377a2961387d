// Causal masks are evaluated one query row at a time (ConstantMask.cpp),
// so a long sequence's mask is recognized with a row of memory: 4096 x
// 4096 (2^24 elements, beyond the 2^22 a whole mask could have).
// RUN: tessera-opt %s --tessera-graph-to-schedule | FileCheck %s

// CHECK-LABEL: func.func @long
// CHECK: tessera_schedule.flash_attention {{.*}} causal : tensor<4096x64xf32>
// CHECK-NOT: tessera_graph.iota
func.func @long(%q: tensor<4096x64xf32>, %kt: tensor<64x4096xf32>, %v: tensor<4096x64xf32>) -> tensor<4096x64xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<4096x64xf32>, tensor<64x4096xf32> -> tensor<4096x4096xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<4096x1xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<1x4096xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<1x4096xi32>, tensor<4096x1xi32> -> tensor<4096x4096xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s = tessera_graph.select %keep, %s0, %ninf : tensor<4096x4096xi1>, tensor<4096x4096xf32>, tensor<f32> -> tensor<4096x4096xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<4096x4096xf32>
  %o = tessera_graph.matmul %p, %v : tensor<4096x4096xf32>, tensor<4096x64xf32> -> tensor<4096x64xf32>
  return %o : tensor<4096x64xf32>
}

// A mask that differs between heads is checked head by head: causal in
// both (the second head's mask written differently) is fused ...
// CHECK-LABEL: func.func @per_head
// CHECK: tessera_schedule.flash_attention {{.*}} causal : tensor<2x64x32xf32>
func.func @per_head(%q: tensor<2x64x32xf32>, %kt: tensor<2x32x64xf32>, %v: tensor<2x64x32xf32>) -> tensor<2x64x32xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x64x32xf32>, tensor<2x32x64xf32> -> tensor<2x64x64xf32>
  %qi = tessera_graph.iota dim = 1 : tensor<2x64x64xf32>
  %ki = tessera_graph.iota dim = 2 : tensor<2x64x64xf32>
  %hi = tessera_graph.iota dim = 0 : tensor<2x64x64xf32>
  %d = tessera_graph.sub %ki, %qi : tensor<2x64x64xf32>, tensor<2x64x64xf32>
  %above = tessera_graph.relu %d : tensor<2x64x64xf32>
  %one = arith.constant dense<1.0> : tensor<2x64x64xf32>
  %m = tessera_graph.min %above, %one : tensor<2x64x64xf32>, tensor<2x64x64xf32>
  // head 0: -1e9, head 1: -2e9 above the diagonal
  %h1 = tessera_graph.add %hi, %one : tensor<2x64x64xf32>, tensor<2x64x64xf32>
  %big = arith.constant dense<-1.0e9> : tensor<2x64x64xf32>
  %per = tessera_graph.mul %h1, %big : tensor<2x64x64xf32>, tensor<2x64x64xf32>
  %mask = tessera_graph.mul %m, %per : tensor<2x64x64xf32>, tensor<2x64x64xf32>
  %s = tessera_graph.add %s0, %mask : tensor<2x64x64xf32>, tensor<2x64x64xf32>
  %p = tessera_graph.softmax %s dim = 2 : tensor<2x64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x64x64xf32>, tensor<2x64x32xf32> -> tensor<2x64x32xf32>
  return %o : tensor<2x64x32xf32>
}

// ... and a mask causal in head 0 only (head 1 also masks the diagonal)
// is not.
// CHECK-LABEL: func.func @head_differs
// CHECK-NOT: flash_attention
// CHECK: tessera_graph.softmax
func.func @head_differs(%q: tensor<2x64x32xf32>, %kt: tensor<2x32x64xf32>, %v: tensor<2x64x32xf32>) -> tensor<2x64x32xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x64x32xf32>, tensor<2x32x64xf32> -> tensor<2x64x64xf32>
  %qi = tessera_graph.iota dim = 1 : tensor<2x64x64xi32>
  %ki = tessera_graph.iota dim = 2 : tensor<2x64x64xi32>
  %hi = tessera_graph.iota dim = 0 : tensor<2x64x64xi32>
  // keep key <= query - head: head 1 masks its diagonal too
  %lim = tessera_graph.sub %qi, %hi : tensor<2x64x64xi32>, tensor<2x64x64xi32>
  %keep = tessera_graph.compare le %ki, %lim : tensor<2x64x64xi32>, tensor<2x64x64xi32> -> tensor<2x64x64xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s = tessera_graph.select %keep, %s0, %ninf : tensor<2x64x64xi1>, tensor<2x64x64xf32>, tensor<f32> -> tensor<2x64x64xf32>
  %p = tessera_graph.softmax %s dim = 2 : tensor<2x64x64xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x64x64xf32>, tensor<2x64x32xf32> -> tensor<2x64x32xf32>
  return %o : tensor<2x64x32xf32>
}
