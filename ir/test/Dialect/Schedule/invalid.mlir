// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @micro(%x: tensor<96x64xf32>, %w: tensor<64x32xf32>) -> tensor<96x32xf32> {
  // expected-error @+1 {{micro tile [5, 16] does not divide the cache tile [96, 256]}}
  %y = tessera_schedule.tile (%x, %w) tile_sizes = [96, 256, 256] micro_tile = [5, 16] {
  ^bb0(%a: tensor<96x64xf32>, %b: tensor<64x32xf32>):
    %m = tessera_graph.matmul %a, %b : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
    tessera_schedule.yield %m : tensor<96x32xf32>
  } : (tensor<96x64xf32>, tensor<64x32xf32>) -> tensor<96x32xf32>
  return %y : tensor<96x32xf32>
}

// -----

func.func @matmul_sizes(%x: tensor<96x64xf32>, %w: tensor<64x32xf32>) -> tensor<96x32xf32> {
  // expected-error @+1 {{a tile with a matmul needs tile_sizes = [MC, NC, KC]}}
  %y = tessera_schedule.tile (%x, %w) tile_sizes = [96] micro_tile = [8] {
  ^bb0(%a: tensor<96x64xf32>, %b: tensor<64x32xf32>):
    %m = tessera_graph.matmul %a, %b : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
    tessera_schedule.yield %m : tensor<96x32xf32>
  } : (tensor<96x64xf32>, tensor<64x32xf32>) -> tensor<96x32xf32>
  return %y : tensor<96x32xf32>
}

// -----

func.func @row_sizes(%x: tensor<96x64xf32>) -> tensor<96x64xf32> {
  // expected-error @+1 {{a tile without matmul needs tile_sizes = [R] (rows per work item)}}
  %y = tessera_schedule.tile (%x) tile_sizes = [96, 256, 256] micro_tile = [6, 16] {
  ^bb0(%a: tensor<96x64xf32>):
    %s = tessera_graph.softmax %a dim = 1 : tensor<96x64xf32>
    tessera_schedule.yield %s : tensor<96x64xf32>
  } : (tensor<96x64xf32>) -> tensor<96x64xf32>
  return %y : tensor<96x64xf32>
}

// -----

func.func @row_vector(%x: tensor<96x64xf32>) -> tensor<96x64xf32> {
  // expected-error @+1 {{a tile without matmul needs micro_tile = [V] (vector width)}}
  %y = tessera_schedule.tile (%x) tile_sizes = [32] micro_tile = [8, 8] {
  ^bb0(%a: tensor<96x64xf32>):
    %s = tessera_graph.exp %a : tensor<96x64xf32>
    tessera_schedule.yield %s : tensor<96x64xf32>
  } : (tensor<96x64xf32>) -> tensor<96x64xf32>
  return %y : tensor<96x64xf32>
}

// -----

func.func @no_pipeline(%a: memref<512xf32>, %k: index) {
  // expected-error @+1 {{double_buffer needs an enclosing tessera_schedule.pipeline}}
  %t = tessera_schedule.prefetch %a[%k] scope = "shared" double_buffer : memref<512xf32> -> memref<64xf32, 3>
  return
}

// -----

func.func @divide(%a: memref<500xf32>, %k: index) {
  // expected-error @+1 {{tile dimension 0 (64) does not divide the source dimension (500)}}
  %t = tessera_schedule.prefetch %a[%k] scope = "shared" : memref<500xf32> -> memref<64xf32, 3>
  return
}

// -----

func.func @copy(%a: memref<64xf32>, %b: memref<32xf32>) {
  // expected-error @+1 {{must have the same shape and element type}}
  tessera_schedule.copy %a, %b : memref<64xf32>, memref<32xf32>
  return
}

// -----

func.func @attn_head_dim(%q: tensor<128x64xf32>, %kt: tensor<32x128xf32>, %v: tensor<128x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{head dims differ: query [128, 64] has d = 64 but key_t (K^T) has 32 rows}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64
      : tensor<128x64xf32>, tensor<32x128xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

func.func @attn_block_kv(%q: tensor<128x64xf32>, %kt: tensor<64x48xf32>, %v: tensor<48x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{block_kv = 64 exceeds the 48 keys}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64
      : tensor<128x64xf32>, tensor<64x48xf32>, tensor<48x64xf32> -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

func.func @attn_block_q(%q: tensor<32x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> tensor<32x64xf32> {
  // expected-error @+1 {{block_q = 64 exceeds the 32 query rows}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64
      : tensor<32x64xf32>, tensor<64x128xf32>, tensor<128x64xf32> -> tensor<32x64xf32>
  return %o : tensor<32x64xf32>
}

// -----

func.func @attn_block_zero(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{block sizes must be positive, got block_q = 0 block_kv = 64}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 0 block_kv = 64
      : tensor<128x64xf32>, tensor<64x128xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

func.func @attn_value_rows(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<64x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{value has 64 rows but key_t has 128 keys}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64
      : tensor<128x64xf32>, tensor<64x128xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

func.func @attn_result(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x32xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{result must be [128, 32]}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64
      : tensor<128x64xf32>, tensor<64x128xf32>, tensor<128x32xf32> -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

func.func @attn_types(%q: tensor<128x64xf16>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{must have the same float element type}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64
      : tensor<128x64xf16>, tensor<64x128xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

func.func @attn_rank(%q: tensor<2x2x128x64xf32>, %kt: tensor<2x2x64x128xf32>, %v: tensor<2x2x128x64xf32>) -> tensor<2x2x128x64xf32> {
  // expected-error @+1 {{query must be rank 2 ([S, d]) or 3 ([batch, S, d]), got 'tensor<2x2x128x64xf32>'}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64
      : tensor<2x2x128x64xf32>, tensor<2x2x64x128xf32>, tensor<2x2x128x64xf32> -> tensor<2x2x128x64xf32>
  return %o : tensor<2x2x128x64xf32>
}

// -----

func.func @attn_mixed_rank(%q: tensor<2x128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<2x128x64xf32>) -> tensor<2x128x64xf32> {
  // expected-error @+1 {{key_t must have the query's rank 3, got 'tensor<64x128xf32>'}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64 causal
      : tensor<2x128x64xf32>, tensor<64x128xf32>, tensor<2x128x64xf32> -> tensor<2x128x64xf32>
  return %o : tensor<2x128x64xf32>
}

// -----

func.func @attn_batch(%q: tensor<2x128x64xf32>, %kt: tensor<3x64x128xf32>, %v: tensor<2x128x64xf32>) -> tensor<2x128x64xf32> {
  // expected-error @+1 {{batch dims differ: query has 2, key_t has 3}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64
      : tensor<2x128x64xf32>, tensor<3x64x128xf32>, tensor<2x128x64xf32> -> tensor<2x128x64xf32>
  return %o : tensor<2x128x64xf32>
}

// -----

func.func @attn_grad_result(%q: tensor<64x16xf32>, %kt: tensor<16x80xf32>, %v: tensor<80x8xf32>, %o: tensor<64x8xf32>, %do: tensor<64x8xf32>) {
  // expected-error @+1 {{each cotangent must have its operand's type 'tensor<16x80xf32>', got 'tensor<80x16xf32>'}}
  %dq, %dkt, %dv = tessera_schedule.flash_attention_grad %q, %kt, %v, %o, %do scale = 0.25 block_q = 32 block_kv = 48
      : tensor<64x16xf32>, tensor<16x80xf32>, tensor<80x8xf32>, tensor<64x8xf32>, tensor<64x8xf32>
      -> tensor<64x16xf32>, tensor<80x16xf32>, tensor<80x8xf32>
  return
}

// -----

func.func @attn_grad_block(%q: tensor<64x16xf32>, %kt: tensor<16x80xf32>, %v: tensor<80x8xf32>, %o: tensor<64x8xf32>, %do: tensor<64x8xf32>) {
  // expected-error @+1 {{blocks must be in [1, 64] x [1, 80], got block_q = 32 block_kv = 96}}
  %dq, %dkt, %dv = tessera_schedule.flash_attention_grad %q, %kt, %v, %o, %do scale = 0.25 block_q = 32 block_kv = 96
      : tensor<64x16xf32>, tensor<16x80xf32>, tensor<80x8xf32>, tensor<64x8xf32>, tensor<64x8xf32>
      -> tensor<64x16xf32>, tensor<16x80xf32>, tensor<80x8xf32>
  return
}

// -----

func.func @micro_layout(%x: tensor<96x64xf32>, %w: tensor<64x32xf32>) -> tensor<96x32xf32> {
  // expected-error @+1 {{micro_layout must be "quads" or "strided", not "diagonal"}}
  %y = tessera_schedule.tile (%x, %w) tile_sizes = [96, 32, 64] micro_tile = [8, 8] {
  ^bb0(%a: tensor<96x64xf32>, %b: tensor<64x32xf32>):
    %m = tessera_graph.matmul %a, %b : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
    tessera_schedule.yield %m : tensor<96x32xf32>
  } {micro_layout = "diagonal"} : (tensor<96x64xf32>, tensor<64x32xf32>) -> tensor<96x32xf32>
  return %y : tensor<96x32xf32>
}

// -----

func.func @micro_layout_rows(%x: tensor<96x64xf32>) -> tensor<96x64xf32> {
  // expected-error @+1 {{micro_layout applies to a tile with a matmul}}
  %y = tessera_schedule.tile (%x) tile_sizes = [8] micro_tile = [8] {
  ^bb0(%a: tensor<96x64xf32>):
    %r = tessera_graph.relu %a : tensor<96x64xf32>
    tessera_schedule.yield %r : tensor<96x64xf32>
  } {micro_layout = "quads"} : (tensor<96x64xf32>) -> tensor<96x64xf32>
  return %y : tensor<96x64xf32>
}

// -----

func.func @stages_without_wgmma(%x: tensor<96x64xf32>, %w: tensor<64x32xf32>) -> tensor<96x32xf32> {
  // expected-error @+1 {{stages applies to a tile with mma = "wgmma"}}
  %y = tessera_schedule.tile (%x, %w) tile_sizes = [96, 32, 64] micro_tile = [8, 8] {
  ^bb0(%a: tensor<96x64xf32>, %b: tensor<64x32xf32>):
    %m = tessera_graph.matmul %a, %b : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
    tessera_schedule.yield %m : tensor<96x32xf32>
  } {mma = "sync", stages = 3 : i64} : (tensor<96x64xf32>, tensor<64x32xf32>) -> tensor<96x32xf32>
  return %y : tensor<96x32xf32>
}

// -----

func.func @warp_specialize_without_wgmma(%x: tensor<128x64xbf16>, %w: tensor<64x128xbf16>) -> tensor<128x128xf32> {
  // expected-error @+1 {{warp_specialize applies to a tile with mma = "wgmma"}}
  %y = tessera_schedule.tile (%x, %w) tile_sizes = [128, 128, 64] micro_tile = [8, 8] {
  ^bb0(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>):
    %m = tessera_graph.matmul %a, %b : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    tessera_schedule.yield %m : tensor<128x128xf32>
  } {mma = "sync", warp_specialize} : (tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<128x128xf32>
  return %y : tensor<128x128xf32>
}

// -----

func.func @stages_range(%x: tensor<128x64xbf16>, %w: tensor<64x128xbf16>) -> tensor<128x128xf32> {
  // expected-error @+1 {{stages must be 2..8, got 1}}
  %y = tessera_schedule.tile (%x, %w) tile_sizes = [128, 128, 64] micro_tile = [8, 8] {
  ^bb0(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>):
    %m = tessera_graph.matmul %a, %b : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    tessera_schedule.yield %m : tensor<128x128xf32>
  } {mma = "wgmma", stages = 1 : i64} : (tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<128x128xf32>
  return %y : tensor<128x128xf32>
}

// -----

func.func @mma_unknown_unit(%x: tensor<128x64xbf16>, %w: tensor<64x128xbf16>) -> tensor<128x128xf32> {
  // expected-error @+1 {{mma must be "sync", "wgmma", "mfma" or "wmma", not "tcgen05"}}
  %y = tessera_schedule.tile (%x, %w) tile_sizes = [128, 128, 32] micro_tile = [8, 8] {
  ^bb0(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>):
    %m = tessera_graph.matmul %a, %b : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    tessera_schedule.yield %m : tensor<128x128xf32>
  } {mma = "tcgen05"} : (tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<128x128xf32>
  return %y : tensor<128x128xf32>
}

// -----

// mma = "wgmma": the warpgroup kernel's operand types.
func.func @wgmma_attention_f32(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{with mma = "wgmma": the operands must be bf16 or f16 (the tensor cores' inputs), got 'f32'}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64 {mma = "wgmma"}
      : tensor<128x64xf32>, tensor<64x128xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

// A head dim the swizzled slices do not divide.
func.func @wgmma_attention_d80(%q: tensor<128x80xbf16>, %kt: tensor<80x128xbf16>, %v: tensor<128x64xbf16>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{the head dim d = 80 must be a multiple of 64}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64 {mma = "wgmma"}
      : tensor<128x80xbf16>, tensor<80x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xbf16>
  return %o : tensor<128x64xbf16>
}

// -----

// Blocks that are not whole warpgroups.
func.func @wgmma_attention_blocks(%q: tensor<128x64xbf16>, %kt: tensor<64x128xbf16>, %v: tensor<128x64xbf16>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{block_q = 32 and block_kv = 64 must be 64 or 128}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 32 block_kv = 64 {mma = "wgmma"}
      : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xbf16>
  return %o : tensor<128x64xbf16>
}

// -----

// A batch whose blocks would cross into the next head in the stacked view.
func.func @wgmma_attention_batch(%q: tensor<2x192x64xbf16>, %kt: tensor<2x64x128xbf16>, %v: tensor<2x128x64xbf16>) -> tensor<2x192x64xbf16> {
  // expected-error @+1 {{with a batch, block_q = 128 must divide Sq = 192}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 128 block_kv = 64 {mma = "wgmma"}
      : tensor<2x192x64xbf16>, tensor<2x64x128xbf16>, tensor<2x128x64xbf16> -> tensor<2x192x64xbf16>
  return %o : tensor<2x192x64xbf16>
}

// -----

func.func @attention_mma_name(%q: tensor<128x64xbf16>, %kt: tensor<64x128xbf16>, %v: tensor<128x64xbf16>) -> tensor<128x64xbf16> {
  // expected-error @+1 {{mma must be "wgmma" (or absent), got "sync"}}
  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 0.125 block_q = 64 block_kv = 64 {mma = "sync"}
      : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xbf16>
  return %o : tensor<128x64xbf16>
}

// -----

// A constant step of 0 never ends: refused on the pipeline, not later on
// the scf.for it becomes.
func.func @pipeline_step_zero(%a: memref<512xf32>, %out: memref<64xf32, 3>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{step must be positive, got 0}}
  tessera_schedule.pipeline %k = %c0 to %c8 step %c0 stages = 2 {
    %t = tessera_schedule.prefetch %a[%k] scope = "shared" double_buffer : memref<512xf32> -> memref<64xf32, 3>
    tessera_schedule.copy %t, %out : memref<64xf32, 3>, memref<64xf32, 3>
  }
  return
}
