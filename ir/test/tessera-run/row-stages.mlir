// On cpu a kernel's groups split its dim-0 rows; a program that is not
// row-local runs as row-local parts, one launch each (row-stages, the
// default there), and matches the reference; row-stages=0 gives the one
// single-group kernel of before. Rows that no block size divides (67).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function colnorm --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=COL
// COL: colnorm for cpu (cpu): 3 kernels, 3 launches
// COL: verify: max abs error {{.*}}: PASS
// COL: exit code 0
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function colnorm --schedule row-stages=0 --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: colnorm for cpu (cpu): 1 kernel, 1 launch
// ONE: verify: max abs error {{.*}}: PASS
// ONE: exit code 0
// Heads: rows of tokens, reshaped (a part by rows), transposed to heads
// and multiplied over them (a part split by heads: each group's heads of
// the transposes read the rows whole), back to rows (a part split by rows).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function heads --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: heads for cpu (cpu): 3 kernels, 3 launches
// HEADS: verify: max abs error {{.*}}: PASS
// HEADS: exit code 0
// A value of one part read by two later ones, and a result that a later
// part also reads.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function fanout --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=FAN
// FAN: fanout for cpu (cpu): 3 kernels, 3 launches
// FAN: verify: max abs error {{.*}}: PASS
// FAN: exit code 0
// Shape ops that keep dim 0 (a slice and a pad of columns, a reshape and a
// transpose of the dims after it, a broadcast along a new last dim, a concat
// along dim 1, a gather of embedding rows) split by rows with their
// neighbours: one part for all of them, one for the column sums after
// them, over 300 rows (several groups).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function row_shapes --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=SHAPES
// SHAPES: row_shapes for cpu (cpu): 2 kernels, 2 launches
// SHAPES: verify: max abs error {{.*}}: PASS
// SHAPES: exit code 0
// A gradient's products with transposed operands (dX = dY . W^T,
// dW = X^T . dY, and a batched Q . K^T over heads) read the transposes in
// place (no part of their own: the bias sum's part, then one per product),
// at sizes no register tile divides (300 x 37 x 45).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function transposed_operands --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=TRANS
// TRANS: transposed_operands for cpu (cpu): 4 kernels, 4 launches
// TRANS: verify: max abs error {{.*}}: PASS
// TRANS: exit code 0
// Column reductions (sum, mean, max over dim 0 or a middle dim) are computed
// a vector of neighbouring columns at a time, in each column's order (45
// columns: vectors and a remainder), with an epilogue.
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function column_reductions --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=COLRED
// COLRED: verify: f32 results: max abs error 0 {{.*}}: PASS
// COLRED: verify: bf16 results: max abs error 0 {{.*}}: PASS
// COLRED: exit code 0
// Shape ops that move dim 0 (a reshape of the rows, a transpose, an argmax
// over dim 0, a gather, an iota) read the parts' inputs whole, so each is
// a part split by the rows of its result (several groups here), computed
// from the absolute index of each element; the elementwise ops after them
// join their parts, and so does the argmax the transpose's (both 24 rows).
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function whole_inputs --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=WHOLE
// WHOLE: whole_inputs for cpu (cpu): 5 kernels, 5 launches
// WHOLE: verify: f32 results: {{.*}}: PASS
// WHOLE: verify: i32 results: max abs error 0 {{.*}}: PASS
// WHOLE: exit code 0

func.func @whole_inputs(%x: tensor<300x24xf32>, %ids: tensor<3x40xi32>, %t: tensor<50x8xf32>)
    -> (tensor<150x48xf32>, tensor<24x300xf32>, tensor<24xi32>, tensor<3x40x8xf32>, tensor<64x30xf32>) {
  %e = tessera_graph.exp %x : tensor<300x24xf32>
  %r = tessera_graph.reshape %e : tensor<300x24xf32> -> tensor<150x48xf32>
  %rr = tessera_graph.relu %r : tensor<150x48xf32>
  %tr = tessera_graph.transpose %e perm = [1, 0] : tensor<300x24xf32> -> tensor<24x300xf32>
  %tn = tessera_graph.neg %tr : tensor<24x300xf32>
  %am = tessera_graph.argmax %x dim = 0 : tensor<300x24xf32> -> tensor<24xi32>
  %g = tessera_graph.gather %t, %ids : tensor<50x8xf32>, tensor<3x40xi32> -> tensor<3x40x8xf32>
  %io = tessera_graph.iota dim = 0 : tensor<64x30xf32>
  %i2 = tessera_graph.mul %io, %io : tensor<64x30xf32>, tensor<64x30xf32>
  return %rr, %tn, %am, %g, %i2 : tensor<150x48xf32>, tensor<24x300xf32>, tensor<24xi32>, tensor<3x40x8xf32>, tensor<64x30xf32>
}

func.func @transposed_operands(%x: tensor<300x37xf32>, %w: tensor<37x45xf32>, %dy: tensor<300x45xf32>,
                               %q: tensor<4x70x24xf32>, %k: tensor<4x50x24xf32>)
    -> (tensor<300x37xf32>, tensor<37x45xf32>, tensor<1x45xf32>, tensor<4x70x50xf32>) {
  %db = tessera_graph.reduce sum %dy dims = [0] order = pairwise : tensor<300x45xf32> -> tensor<1x45xf32>
  %wt = tessera_graph.transpose %w perm = [1, 0] : tensor<37x45xf32> -> tensor<45x37xf32>
  %dx = tessera_graph.matmul %dy, %wt : tensor<300x45xf32>, tensor<45x37xf32> -> tensor<300x37xf32>
  %xt = tessera_graph.transpose %x perm = [1, 0] : tensor<300x37xf32> -> tensor<37x300xf32>
  %dw = tessera_graph.matmul %xt, %dy : tensor<37x300xf32>, tensor<300x45xf32> -> tensor<37x45xf32>
  %kt = tessera_graph.transpose %k perm = [0, 2, 1] : tensor<4x50x24xf32> -> tensor<4x24x50xf32>
  %s = tessera_graph.matmul %q, %kt : tensor<4x70x24xf32>, tensor<4x24x50xf32> -> tensor<4x70x50xf32>
  return %dx, %dw, %db, %s : tensor<300x37xf32>, tensor<37x45xf32>, tensor<1x45xf32>, tensor<4x70x50xf32>
}

func.func @column_reductions(%x: tensor<67x45xf32>, %y: tensor<3x67x45xbf16>)
    -> (tensor<1x45xf32>, tensor<45xf32>, tensor<1x45xf32>, tensor<3x45xbf16>) {
  %s = tessera_graph.reduce sum %x dims = [0] order = pairwise : tensor<67x45xf32> -> tensor<1x45xf32>
  %one = arith.constant dense<1.0> : tensor<1x45xf32>
  %s1 = tessera_graph.add %s, %one : tensor<1x45xf32>, tensor<1x45xf32>
  %m = tessera_graph.reduce mean %x dims = [0] order = sequential : tensor<67x45xf32> -> tensor<45xf32>
  %mx = tessera_graph.reduce max %x dims = [0] order = pairwise : tensor<67x45xf32> -> tensor<1x45xf32>
  %h = tessera_graph.reduce sum %y dims = [1] order = pairwise {accum = f32} : tensor<3x67x45xbf16> -> tensor<3x45xbf16>
  return %s1, %m, %mx, %h : tensor<1x45xf32>, tensor<45xf32>, tensor<1x45xf32>, tensor<3x45xbf16>
}

func.func @row_shapes(%x: tensor<300x24xf32>, %ids: tensor<300xi32>, %table: tensor<50x8xf32>) -> tensor<1x32xf32> {
  %s = tessera_graph.slice %x offsets = [0, 4] strides = [1, 2] : tensor<300x24xf32> -> tensor<300x10xf32>
  %p = tessera_graph.pad %s low = [0, 1] high = [0, 1] value = 0.5 : tensor<300x10xf32> -> tensor<300x12xf32>
  %r = tessera_graph.reshape %p : tensor<300x12xf32> -> tensor<300x3x4xf32>
  %t = tessera_graph.transpose %r perm = [0, 2, 1] : tensor<300x3x4xf32> -> tensor<300x4x3xf32>
  %f = tessera_graph.reshape %t : tensor<300x4x3xf32> -> tensor<300x12xf32>
  %e = tessera_graph.gather %table, %ids : tensor<50x8xf32>, tensor<300xi32> -> tensor<300x8xf32>
  %b = tessera_graph.broadcast_in_dim %ids dims = [0] : tensor<300xi32> -> tensor<300x4xi32>
  %bf = tessera_graph.cast %b : tensor<300x4xi32> -> tensor<300x4xf32>
  %c = tessera_graph.concat %f, %e, %bf, %bf dim = 1 : tensor<300x12xf32>, tensor<300x8xf32>, tensor<300x4xf32>, tensor<300x4xf32> -> tensor<300x28xf32>
  %c2 = tessera_graph.concat %c, %bf dim = 1 : tensor<300x28xf32>, tensor<300x4xf32> -> tensor<300x32xf32>
  %g = tessera_graph.tanh %c2 : tensor<300x32xf32>
  %sum = tessera_graph.reduce sum %g dims = [0] order = sequential : tensor<300x32xf32> -> tensor<1x32xf32>
  return %sum : tensor<1x32xf32>
}

// A program with no inputs (a part made of iota and constants is one):
// RUN: sh -c 'TESSERA_BACKEND=cpu tessera-run "$0" --function no_inputs --iterations 1; echo "exit code $?"' %s 2>&1 | FileCheck %s --check-prefix=NOIN
// NOIN: no_inputs for cpu (cpu): 1 kernel, 1 launch
// NOIN: verify: max abs error 0 {{.*}}: PASS
// NOIN: exit code 0

func.func @no_inputs() -> tensor<5x7xi32> {
  %i = tessera_graph.iota dim = 1 : tensor<5x7xi32>
  return %i : tensor<5x7xi32>
}

func.func @colnorm(%x: tensor<67x32xf32>) -> tensor<67x32xf32> {
  %two = arith.constant dense<2.0> : tensor<67x32xf32>
  %y = tessera_graph.mul %x, %two : tensor<67x32xf32>, tensor<67x32xf32>
  %s = tessera_graph.reduce sum %y dims = [0] order = sequential : tensor<67x32xf32> -> tensor<1x32xf32>
  %z = tessera_graph.sub %y, %s : tensor<67x32xf32>, tensor<1x32xf32>
  %w = tessera_graph.mul %z, %two : tensor<67x32xf32>, tensor<67x32xf32>
  return %w : tensor<67x32xf32>
}

func.func @heads(%x: tensor<70x64xf32>, %wq: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<70x64xf32> {
  %q = tessera_graph.matmul %x, %wq : tensor<70x64xf32>, tensor<64x64xf32> -> tensor<70x64xf32>
  %q3 = tessera_graph.reshape %q : tensor<70x64xf32> -> tensor<70x4x16xf32>
  %qh = tessera_graph.transpose %q3 perm = [1, 0, 2] : tensor<70x4x16xf32> -> tensor<4x70x16xf32>
  %kt = tessera_graph.transpose %q3 perm = [1, 2, 0] : tensor<70x4x16xf32> -> tensor<4x16x70xf32>
  %s = tessera_graph.matmul %qh, %kt : tensor<4x70x16xf32>, tensor<4x16x70xf32> -> tensor<4x70x70xf32>
  %p = tessera_graph.softmax %s dim = 2 : tensor<4x70x70xf32>
  %o = tessera_graph.matmul %p, %qh : tensor<4x70x70xf32>, tensor<4x70x16xf32> -> tensor<4x70x16xf32>
  %o3 = tessera_graph.transpose %o perm = [1, 0, 2] : tensor<4x70x16xf32> -> tensor<70x4x16xf32>
  %o2 = tessera_graph.reshape %o3 : tensor<70x4x16xf32> -> tensor<70x64xf32>
  %y = tessera_graph.matmul %o2, %wo : tensor<70x64xf32>, tensor<64x64xf32> -> tensor<70x64xf32>
  return %y : tensor<70x64xf32>
}

func.func @fanout(%x: tensor<40x24xf32>) -> (tensor<40x24xf32>, tensor<40x24xf32>) {
  %e = tessera_graph.exp %x : tensor<40x24xf32>
  %m = tessera_graph.reduce max %e dims = [0] order = sequential : tensor<40x24xf32> -> tensor<1x24xf32>
  %d = tessera_graph.div %e, %m : tensor<40x24xf32>, tensor<1x24xf32>
  %n = tessera_graph.neg %d : tensor<40x24xf32>
  %r = tessera_graph.add %n, %e : tensor<40x24xf32>, tensor<40x24xf32>
  return %e, %r : tensor<40x24xf32>, tensor<40x24xf32>
}
