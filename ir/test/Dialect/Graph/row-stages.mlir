// RUN: tessera-opt %s --tessera-graph-to-schedule=row-stages=1 | FileCheck %s
// RUN: tessera-opt %s --tessera-graph-to-schedule | FileCheck %s --check-prefix=OFF

// row-stages: a function that is not row-local (some op does not map row i
// to row i) is cut, after grouping, into parts called in order; a row-local
// one stays one function (one kernel, its groups over blocks of rows).

// CHECK-LABEL: func.func @mlp(
// CHECK-NOT: call
// CHECK: tessera_schedule.tile
// CHECK-NOT: call
// CHECK: return
func.func @mlp(%x: tensor<128x64xf32>, %w1: tensor<64x256xf32>, %b1: tensor<256xf32>) -> tensor<128x256xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
  %h = tessera_graph.add %h0, %b1 : tensor<128x256xf32>, tensor<256xf32>
  return %h : tensor<128x256xf32>
}

// A reduction over dim 0 between two row-local runs: three parts, the
// column sums a [1 x 32] intermediate read whole by the last part.
// CHECK-LABEL: func.func @colnorm(
// CHECK-SAME: attributes {tessera.row_stages}
// CHECK-NEXT: %[[Y:.*]] = call @colnorm_part0(%arg0) : (tensor<67x32xf32>) -> tensor<67x32xf32>
// CHECK-NEXT: %[[S:.*]] = call @colnorm_part1(%[[Y]]) : (tensor<67x32xf32>) -> tensor<1x32xf32>
// CHECK-NEXT: %[[W:.*]] = call @colnorm_part2(%[[Y]], %[[S]]) : (tensor<67x32xf32>, tensor<1x32xf32>) -> tensor<67x32xf32>
// CHECK-NEXT: return %[[W]]
// CHECK: func.func private @colnorm_part0(
// CHECK: tessera_graph.mul
// CHECK: func.func private @colnorm_part1(
// CHECK: tessera_graph.reduce sum %{{.*}} dims = [0]
// CHECK: func.func private @colnorm_part2(
// CHECK: tessera_graph.sub
// CHECK: tessera_graph.mul
// OFF-LABEL: func.func @colnorm(
// OFF-NOT: call
// OFF: return
func.func @colnorm(%x: tensor<67x32xf32>) -> tensor<67x32xf32> {
  %two = arith.constant dense<2.0> : tensor<67x32xf32>
  %y = tessera_graph.mul %x, %two : tensor<67x32xf32>, tensor<67x32xf32>
  %s = tessera_graph.reduce sum %y dims = [0] order = sequential : tensor<67x32xf32> -> tensor<1x32xf32>
  %z = tessera_graph.sub %y, %s : tensor<67x32xf32>, tensor<1x32xf32>
  %w = tessera_graph.mul %z, %two : tensor<67x32xf32>, tensor<67x32xf32>
  return %w : tensor<67x32xf32>
}

// Shape ops that keep dim 0 (a concat along dim 1) are row-local and join
// their neighbours; ones that move it (the transposes) are a single-group
// part. A constant read by two parts is cloned into each, never passed as
// a buffer (nor taken for an output of the first).
// CHECK-LABEL: func.func @shared_constant(
// CHECK-NEXT: call @shared_constant_part0(%arg0, %arg1) :
// CHECK-NEXT: call @shared_constant_part1(
// CHECK-NEXT: call @shared_constant_part2(
// CHECK-NEXT: return
// CHECK: func.func private @shared_constant_part0(%{{.*}}: tensor<8x4xf32>, %{{.*}}: tensor<6x6xf32>) -> tensor<8x6xf32>
// CHECK-NEXT: arith.constant dense<1.500000e+00>
// CHECK-NEXT: tessera_graph.concat
// CHECK-NEXT: tessera_schedule.tile
// CHECK: func.func private @shared_constant_part1(
// CHECK-NEXT: tessera_graph.transpose
// CHECK-NEXT: tessera_graph.transpose
// CHECK-NEXT: return
// CHECK: func.func private @shared_constant_part2(%{{.*}}: tensor<8x6xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: arith.constant dense<1.500000e+00>
// CHECK: tessera_graph.relu
// CHECK: tessera_graph.concat
// CHECK-NEXT: tessera_graph.concat
func.func @shared_constant(%x: tensor<8x4xf32>, %w: tensor<6x6xf32>) -> tensor<8x12xf32> {
  %c = arith.constant dense<1.5> : tensor<8x2xf32>
  %a = tessera_graph.concat %x, %c dim = 1 : tensor<8x4xf32>, tensor<8x2xf32> -> tensor<8x6xf32>
  %m = tessera_graph.matmul %a, %w : tensor<8x6xf32>, tensor<6x6xf32> -> tensor<8x6xf32>
  %t = tessera_graph.transpose %m perm = [1, 0] : tensor<8x6xf32> -> tensor<6x8xf32>
  %u = tessera_graph.transpose %t perm = [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  %r = tessera_graph.relu %u : tensor<8x6xf32>
  %b = tessera_graph.concat %r, %c dim = 1 : tensor<8x6xf32>, tensor<8x2xf32> -> tensor<8x8xf32>
  %d = tessera_graph.concat %b, %c, %c dim = 1 : tensor<8x8xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x12xf32>
  return %d : tensor<8x12xf32>
}

// Left whole: only shape ops (one part), a result that is an argument, and
// one value returned twice (a part writes each of its outputs once).
// CHECK-LABEL: func.func @shapes(
// CHECK-NOT: call
// CHECK-LABEL: func.func @returns_argument(
// CHECK-NOT: call
// CHECK-LABEL: func.func @returned_twice(
// CHECK-NOT: call
// CHECK: return
func.func @shapes(%x: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %t = tessera_graph.transpose %x perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
func.func @returns_argument(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<1x4xf32>) {
  %e = tessera_graph.exp %x : tensor<8x4xf32>
  %s = tessera_graph.reduce sum %e dims = [0] order = sequential : tensor<8x4xf32> -> tensor<1x4xf32>
  return %x, %s : tensor<8x4xf32>, tensor<1x4xf32>
}
func.func @returned_twice(%x: tensor<8x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %e = tessera_graph.exp %x : tensor<8x4xf32>
  %s = tessera_graph.reduce sum %e dims = [0] order = sequential : tensor<8x4xf32> -> tensor<1x4xf32>
  return %s, %s : tensor<1x4xf32>, tensor<1x4xf32>
}
