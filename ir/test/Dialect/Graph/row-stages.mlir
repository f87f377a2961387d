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
// their neighbours; one that moves it (a transpose) starts a part, whose
// groups split the rows of its result reading its input whole: the first
// transpose is a part of 6 rows, the second (back to 8 rows) starts the
// last part. A constant read by two parts is cloned into each (before its
// first reader), never passed as a buffer (nor taken for an output of the
// first).
// CHECK-LABEL: func.func @shared_constant(
// CHECK-NEXT: call @shared_constant_part0(%arg0, %arg1) :
// CHECK-NEXT: call @shared_constant_part1(
// CHECK-NEXT: call @shared_constant_part2(
// CHECK-NEXT: return
// CHECK: func.func private @shared_constant_part0(%{{.*}}: tensor<8x4xf32>, %{{.*}}: tensor<6x6xf32>) -> tensor<8x6xf32>
// CHECK-NEXT: arith.constant dense<1.500000e+00>
// CHECK-NEXT: tessera_graph.concat
// CHECK-NEXT: tessera_schedule.tile
// CHECK: func.func private @shared_constant_part1(%{{.*}}: tensor<8x6xf32>) -> tensor<6x8xf32>
// CHECK-NEXT: tessera_graph.transpose
// CHECK-NEXT: return
// CHECK: func.func private @shared_constant_part2(%{{.*}}: tensor<6x8xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: tessera_graph.transpose
// CHECK: tessera_graph.relu
// CHECK: arith.constant dense<1.500000e+00>
// CHECK-NEXT: tessera_graph.concat
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

// A gradient's transposes that only feed matmuls (dX = dY . W^T, dW =
// X^T . dY) are cloned into the matmuls' parts like constants, reading
// their operands in place there (a part input: the argument, or the
// forward's output of the first part); they make no part of their own and
// the function keeps none. The cut is over a list schedule: dX (16 rows,
// reading only arguments) joins the forward's part although the bias sum
// comes first in program order, and the returned transpose of h (128
// elements: too small to split) joins the bias sum's single-group part.
// CHECK-LABEL: func.func @gradient_transposes(
// CHECK-NOT: tessera_graph.transpose
// CHECK: return
// CHECK: func.func private @gradient_transposes_part0(%{{.*}}: tensor<16x12xf32>, %[[W:.*]]: tensor<12x8xf32>, %[[DY:.*]]: tensor<16x8xf32>)
// CHECK: tessera_graph.matmul {{.*}} -> tensor<16x8xf32>
// CHECK: %[[WT:.*]] = tessera_graph.transpose %[[W]] perm = [1, 0] : tensor<12x8xf32> -> tensor<8x12xf32>
// CHECK-NEXT: tessera_schedule.tile(%[[DY]], %[[WT]])
// CHECK: func.func private @gradient_transposes_part1(
// CHECK: tessera_graph.reduce
// CHECK: tessera_graph.transpose %{{.*}} perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT: return
// CHECK: func.func private @gradient_transposes_part2(%[[X:.*]]: tensor<16x12xf32>, %{{.*}}: tensor<16x8xf32>)
// CHECK-NEXT: %[[XT:.*]] = tessera_graph.transpose %[[X]] perm = [1, 0] : tensor<16x12xf32> -> tensor<12x16xf32>
// CHECK-NEXT: tessera_schedule.tile(%[[XT]],
// CHECK: func.func private @gradient_transposes_part3(%[[H:.*]]: tensor<16x8xf32>, %{{.*}}: tensor<16x8xf32>)
// CHECK-NEXT: %[[HT:.*]] = tessera_graph.transpose %[[H]] perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
// CHECK-NEXT: tessera_schedule.tile(%[[HT]],
func.func @gradient_transposes(%x: tensor<16x12xf32>, %w: tensor<12x8xf32>, %dy: tensor<16x8xf32>)
    -> (tensor<16x12xf32>, tensor<12x8xf32>, tensor<8x8xf32>, tensor<1x8xf32>, tensor<8x16xf32>) {
  %h = tessera_graph.matmul %x, %w : tensor<16x12xf32>, tensor<12x8xf32> -> tensor<16x8xf32>
  %db = tessera_graph.reduce sum %dy dims = [0] order = pairwise : tensor<16x8xf32> -> tensor<1x8xf32>
  %ht0 = tessera_graph.transpose %h perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %wt = tessera_graph.transpose %w perm = [1, 0] : tensor<12x8xf32> -> tensor<8x12xf32>
  %dx = tessera_graph.matmul %dy, %wt : tensor<16x8xf32>, tensor<8x12xf32> -> tensor<16x12xf32>
  %xt = tessera_graph.transpose %x perm = [1, 0] : tensor<16x12xf32> -> tensor<12x16xf32>
  %dw = tessera_graph.matmul %xt, %dy : tensor<12x16xf32>, tensor<16x8xf32> -> tensor<12x8xf32>
  %ht = tessera_graph.transpose %h perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %hh = tessera_graph.matmul %ht, %dy : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
  return %dx, %dw, %hh, %db, %ht0 : tensor<16x12xf32>, tensor<12x8xf32>, tensor<8x8xf32>, tensor<1x8xf32>, tensor<8x16xf32>
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

// Regression: a slice of a splat constant with 64 rows beside a run of 32
// rows was taken as row-local (a splat is the same in every row), so its
// part's groups covered only 32 of its rows and the other 32 were never
// written (garbage in the product, on the cpu). Every row value of a part
// has the part's row count: the 64-row slices are not in the 32-row part.
// CHECK-LABEL: func.func @constant_rows(
// CHECK: %[[C:.*]] = call @constant_rows_part0(%arg0) : (tensor<32x48xf32>) -> tensor<32x48xf32>
// CHECK: call @constant_rows_part1({{.*}}) -> tensor<64x20xf32>
// CHECK: func.func private @constant_rows_part0(
// CHECK-NOT: tessera_graph.slice
// CHECK: return {{.*}} : tensor<32x48xf32>
func.func @constant_rows(%x: tensor<32x48xf32>, %a: tensor<64x8xf32>, %w: tensor<8x20xf32>)
    -> (tensor<32x48xf32>, tensor<64x20xf32>) {
  %r = tessera_graph.cast %x : tensor<32x48xf32> -> tensor<32x48xbf16>
  %r32 = tessera_graph.cast %r : tensor<32x48xbf16> -> tensor<32x48xf32>
  %c = tessera_graph.matmul %a, %w : tensor<64x8xf32>, tensor<8x20xf32> -> tensor<64x20xf32>
  %k = arith.constant dense<0.3> : tensor<64x40xf32>
  %s = tessera_graph.slice %k offsets = [0, 20] strides = [1, 1] : tensor<64x40xf32> -> tensor<64x20xf32>
  %y = tessera_graph.mul %c, %s : tensor<64x20xf32>, tensor<64x20xf32>
  return %r32, %y : tensor<32x48xf32>, tensor<64x20xf32>
}
