#ifndef TESSERA_GRAPH_PASSES
#define TESSERA_GRAPH_PASSES
include "mlir/Pass/PassBase.td"

def LowerLayouts : Pass<"tessera-lower-layouts", "::mlir::ModuleOp"> {
  let summary = "fold chains of layout conversions into one exact permutation";
  let description = [{
    Every `convert_layout` is an exact permutation of the elements, so a
    conversion to the type a tensor already has vanishes, a chain
    `A -> B -> C` becomes one conversion `A -> C` (one pass over memory
    instead of two) and a round trip `A -> B -> A` becomes its input. An
    intermediate with other uses is kept. The conversions that remain are
    lowered by each backend (cpu: one loop nest addressed through
    `LayoutAttr::offset`).
  }];
}

def GraphToSchedule : Pass<"tessera-graph-to-schedule", "::mlir::ModuleOp"> {
  let summary = "tile matmuls and fuse their elementwise epilogues";
  let description = [{
    Wraps each `tessera_graph.matmul` together with the chain of elementwise
    ops that consume it (bias add, relu, ...) into a
    `tessera_schedule.tile` with cache and register tile sizes. A matmul
    whose fused group feeds the next matmul (the MLP) gets the same row tile,
    so the backend can keep the intermediate rows in cache.

    Attention, `matmul(Q, K^T)` -> optional `mul`/`div` by a splat constant
    -> `softmax` over the last dim -> `matmul(P, V)` with single-use
    intermediates, becomes one `tessera_schedule.flash_attention` (online
    softmax over key/value blocks; the score matrix is never formed). A K^T
    that is a `convert_layout` of a `col_major` tensor is replaced by that
    tensor (its storage is K row-major). Block sizes are `attn-block-q` /
    `attn-block-kv` clamped to the sequence lengths (the last block may be
    partial). Anything else keeps the matmul lowering.
  }];
  let dependentDialects = ["::tessera::schedule::ScheduleDialect"];
  let options = [
    Option<"tileM", "tile-m", "int64_t", "144", "MC: rows of the output per tile">,
    Option<"tileN", "tile-n", "int64_t", "4096", "NC: columns of the B panel packed at once (L3)">,
    Option<"tileK", "tile-k", "int64_t", "256", "KC: contraction slice">,
    Option<"microM", "micro-m", "int64_t", "6", "MR: register tile rows">,
    Option<"microN", "micro-n", "int64_t", "16", "NR: register tile columns">,
    Option<"attnBlockQ", "attn-block-q", "int64_t", "64", "attention: query rows per block (at most)">,
    Option<"attnBlockKV", "attn-block-kv", "int64_t", "64", "attention: key/value rows per block (at most)">,
  ];
}
#endif
