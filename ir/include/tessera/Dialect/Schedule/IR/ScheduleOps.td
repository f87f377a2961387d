//===- ScheduleOps.td - Tessera Schedule IR ----------------*- tablegen -*-===//
//
// Schedule IR: how Graph IR work is cut into tiles, staged and overlapped.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_SCHEDULE_OPS
#define TESSERA_SCHEDULE_OPS

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Schedule_Dialect : Dialect {
  let name = "tessera_schedule";
  let cppNamespace = "::tessera::schedule";
  let summary = "Tessera Schedule IR: tiling, prefetch, pipelines";
  let description = [{
    Hardware-neutral scheduling decisions: the tile sizes a fused group of
    Graph ops is computed with, data movement into a memory scope
    (`prefetch`, `copy`), software pipelines and the barriers between stages.
  }];
  let useFoldAPI = kEmitFoldAdaptorFolder;
}

class Schedule_Op<string mnemonic, list<Trait> traits = []>
    : Op<Schedule_Dialect, mnemonic, traits>;

def Schedule_TileOp : Schedule_Op<"tile", [
    IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a fused group of Graph ops computed tile by tile";
  let description = [{
    The region computes the results from the operands (passed as block
    arguments) with Graph IR ops, fused: nothing computed inside the region
    is stored except what it yields. It holds a root (a matmul, a softmax
    or a reduce) with the tree of elementwise ops that consumes it, an
    elementwise tree alone, or a chain of matmul groups where each feeds
    the next one's lhs (the fused MLP); splat constants are cloned in.

    With a matmul, `tile_sizes` = `[MC, NC, KC]` are the cache tiles (rows
    of the output, columns of the output, contraction) and `micro_tile` =
    `[MR, NR]` the register tile. Without one, `tile_sizes` = `[R]` are the
    rows of the output per work item and `micro_tile` = `[V]` the vector
    width. All are autotunable parameters, chosen per backend by
    `--tessera-graph-to-schedule`. `mma = "sync"` (GPU, a tile with a
    matmul) asks for subgroups of 32 lanes multiplying on matrix units
    (`tessera_tile.subgroup_mma`) where the operands are bf16 or f16;
    `mma = "wgmma"` for warpgroups of 128 lanes (`tessera_tile.warpgroup_mma`,
    the slices staged by `tessera_tile.tile_load_async` in `stages`
    shared-memory stages); `mma = "mfma"` for wavefronts of 64 lanes
    (`tessera_tile.wavefront_mma`: AMD CDNA's matrix cores); `mma = "wmma"`
    for waves of 32 lanes in 16 x 16 tiles (`tessera_tile.wave32_mma`:
    RDNA3's WMMA). `warp_specialize` (with `mma = "wgmma"`): one more
    warpgroup, the producer, issues the slices' copies from one lane while
    the others multiply (needs a tensor-copy engine: cuda sm_90a).
    `micro_layout = "quads"` (GPU, a tile with a matmul, RM and RN
    multiples of 4) lays each lane's register block out as aligned runs
    of 4 rows and columns (rows `4*ty + i%4 + 4*LM*(i/4)`) instead of the
    default strided one (rows `ty + LM*i`): one vec4 shared-memory read
    per 4 values where the target has vector loads but no coalescing
    (SPIR-V on lavapipe).

    Example:
    ```mlir
    %y = tessera_schedule.tile (%x, %w, %b) tile_sizes = [96, 256, 256] micro_tile = [6, 16] {
    ^bb0(%a: tensor<96x64xf32>, %bw: tensor<64x32xf32>, %bias: tensor<32xf32>):
      %m = tessera_graph.matmul %a, %bw : tensor<96x64xf32>, tensor<64x32xf32> -> tensor<96x32xf32>
      %s = tessera_graph.add %m, %bias : tensor<96x32xf32>, tensor<32xf32>
      tessera_schedule.yield %s : tensor<96x32xf32>
    } : (tensor<96x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<96x32xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$operands,
                       DenseI64ArrayAttr:$tile_sizes,
                       DenseI64ArrayAttr:$micro_tile,
                       OptionalAttr<StrAttr>:$mma,
                       OptionalAttr<StrAttr>:$micro_layout,
                       OptionalAttr<I64Attr>:$stages,
                       UnitAttr:$warp_specialize);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $operands `)` `tile_sizes` `=` $tile_sizes `micro_tile` `=` $micro_tile
    $body attr-dict `:` functional-type($operands, $results)
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::TypeRange":$results,
      "::mlir::ValueRange":$operands, "::llvm::ArrayRef<int64_t>":$tileSizes,
      "::llvm::ArrayRef<int64_t>":$microTile)>];
}

def Schedule_PipelineOp : Schedule_Op<"pipeline", [
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a software-pipelined loop";
  let description = [{
    A loop from `lb` to `ub` by `step` whose `prefetch`es are issued
    `stages - 1` iterations ahead of their use. The body's block argument is
    the induction variable.

    Example:
    ```mlir
    tessera_schedule.pipeline %k = %c0 to %c8 step %c1 stages = 2 {
      %t = tessera_schedule.prefetch %a[%k] scope = "shared" double_buffer : memref<512xf32> -> memref<64xf32, 3>
    }
    ```
  }];
  let arguments = (ins Index:$lb, Index:$ub, Index:$step, I64Attr:$stages);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Value getInductionVar() { return getBody().front().getArgument(0); }
  }];
}

def Schedule_PrefetchOp : Schedule_Op<"prefetch", []> {
  let summary = "bring a tile of a buffer into a closer memory scope";
  let description = [{
    The tile of `source` starting at tile index `indices` (in units of the
    result shape) is made available in `scope` (`shared` or `local`). With
    `double_buffer`, inside a `pipeline`, the next iteration's tile is
    fetched into a second buffer while this one is used.
    `--tessera-schedule-to-tile` lowers `shared` (cp_async into memory
    space 3); a `local` (lane-private) prefetch is well-formed IR that no
    backend lowers yet, and the pass says so.

    Example:
    ```mlir
    %t = tessera_schedule.prefetch %a[%k] scope = "shared" double_buffer : memref<512xf32> -> memref<64xf32, 3>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$source, Variadic<Index>:$indices,
                       StrAttr:$scope, UnitAttr:$double_buffer);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` `scope` `=` $scope (`double_buffer` $double_buffer^)?
    attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Schedule_CopyOp : Schedule_Op<"copy", []> {
  let summary = "copy a buffer into another of the same shape";
  let description = [{
    Example:
    ```mlir
    tessera_schedule.copy %src, %dst : memref<64xf32, 3>, memref<64xf32>
    ```
  }];
  let arguments = (ins AnyMemRef:$source, AnyMemRef:$target);
  let assemblyFormat = "$source `,` $target attr-dict `:` type($source) `,` type($target)";
  let hasVerifier = 1;
}

def Schedule_BarrierOp : Schedule_Op<"barrier", []> {
  let summary = "all work of the previous stage is visible to the next";
  let description = [{
    Separates pipeline stages: every lane of the group waits until all lanes
    finished the previous stage.

    Example:
    ```mlir
    tessera_schedule.barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Schedule_FlashAttentionOp : Schedule_Op<"flash_attention", [Pure]> {
  let summary = "attention computed block by block with an online softmax";
  let description = [{
    `softmax(scale * Q K^T, dim = 1) V` without the score matrix: for each
    block of `block_q` query rows, the key/value rows are visited in blocks
    of `block_kv`, keeping per query row a running max `m`, a running sum
    `l` and an accumulator `O` (FlashAttention, Dao et al. 2022):

    ```
    S = scale * Q_blk K_blk^T          m_new = max(m, rowmax S)
    P = exp(S - m_new)                 l = l * exp(m - m_new) + rowsum P
    O = O * exp(m - m_new) + P V_blk   m = m_new          ...   O / l
    ```

    `query` is `[Sq, d]`, `key_t` is K^T `[d, Skv]` (in any layout: with
    `col_major` its storage is K `[Skv, d]` row-major, which a backend may
    read directly instead of materialising K^T), `value` is `[Skv, dv]`, the
    result `[Sq, dv]`. With a leading batch dimension (heads), every operand
    and the result are `[B, ...]` of those, one attention per batch element.
    `block_q` and `block_kv` are autotunable tile sizes, at most `Sq` and
    `Skv`; when one does not divide its sequence the last block is partial.

    `causal`: query `i` attends to keys `j <= i` only (the scores of keys
    `j > i` are -inf, as a decoder's mask makes them); key blocks wholly
    above the diagonal are skipped. Key 0 is never masked, so no row is
    empty.

    `mma = "wgmma"`: computed on warpgroup matrix units (cuda sm_90a:
    `wgmma`, TMA copies), chosen by graph-to-schedule with `mma=wgmma` for
    bf16 and f16 attention. The scores and the softmax statistics stay in
    f32 (P is rounded to the operands' type for `P V`, as the tensor cores
    take it), and the shapes must suit the kernel: Q, K^T, V and the result
    bf16 or f16 and row-major, `d` a multiple of 64, `dv` 64, 128, 192 or
    256, `block_q` and `block_kv` 64 or 128, `Skv` a multiple of 8, and with
    a batch `block_q | Sq` and `block_kv | Skv`
    (`schedule::wgmmaAttentionMisfit`).

    Example:
    ```mlir
    %o = tessera_schedule.flash_attention %q, %kt, %v scale = 1.250000e-01 block_q = 64 block_kv = 64
        : tensor<256x64xf32>, tensor<64x256xf32, #tessera_graph.layout<col_major>>, tensor<256x64xf32>
        -> tensor<256x64xf32>
    %c = tessera_schedule.flash_attention %q3, %kt3, %v3 scale = 1.250000e-01 block_q = 64 block_kv = 64 causal
        : tensor<12x256x64xf32>, tensor<12x64x256xf32>, tensor<12x256x64xf32> -> tensor<12x256x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key_t,
                       AnyRankedTensor:$value, F32Attr:$scale,
                       I64Attr:$block_q, I64Attr:$block_kv, UnitAttr:$causal,
                       OptionalAttr<StrAttr>:$mma);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $query `,` $key_t `,` $value `scale` `=` $scale `block_q` `=` $block_q
    `block_kv` `=` $block_kv (`causal` $causal^)? attr-dict `:` type($query) `,`
    type($key_t) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Schedule_FlashAttentionGradOp : Schedule_Op<"flash_attention_grad", [Pure]> {
  let summary = "the attention backward computed block by block";
  let description = [{
    `tessera_graph.attention_grad` (the cotangents of Q, K^T and V of
    `O = softmax(scale * Q K^T [+ causal mask]) V` from `O` and `dO`) with
    the blocks of flash_attention: per key block of `block_kv` keys, the
    query blocks of `block_q` rows recompute `S = scale * Q_blk K_blk^T`
    and `P = exp(S - m) / l` from each query's softmax statistics (`m`,
    `l`, recomputed in a first pass over the key blocks), then
    `dV_blk += P^T dO_blk`, `dS = P * (dO_blk V_blk^T - rowsum(dO * O))`,
    `dK_blk += scale * dS^T Q_blk`, `dQ_blk += scale * dS K_blk`. No
    `Sq x Skv` matrix is formed; `causal` skips the blocks above the
    diagonal. Operands and results as attention_grad (rank 2 or 3, f32,
    row-major); blocks as flash_attention.

    Example:
    ```mlir
    %dq, %dkt, %dv = tessera_schedule.flash_attention_grad %q, %kt, %v, %o, %do scale = 1.250000e-01 block_q = 64 block_kv = 64 causal
        : tensor<256x64xf32>, tensor<64x256xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>
        -> tensor<256x64xf32>, tensor<64x256xf32>, tensor<256x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key_t, AnyRankedTensor:$value,
                       AnyRankedTensor:$out, AnyRankedTensor:$dout, F32Attr:$scale,
                       I64Attr:$block_q, I64Attr:$block_kv, UnitAttr:$causal);
  let results = (outs AnyRankedTensor:$dquery, AnyRankedTensor:$dkey_t, AnyRankedTensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key_t `,` $value `,` $out `,` $dout `scale` `=` $scale `block_q` `=` $block_q
    `block_kv` `=` $block_kv (`causal` $causal^)? attr-dict `:` type($query) `,` type($key_t) `,`
    type($value) `,` type($out) `,` type($dout) `->` type($dquery) `,` type($dkey_t) `,` type($dvalue)
  }];
  let hasVerifier = 1;
}

def Schedule_YieldOp : Schedule_Op<"yield", [Pure, Terminator,
    ParentOneOf<["TileOp", "PipelineOp"]>]> {
  let summary = "terminates a schedule region";
  let description = [{
    Returns the results of a `tile` region (nothing for `pipeline`).

    Example:
    ```mlir
    tessera_schedule.yield %v : tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

#endif // TESSERA_SCHEDULE_OPS
