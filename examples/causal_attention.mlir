// Causal attention as a decoder writes it, fused into one
// tessera_schedule.flash_attention with the causal mask (docs/ir.md,
// "Attention"): the mask is any expression of constants and iota that
// --tessera-graph-to-schedule evaluates at compile time and finds to be 0
// (or the scores selected) on and below the diagonal and at most -1e4 above
// it; the kernel then masks keys past each query itself and skips the key
// blocks above the diagonal. Each function is checked by tessera-run against
// the reference interpreter, which evaluates the unfused Graph IR:
//
//   tessera-run examples/causal_attention.mlir --function causal_heads
//   TESSERA_BACKEND=vulkan tessera-run examples/causal_attention.mlir --function causal_odd
//   tessera-run examples/causal_attention.mlir --function causal_heads --schedule attention=false
//
// @causal_heads: 12 heads of 256 queries x 64, the mask a select of the
// scores or -inf by compare(key <= query) on i32 iotas, broadcast over the
// heads.
func.func @causal_heads(%q: tensor<12x256x64xf32>, %kt: tensor<12x64x256xf32>,
                        %v: tensor<12x256x64xf32>) -> tensor<12x256x64xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<12x256x64xf32>, tensor<12x64x256xf32> -> tensor<12x256x256xf32>
  %scale = arith.constant dense<0.125> : tensor<12x256x256xf32>
  %s1 = tessera_graph.mul %s0, %scale : tensor<12x256x256xf32>, tensor<12x256x256xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<256x256xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<256x256xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<256x256xi32>, tensor<256x256xi32> -> tensor<256x256xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s2 = tessera_graph.select %keep, %s1, %ninf : tensor<256x256xi1>, tensor<12x256x256xf32>, tensor<f32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<12x256x256xf32>
  %o = tessera_graph.matmul %p, %v : tensor<12x256x256xf32>, tensor<12x256x64xf32> -> tensor<12x256x64xf32>
  return %o : tensor<12x256x64xf32>
}

// @causal_odd: one head of 200 queries and keys (not a multiple of the
// 64-row blocks: a partial key block and a partial query block), head dim
// 48, value dim 40; the mask added before the scale (a -1e9 where key >
// query, made by select on f32 iotas) and the scale 1/sqrt(48) after it.
func.func @causal_odd(%q: tensor<200x48xf32>, %kt: tensor<48x200xf32>, %v: tensor<200x40xf32>)
    -> tensor<200x40xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<200x48xf32>, tensor<48x200xf32> -> tensor<200x200xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<200x1xf32>
  %ki = tessera_graph.iota dim = 1 : tensor<1x200xf32>
  %above = tessera_graph.compare gt %ki, %qi : tensor<1x200xf32>, tensor<200x1xf32> -> tensor<200x200xi1>
  %big = arith.constant dense<-1.0e9> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %mask = tessera_graph.select %above, %big, %zero : tensor<200x200xi1>, tensor<f32>, tensor<f32> -> tensor<200x200xf32>
  %s1 = tessera_graph.add %mask, %s0 : tensor<200x200xf32>, tensor<200x200xf32>
  %scale = arith.constant dense<0.14433756729740643> : tensor<200x200xf32>
  %s2 = tessera_graph.mul %s1, %scale : tensor<200x200xf32>, tensor<200x200xf32>
  %p = tessera_graph.softmax %s2 dim = 1 : tensor<200x200xf32>
  %o = tessera_graph.matmul %p, %v : tensor<200x200xf32>, tensor<200x40xf32> -> tensor<200x40xf32>
  return %o : tensor<200x40xf32>
}

// @causal_cross: 96 queries over 160 keys (query i sees keys 0..i, the
// top-left alignment), 4 heads, blocks of 32 queries and 48 keys
// (--schedule "attn-block-q=32 attn-block-kv=48" in the ctest), the mask
// kept as the transformer block writes it: min(relu(key - query), 1) * -1e9.
func.func @causal_cross(%q: tensor<4x96x32xf32>, %kt: tensor<4x32x160xf32>, %v: tensor<4x160x32xf32>)
    -> tensor<4x96x32xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<4x96x32xf32>, tensor<4x32x160xf32> -> tensor<4x96x160xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<96x160xf32>
  %ki = tessera_graph.iota dim = 1 : tensor<96x160xf32>
  %one = arith.constant dense<1.0> : tensor<96x160xf32>
  %big = arith.constant dense<-1.0e9> : tensor<96x160xf32>
  %d = tessera_graph.sub %ki, %qi : tensor<96x160xf32>, tensor<96x160xf32>
  %above = tessera_graph.relu %d : tensor<96x160xf32>
  %m = tessera_graph.min %above, %one : tensor<96x160xf32>, tensor<96x160xf32>
  %mask = tessera_graph.mul %m, %big : tensor<96x160xf32>, tensor<96x160xf32>
  %s1 = tessera_graph.add %s0, %mask : tensor<4x96x160xf32>, tensor<96x160xf32>
  %p = tessera_graph.softmax %s1 dim = 2 : tensor<4x96x160xf32>
  %o = tessera_graph.matmul %p, %v : tensor<4x96x160xf32>, tensor<4x160x32xf32> -> tensor<4x96x32xf32>
  return %o : tensor<4x96x32xf32>
}
