// compare and select (docs/ir.md): a causal attention mask written as
// iota + compare + select before the softmax, and the i1 tensors of
// `compare` as results (stored one byte each, 0 or 1: numpy's bool),
// verified against the reference interpreter on every backend:
//
//   tessera-run examples/causal_mask.mlir                      (cpu)
//   TESSERA_BACKEND=vulkan tessera-run examples/causal_mask.mlir
//   tessera-run examples/causal_mask.mlir --kernel nan_compare --tolerance 0
//   tessera-run examples/causal_mask.mlir --kernel fused_epilogues
//
// @causal_mask: scores[q, k] stay where k <= q and become -1e9 above the
// diagonal (compare and select are one fused tile; the softmax reads the
// masked scores); then compares with numpy broadcasting (a [96] row, a [64, 1]
// column) on f32, i32 and bf16, selects in each type, and casts between
// i1 and f32 (i1 -> 0 / 1; f32 -> i1 is x != 0).
func.func @causal_mask(%scores: tensor<64x64xf32>, %x: tensor<64x96xf32>, %y: tensor<96xf32>,
                       %i: tensor<64x96xi32>, %j: tensor<64x1xi32>, %h: tensor<64x96xbf16>,
                       %g: tensor<96xbf16>)
    -> (tensor<64x64xf32>, tensor<64x96xi1>, tensor<64x96xf32>, tensor<64x96xi32>, tensor<64x96xbf16>,
        tensor<64x96xi1>) {
  %qi = tessera_graph.iota dim = 0 : tensor<64x64xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<64x64xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<64x64xi32>, tensor<64x64xi32> -> tensor<64x64xi1>
  %neg = arith.constant dense<-1.0e9> : tensor<64x64xf32>
  %masked = tessera_graph.select %keep, %scores, %neg : tensor<64x64xi1>, tensor<64x64xf32>, tensor<64x64xf32>
  %p = tessera_graph.softmax %masked dim = 1 : tensor<64x64xf32>
  // f32 with a broadcast row: the i1 result itself, and max(x, y) by select
  %lt = tessera_graph.compare lt %x, %y : tensor<64x96xf32>, tensor<96xf32> -> tensor<64x96xi1>
  %mx = tessera_graph.select %lt, %y, %x : tensor<64x96xi1>, tensor<96xf32>, tensor<64x96xf32> -> tensor<64x96xf32>
  // i1 -> f32 (0 / 1), f32 -> i1 (x != 0), i1 == i1, fused with the select
  %lf = tessera_graph.cast %lt : tensor<64x96xi1> -> tensor<64x96xf32>
  %nz = tessera_graph.cast %x : tensor<64x96xf32> -> tensor<64x96xi1>
  %both = tessera_graph.compare eq %nz, %lt : tensor<64x96xi1>, tensor<64x96xi1> -> tensor<64x96xi1>
  %bf = tessera_graph.cast %both : tensor<64x96xi1> -> tensor<64x96xf32>
  %s0 = tessera_graph.add %mx, %lf : tensor<64x96xf32>, tensor<64x96xf32>
  %s1 = tessera_graph.add %s0, %bf : tensor<64x96xf32>, tensor<64x96xf32>
  // i32 with a broadcast column: where i > j, i, else j
  %gt = tessera_graph.compare gt %i, %j : tensor<64x96xi32>, tensor<64x1xi32> -> tensor<64x96xi1>
  %im = tessera_graph.select %gt, %i, %j : tensor<64x96xi1>, tensor<64x96xi32>, tensor<64x1xi32>
  // bf16: where h >= g, h, else -h; ne of two masks as a second i1 result
  %ge = tessera_graph.compare ge %h, %g : tensor<64x96xbf16>, tensor<96xbf16> -> tensor<64x96xi1>
  %hn = tessera_graph.neg %h : tensor<64x96xbf16>
  %hs = tessera_graph.select %ge, %h, %hn : tensor<64x96xi1>, tensor<64x96xbf16>, tensor<64x96xbf16>
  %gi = tessera_graph.cast %h : tensor<64x96xbf16> -> tensor<64x96xi32>
  %ne = tessera_graph.compare ne %gi, %i : tensor<64x96xi32>, tensor<64x96xi32> -> tensor<64x96xi1>
  return %p, %lt, %s1, %im, %hs, %ne : tensor<64x64xf32>, tensor<64x96xi1>, tensor<64x96xf32>,
      tensor<64x96xi32>, tensor<64x96xbf16>, tensor<64x96xi1>
}

// IEEE comparisons with NaN (--tolerance 0): every predicate is false but
// ne, which is true; x == x holds for the (finite) inputs.
func.func @nan_compare(%x: tensor<4x16xf32>)
    -> (tensor<4x16xi1>, tensor<4x16xi1>, tensor<4x16xi1>, tensor<4x16xi1>, tensor<4x16xi1>, tensor<4x16xi1>,
        tensor<4x16xi1>, tensor<4x16xf32>) {
  %nan = arith.constant dense<0x7FC00000> : tensor<4x16xf32>
  %zero = arith.constant dense<0.0> : tensor<4x16xf32>
  %eq = tessera_graph.compare eq %x, %nan : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xi1>
  %ne = tessera_graph.compare ne %x, %nan : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xi1>
  %lt = tessera_graph.compare lt %nan, %x : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xi1>
  %le = tessera_graph.compare le %x, %nan : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xi1>
  %gt = tessera_graph.compare gt %nan, %x : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xi1>
  %ge = tessera_graph.compare ge %x, %nan : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xi1>
  %same = tessera_graph.compare eq %x, %x : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xi1>
  // where x < NaN (never): x, else 0; NaN != NaN as a cast to f32 (1.0) added
  %none = tessera_graph.select %lt, %x, %zero : tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>
  %nn = tessera_graph.compare ne %nan, %nan : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xi1>
  %one = tessera_graph.cast %nn : tensor<4x16xi1> -> tensor<4x16xf32>
  %r = tessera_graph.add %none, %one : tensor<4x16xf32>, tensor<4x16xf32>
  return %eq, %ne, %lt, %le, %gt, %ge, %same, %r : tensor<4x16xi1>, tensor<4x16xi1>, tensor<4x16xi1>,
      tensor<4x16xi1>, tensor<4x16xi1>, tensor<4x16xi1>, tensor<4x16xi1>, tensor<4x16xf32>
}

// compare and select in the epilogues of the tile roots (one kernel per
// root, docs/ir.md "Schedule IR: the groups"): a matmul whose result is
// only compared (its epilogue stores i1 bytes), a softmax compared and
// selected on, a reduce compared with a row threshold, and a matmul
// selected by a broadcast [37, 1] i1 column; odd sizes (37 x 13: vector
// chunks and remainders).
func.func @fused_epilogues(%a: tensor<37x29xf32>, %w: tensor<29x13xf32>, %t: tensor<13xf32>, %x: tensor<37x13xf32>,
                           %y: tensor<37x13xf32>, %m: tensor<37x1xi1>, %thr: tensor<37xf32>)
    -> (tensor<37x13xi1>, tensor<37x13xf32>, tensor<37xi1>, tensor<37x13xf32>) {
  %mm = tessera_graph.matmul %a, %w : tensor<37x29xf32>, tensor<29x13xf32> -> tensor<37x13xf32>
  %c = tessera_graph.compare gt %mm, %t : tensor<37x13xf32>, tensor<13xf32> -> tensor<37x13xi1>
  %sm = tessera_graph.softmax %x dim = 1 : tensor<37x13xf32>
  %cut = arith.constant dense<0.08> : tensor<37x13xf32>
  %big = tessera_graph.compare ge %sm, %cut : tensor<37x13xf32>, tensor<37x13xf32> -> tensor<37x13xi1>
  %s = tessera_graph.select %big, %y, %x : tensor<37x13xi1>, tensor<37x13xf32>, tensor<37x13xf32>
  %r = tessera_graph.reduce max %y dims = [1] order = pairwise : tensor<37x13xf32> -> tensor<37xf32>
  %rc = tessera_graph.compare gt %r, %thr : tensor<37xf32>, tensor<37xf32> -> tensor<37xi1>
  %mm2 = tessera_graph.matmul %a, %w : tensor<37x29xf32>, tensor<29x13xf32> -> tensor<37x13xf32>
  %zero = arith.constant dense<0.0> : tensor<37x13xf32>
  %e = tessera_graph.select %m, %mm2, %zero : tensor<37x1xi1>, tensor<37x13xf32>, tensor<37x13xf32>
  return %c, %s, %rc, %e : tensor<37x13xi1>, tensor<37x13xf32>, tensor<37xi1>, tensor<37x13xf32>
}
