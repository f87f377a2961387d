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

def LowerQuantization : Pass<"tessera-lower-quantization", "::mlir::ModuleOp"> {
  let summary = "quantize / dequantize as the elementwise Graph ops they are defined as";
  let description = [{
    `quantize(x, s)` becomes `cast<i8>(v >= 0 ? v + 0.5 : v - 0.5)` with
    `v = x / s`, and `dequantize(q, s)` becomes `cast<f32>(q) * s`; a
    per-channel scale is reshaped to broadcast along its axis. Every
    backend's pipeline runs this first, so the fusion pass puts them into
    the neighbouring kernels and every backend computes the same bits.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def GraphToSchedule : Pass<"tessera-graph-to-schedule", "::mlir::ModuleOp"> {
  let summary = "group Graph ops into scheduled tiles: the fusion and tiling decisions";
  let description = [{
    Every computing Graph op (matmul, softmax, reduce, elementwise) ends up
    in exactly one `tessera_schedule.tile`, the unit each backend lowers as
    one loop nest (cpu) or one kernel (GPU):

    - a value is fused into its user when it has one use, the user is an
      elementwise op of the same shape and both are row-major: the
      elementwise chains and trees that consume a matmul (bias, relu,
      gelu, casts), a softmax or a reduce (`fuse-reductions`), or another
      elementwise op, are computed in registers with their producer;
    - a group holds at most one matmul, softmax or reduce (its root);
      splat constants are cloned into the tiles that read them;
    - with `merge-matmul-chains`, a matmul group that feeds the lhs of the
      next matmul group (the MLP) joins it: one tile, one row block.

    Matmul tiles record `tile_sizes = [MC, NC, KC]` and
    `micro_tile = [MR, NR]` (clamped to the problem unless
    `clamp-tiles=0`), the others `tile_sizes = [R]` (dim-0 slices of the
    output per work item: about `row-tile` rows of its last dim) and
    `micro_tile = [V]` (vector width).

    Before grouping (`attention`), `matmul(Q, K^T)` -> optional `mul`/`div`
    by a splat constant -> `softmax` over the last dim -> `matmul(P, V)`
    with single-use intermediates becomes one
    `tessera_schedule.flash_attention` (online softmax over key/value
    blocks; the score matrix is never formed). A K^T that is a
    `convert_layout` of a `col_major` tensor is replaced by that tensor (its
    storage is K row-major). Block sizes are `attn-block-q` /
    `attn-block-kv` clamped to the sequence lengths. With `mma=wgmma` a
    bf16 or f16 chain whose shapes the warpgroup kernel takes becomes one
    with `mma = "wgmma"` and that kernel's blocks (`wgmma-attention`,
    independent of `attention`, which is about f32).

    Example (examples/mlp.mlir, one tile for both layers):
    ```mlir
    %y = tessera_schedule.tile(%x, %w1, %b1, %w2, %b2) tile_sizes = [144, 4096, 256] micro_tile = [6, 16] {
    ^bb0(...):
      %h0 = tessera_graph.matmul %a0, %a1 ...
      %h1 = tessera_graph.add %h0, %a2 ...
      %h = tessera_graph.relu %h1 ...
      %y0 = tessera_graph.matmul %h, %a3 ...
      %y1 = tessera_graph.add %y0, %a4 ...
      tessera_schedule.yield %y1 : tensor<512x1024xf32>
    } : (...) -> tensor<512x1024xf32>
    ```
  }];
  let dependentDialects = ["::tessera::schedule::ScheduleDialect"];
  let options = [
    Option<"tileM", "tile-m", "int64_t", "144", "MC: rows of the output per tile">,
    Option<"tileN", "tile-n", "int64_t", "4096", "NC: columns of the B panel packed at once (L3)">,
    Option<"tileK", "tile-k", "int64_t", "256", "KC: contraction slice">,
    Option<"microM", "micro-m", "int64_t", "6", "MR: register tile rows">,
    Option<"microN", "micro-n", "int64_t", "16", "NR: register tile columns">,
    Option<"clampTiles", "clamp-tiles", "bool", "true", "shrink matmul cache tiles to the problem (cpu); GPUs keep the lane grid and guard">,
    Option<"rowTile", "row-tile", "int64_t", "64", "R: rows (of the last dim) of the output per work item of a tile without matmul">,
    Option<"vectorWidth", "vector-width", "int64_t", "8", "V: elements per vector of a tile without matmul">,
    Option<"fuse", "fuse", "bool", "true", "false: no op is fused into its user, every computing op is a tile of its own (the unfused program, for measurements; with merge-matmul-chains=0 and attention=0 nothing is fused at all)">,
    Option<"fuseReductions", "fuse-reductions", "bool", "true", "softmax and reduce take elementwise epilogues">,
    Option<"mergeMatmulChains", "merge-matmul-chains", "bool", "true", "a matmul group feeding the next matmul joins its tile (MLP)">,
    Option<"attention", "attention", "bool", "true", "attention chains become flash_attention">,
    Option<"wgmmaAttention", "wgmma-attention", "bool", "true", "with mma=wgmma: bf16 / f16 attention chains become flash_attention with mma = wgmma (the warpgroup kernel; false: matmuls and a softmax)">,
    Option<"attentionBackward", "attention-backward", "bool", "true", "with attention: attention_grad becomes flash_attention_grad (otherwise matmuls and a softmax)">,
    Option<"attnBlockQ", "attn-block-q", "int64_t", "64", "attention: query rows per block (at most)">,
    Option<"attnBlockKV", "attn-block-kv", "int64_t", "64", "attention: key/value rows per block (at most)">,
    Option<"attnSharedKiB", "attn-shared-kib", "int64_t", "0", "attention on GPUs: halve the blocks of flash_attention and flash_attention_grad (the query block first while it is the larger) until their kernels' shared memory fits this many KiB (0: no limit)">,
    Option<"microLayout", "micro-layout", "std::string", "\"strided\"", "GPU matmul tiles without matrix units: each lane's RM x RN block as rows ty + LM*i and columns tx + LN*j ('strided': conflict-free scalar shared reads) or as aligned runs of 4 ('quads': vec4 shared reads on SPIR-V; RM and RN multiples of 4)">,
    Option<"mma", "mma", "std::string", "\"none\"", "GPU matmul tiles: 'none' (each lane an RM x RN register block of FMAs), 'sync' (bf16/f16 operands: subgroups of 32 lanes on matrix units, tessera_tile.subgroup_mma) or 'wgmma' (bf16/f16 operands: warpgroups of 128 lanes, tessera_tile.warpgroup_mma, slices staged by tile_load_async), 'mfma' (bf16/f16 operands: wavefronts of 64 lanes, tessera_tile.wavefront_mma) or 'wmma' (bf16/f16 operands: waves of 32 lanes in 16x16 tiles, tessera_tile.wave32_mma)">,
    Option<"stages", "stages", "int64_t", "0", "mma=wgmma: shared-memory stages of the slice pipeline (2..8; 0: the kernel's choice, 4 where they fit)">,
    Option<"warpSpecialize", "warp-specialize", "bool", "false", "mma=wgmma: a producer warpgroup issues the slices' copies (one lane, tensor copies: cuda sm_90a with TMA) while the other warpgroups multiply, each releasing a stage once it has read it (tile_load_acquire / _release), registers moved from the producer to them (set_max_registers)">,
    Option<"rowStages", "row-stages", "bool", "false", "cut each function that is not row-local into parts that are, called in order (tessera.row_stages; RowStages.h): for backends that split a kernel over dim-0 rows (cpu), where the program compiler turns it on">,
  ];
}
def SpmdStages : Pass<"tessera-spmd-stages", "::mlir::ModuleOp"> {
  let summary = "cut SPMD functions at their collectives into stage functions and a plan";
  let description = [{
    An SPMD function names a `tessera_graph.mesh` (in a collective or a
    `tessera_graph.sharding`); every device of the mesh runs it on local
    tensors. This pass makes it runnable by a host runtime whose
    Communicator moves flat buffers:

    1. every `all_gather` / `reduce_scatter` becomes *flat* (rank r's part
       is the r-th contiguous chunk of the full tensor): along dim 0 of a
       row-major tensor it already is; along the last dim of a rank-2
       tensor the full tensor gets the layout `blocked<M, n>` (whose blocks
       are exactly the ranks' [M, n] pieces, one after the other) and a
       `convert_layout` restores the original layout; operands in other
       layouts are converted to row-major first;
    2. each maximal run of non-collective ops is outlined into a private
       function `<fn>_stage<i>(live-ins) -> (live-outs)` (plain Graph IR:
       any backend compiles it like a program of its own) and replaced by a
       `func.call`; ops whose results are unused are dropped;
    3. the function keeps its signature and shardings and is marked
       `tessera.spmd_plan` with `tessera.mesh = @mesh`
       (`tessera::graph::readSpmdPlan` reads it; docs/spmd.md).

    Example (tensor-parallel MLP, examples/tp_mlp.mlir):
    ```mlir
    %p = call @tp_mlp_stage0(%x, %w1, %b1, %w2) : (...) -> tensor<256x512xf32>
    %y0 = tessera_graph.all_reduce sum %p over @mesh ["tp"] : ...
    %y = call @tp_mlp_stage1(%y0, %b2) : (...) -> tensor<256x512xf32>
    ```
  }];
}
def OverlapCollectives : Pass<"tessera-overlap-collectives", "::mlir::ModuleOp"> {
  let summary = "pipeline a stage and its all_reduce in row blocks on two streams";
  let description = [{
    Runs on SPMD plans (after --tessera-spmd-stages). A stage whose one
    result goes to an all_reduce, and whose result row r depends only on
    row r of some arguments (matmul with a split lhs, elementwise ops with
    broadcast operands, reductions, softmax and norms that keep dim 0), is
    called once per block of rows on views of those arguments, and the
    all_reduce of block i is issued after the compute of block i+1 on the
    communication stream (`tessera.stream = 1`); a `concat` along dim 0
    joins the reduced blocks, which readSpmdPlan makes views of its result
    (no copies). All_reduce is elementwise, so the results are bitwise
    those of the plan without blocks. Anything else is left as it is.

    Example (examples/tp_mlp.mlir, chunks=4):
    ```mlir
    %x0 = tessera_graph.slice %x offsets = [0, 0] strides = [1, 1] : tensor<256x512xf32> -> tensor<64x512xf32>
    %p0 = call @tp_mlp_stage0_rows64(%x0, %w1, %b1, %w2) : (...) -> tensor<64x512xf32>
    %x1 = tessera_graph.slice %x offsets = [64, 0] ...
    %p1 = call @tp_mlp_stage0_rows64(%x1, %w1, %b1, %w2) : (...) -> tensor<64x512xf32>
    %r0 = tessera_graph.all_reduce sum %p0 over @mesh ["tp"] {tessera.stream = 1 : i64} : ...
    ...
    %y0 = tessera_graph.concat %r0, %r1, %r2, %r3 dim = 0 : ... -> tensor<256x512xf32>
    ```
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", "4", "row blocks per pipelined all_reduce (at most; the largest count <= chunks that divides the rows is used; < 2: off)">,
  ];
}
def Grad : Pass<"tessera-grad", "::mlir::ModuleOp"> {
  let summary = "reverse-mode autodiff: a function's value and its gradients";
  let description = [{
    With `function=f`, adds `@f_grad` (or `name=...`): f's arguments ->
    (f's results, then d result0 / d argument i for each i in `wrt`, all
    float arguments when `wrt` is empty). Result 0 is the loss: one float
    element. One reverse sweep applies each op's VJP rule; gradients
    accumulate in f32 and are returned in each argument's type, layout
    and sharding. In an SPMD function collectives get their transposes
    (all_gather <-> reduce_scatter, all_reduce sum -> identity) and the
    gradient of a replicated value read by devices that differ is
    all-reduced once (docs/autodiff.md).

    Without `function`, fills every declaration marked
    `tessera.grad_of = @f` (`tessera.wrt = [...]`) and inlines the calls
    of Graph IR functions, so the module is plain Graph IR again (what
    every compile does first).

    Example:
    ```mlir
    func.func private @loss_grad(tensor<8x4xf32>, tensor<4x1xf32>, tensor<8x1xf32>)
        -> (tensor<1x1xf32>, tensor<4x1xf32>) attributes {tessera.grad_of = @loss, tessera.wrt = [1]}
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"];
  let options = [
    Option<"function", "function", "std::string", "\"\"", "the function to differentiate">,
    ListOption<"wrt", "wrt", "unsigned", "the arguments to differentiate with respect to (0-based)">,
    Option<"gradName", "name", "std::string", "\"\"", "the new function's name (default <function>_grad)">,
    Option<"lossScale", "loss-scale", "double", "1.0", "the loss's cotangent; every gradient is divided by it at the end (mixed-precision loss scaling)">,
    Option<"finiteFlag", "finite-flag", "bool", "false", "add a last result, tensor<1xi1>: every gradient is finite (overflow detection for loss scaling)">,
  ];
}
def ShardPropagation : Pass<"tessera-shard-propagation", "::mlir::ModuleOp"> {
  let summary = "make global-view functions SPMD: decide every sharding, insert the collectives";
  let description = [{
    A function marked `tessera.global_view` is written on global tensors,
    with `tessera_graph.sharding` on its arguments and results only. The
    pass decides the sharding of every intermediate (printed on each op as
    its `tessera_graph.sharding`), rewrites every type to the local one a
    device holds and inserts all_reduce / reduce_scatter / all_gather
    where the decisions need them (docs/spmd.md, "Automatic sharding").
    The Megatron MLP gets exactly one all_reduce. Every compile runs it on
    the functions so marked.

    Example (examples/tp_mlp_global.mlir):
    ```mlir
    %p = tessera_graph.matmul %h, %w2 {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = [], reduce = ["tp"]>} : ...
    %0 = tessera_graph.all_reduce sum %p over @mesh ["tp"] : ...
    ```
    Where the rules choose (which split an elementwise op keeps, which side
    of a contraction is gathered, ...), a search places the function again
    with other choices and keeps the cheapest (collective bytes plus
    arithmetic per device); `search-runs=1` keeps the rules' own choices.
  }];
  let options = [
    Option<"searchRuns", "search-runs", "int", /*default=*/"256",
           "placements the search makes at most (1: the rules alone)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"];
}
#endif
