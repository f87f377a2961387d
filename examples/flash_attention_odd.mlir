// Attention with sizes that fit no vector width: 200 queries and keys (not a
// multiple of the default 64-row blocks), head dim 48, value dim 40, K^T in
// col_major layout (storage: K row-major), scale 1/sqrt(48):
//
//   TESSERA_BACKEND=cpu tessera-run examples/flash_attention_odd.mlir
//
// graph-to-schedule keeps blocks of 64 queries x 64 keys: three full key
// blocks and a partial one of 8 keys (its own static trip counts); a group
// of 100 queries runs a block of 64 and one of 36, whose lanes are padded to
// whole vectors (48) and never stored.
func.func @attention_odd(%q: tensor<200x48xf32>,
                         %kt: tensor<48x200xf32, #tessera_graph.layout<col_major>>,
                         %v: tensor<200x40xf32>) -> tensor<200x40xf32> {
  %scale = arith.constant dense<0.14433756729740643> : tensor<200xf32>
  %k_t = tessera_graph.convert_layout %kt : tensor<48x200xf32, #tessera_graph.layout<col_major>> -> tensor<48x200xf32>
  %s0 = tessera_graph.matmul %q, %k_t : tensor<200x48xf32>, tensor<48x200xf32> -> tensor<200x200xf32>
  %s = tessera_graph.mul %s0, %scale : tensor<200x200xf32>, tensor<200xf32>
  %p = tessera_graph.softmax %s dim = 1 : tensor<200x200xf32>
  %o = tessera_graph.matmul %p, %v : tensor<200x200xf32>, tensor<200x40xf32> -> tensor<200x40xf32>
  return %o : tensor<200x40xf32>
}
