//===- TileOps.td - Tessera Tile IR ------------------------*- tablegen -*-===//
//
// Tile IR: the portable kernel contract every backend plugin lowers.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TILE_OPS
#define TESSERA_TILE_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Tile_Dialect : Dialect {
  let name = "tessera_tile";
  let cppNamespace = "::tessera::tile";
  let summary = "Tessera Tile IR: the portable kernel contract";
  let description = [{
    A kernel is a `func.func` with the `tessera_tile.group_size` attribute
    (lanes per tile group, up to three dims). It runs once per tile group;
    inside, each lane runs the body. Memory is builtin `memref`: memory
    space 3 is the group's shared memory, everything else is global.
  }];
  let hasOperationAttrVerify = 1;
  let useFoldAPI = kEmitFoldAdaptorFolder;
}

def Tile_AtomicScope : I32EnumAttr<"AtomicScope", "visibility scope of an atomic", [
    I32EnumAttrCase<"tile", 0>, I32EnumAttrCase<"group", 1>,
    I32EnumAttrCase<"device", 2>, I32EnumAttrCase<"mesh", 3>]> {
  let cppNamespace = "::tessera::tile";
}
def Tile_AtomicKind : I32EnumAttr<"AtomicKind", "atomic read-modify-write", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"xchg", 3>]> {
  let cppNamespace = "::tessera::tile";
}
def Tile_ShuffleMode : I32EnumAttr<"ShuffleMode", "subgroup shuffle mode", [
    I32EnumAttrCase<"Xor", 0, "xor">, I32EnumAttrCase<"down", 1>,
    I32EnumAttrCase<"up", 2>, I32EnumAttrCase<"idx", 3>]> {
  let cppNamespace = "::tessera::tile";
}
def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "subgroup reduction", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>]> {
  let cppNamespace = "::tessera::tile";
}
def Tile_MathFn : I32EnumAttr<"MathFn", "elementwise math function", [
    I32EnumAttrCase<"exp", 0>, I32EnumAttrCase<"log", 1>,
    I32EnumAttrCase<"sqrt", 2>, I32EnumAttrCase<"rsqrt", 3>,
    I32EnumAttrCase<"tanh", 4>, I32EnumAttrCase<"max", 5>,
    I32EnumAttrCase<"min", 6>, I32EnumAttrCase<"fma", 7>]> {
  let cppNamespace = "::tessera::tile";
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

def Tile_FloatLike : AnyTypeOf<[AnyFloat, VectorOf<[AnyFloat]>]>;
def Tile_Scalar : AnyTypeOf<[AnyFloat, AnySignlessInteger, Index]>;

//===--- ids and counts ---------------------------------------------------===//

class Tile_IdOp<string mnemonic, string what> : Tile_Op<mnemonic, [Pure]> {
  let summary = what;
  let description = [{
    The }] # what # [{ along dimension `dim` (0, 1 or 2).

    Example:
    ```mlir
    %v = tessera_tile.}] # mnemonic # [{ 0 : index
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "int64_t":$dim), [{
    build($_builder, $_state, $_builder.getIndexType(), $_builder.getI64IntegerAttr(dim));
  }]>];
}
def Tile_GroupIdOp : Tile_IdOp<"group_id", "index of this tile group in the grid">;
def Tile_GroupCountOp : Tile_IdOp<"group_count", "number of tile groups in the grid">;
def Tile_LaneIdOp : Tile_IdOp<"lane_id", "index of this lane in its group">;
def Tile_LaneCountOp : Tile_IdOp<"lane_count", "number of lanes per group">;

def Tile_TileIdOp : Tile_Op<"tile_id", [Pure]> {
  let summary = "linear index of this tile group (x fastest)";
  let description = [{
    `x + y*gx + z*gx*gy`: the index of the tile of work this group owns.

    Example:
    ```mlir
    %t = tessera_tile.tile_id : index
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SubgroupSizeOp : Tile_Op<"subgroup_size", [Pure]> {
  let summary = "lanes per subgroup (warp / wavefront / SIMD width)";
  let description = [{
    Backend dependent: 32 on NVIDIA, 64 or 32 on AMD, 1 on the cpu plugin.

    Example:
    ```mlir
    %s = tessera_tile.subgroup_size : index
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===--- shared memory and synchronisation --------------------------------===//

def Tile_SharedAllocOp : Tile_Op<"shared_alloc", []> {
  let summary = "allocate group shared memory";
  let description = [{
    A statically shaped buffer in memory space 3, shared by the lanes of a
    group. `swizzle` (0, 32, 64 or 128 bytes) permutes 16-byte chunks within
    each row to avoid bank conflicts; backends without banks ignore it.
    `alignment` (a power of two from the element's size to 1024, or 0 for
    the element's own) is the byte alignment of the buffer's start, which
    `warpgroup_mma`'s 128-byte swizzled operands need (1024). The
    kernel's total shared memory must not exceed its
    `tessera_tile.max_shared_memory` attribute (default 65536 bytes).

    Example:
    ```mlir
    %s = tessera_tile.shared_alloc swizzle = 128 : memref<64x64xf32, 3>
    ```
  }];
  let arguments = (ins DefaultValuedAttr<I64Attr, "0">:$swizzle,
                       DefaultValuedAttr<I64Attr, "0">:$alignment);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = [{
    (`swizzle` `=` $swizzle^)? (`alignment` `=` $alignment^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_BarrierOp : Tile_Op<"barrier", []> {
  let summary = "group barrier with shared-memory visibility";
  let description = [{
    Every lane of the group waits here; writes to shared memory before it
    are visible to every lane after it. Must be reached by all lanes
    (uniform control flow).

    Example:
    ```mlir
    tessera_tile.barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_CpAsyncOp : Tile_Op<"cp_async", [AttrSizedOperandSegments]> {
  let summary = "asynchronous copy global -> shared";
  let description = [{
    Copies `elements` contiguous elements (4, 8 or 16 bytes) from `source`
    at `src_indices` into shared memory `target` at `dst_indices`. Complete
    once a later `cp_async_wait` leaves fewer pending groups than it.

    Example:
    ```mlir
    tessera_tile.cp_async %g[%i], %s[%j] elements = 4 : memref<1024xf32>, memref<256xf32, 3>
    ```
  }];
  let arguments = (ins AnyMemRef:$source, Variadic<Index>:$src_indices,
                       AnyMemRef:$target, Variadic<Index>:$dst_indices,
                       I64Attr:$elements);
  let assemblyFormat = [{
    $source `[` $src_indices `]` `,` $target `[` $dst_indices `]` `elements` `=` $elements
    attr-dict `:` type($source) `,` type($target)
  }];
  let hasVerifier = 1;
}

def Tile_CpAsyncCommitOp : Tile_Op<"cp_async_commit", []> {
  let summary = "close the current group of cp_async copies";
  let description = [{
    Example:
    ```mlir
    tessera_tile.cp_async_commit
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Tile_CpAsyncWaitOp : Tile_Op<"cp_async_wait", []> {
  let summary = "wait until at most `pending` copy groups are in flight";
  let description = [{
    Example:
    ```mlir
    tessera_tile.cp_async_wait 1
    ```
  }];
  let arguments = (ins I64Attr:$pending);
  let assemblyFormat = "$pending attr-dict";
  let hasVerifier = 1;
}

def Tile_TileLoadAsyncOp : Tile_Op<"tile_load_async", []> {
  let summary = "asynchronous copy of a 2-D box global -> swizzled shared memory";
  let description = [{
    The lanes of the group copy together the box of `rows` x `cols`
    elements at (`row`, `col`) of `source`, a row-major matrix of
    `source_rows` rows of `ld` elements, into shared memory `target`:
    element (r, c) of the box goes to `target[sw(index + r*cols + c)]`,
    where `sw` is the 128-byte swizzle of `warpgroup_mma`
    (`e ^ ((e >> 3) & 0x38)`, rows of `cols` 16-bit values = 128 bytes).
    Elements of the box outside the matrix (row >= `source_rows` or
    column >= `ld`) are written as zeros.
    The copy belongs to completion channel `stage` (0 .. `stages`-1): it is
    complete once a `tile_load_wait` of that stage returns after the
    `tile_load_commit` that closes it.

    Every lane must execute it with the same operands (uniform control
    flow). On cuda sm_90a it is one TMA copy (`cp.async.bulk.tensor`, a
    tensor map the plugin encodes at launch, the stage's mbarrier); other
    targets copy 16 bytes per lane (`cp_async`). `source` must be a kernel
    argument; `index` a multiple of 512 (1024 bytes) with the target
    1024-byte aligned; `rows` at most 256.

    With `single_lane`, one lane alone issues the copy for the group (the
    producer of a warp-specialized kernel, which refills a stage after a
    `tile_load_acquire` of it and closes it with a `single_lane`
    `tile_load_commit`); the lanes that read the stage wait for it with
    `tile_load_wait`. It needs a tensor-copy engine: cuda sm_90a with TMA
    lowers it, other targets report it.

    Example:
    ```mlir
    tessera_tile.tile_load_async %a[%r, %k], %s[%i] stage %st
        {rows = 64 : i64, cols = 64 : i64, ld = 512 : i64, source_rows = 512 : i64, stages = 2 : i64}
        : memref<262144xbf16>, memref<8192xbf16, 3>
    ```
  }];
  let arguments = (ins AnyMemRef:$source, Index:$row, Index:$col, AnyMemRef:$target, Index:$index,
                       Index:$stage, I64Attr:$rows, I64Attr:$cols, I64Attr:$ld, I64Attr:$source_rows,
                       I64Attr:$stages, UnitAttr:$single_lane);
  let assemblyFormat = [{
    $source `[` $row `,` $col `]` `,` $target `[` $index `]` `stage` $stage attr-dict `:` type($source) `,` type($target)
  }];
  let hasVerifier = 1;
}

def Tile_TileLoadCommitOp : Tile_Op<"tile_load_commit", []> {
  let summary = "close the tile_load_async copies of a stage issued so far";
  let description = [{
    Every lane must execute it (uniform control flow), after the stage's
    copies; with `single_lane`, the one lane that issued them (`single_lane`
    copies) does.

    Example:
    ```mlir
    tessera_tile.tile_load_commit stage %st {stages = 2 : i64}
    ```
  }];
  let arguments = (ins Index:$stage, I64Attr:$stages, UnitAttr:$single_lane);
  let assemblyFormat = "`stage` $stage attr-dict";
}

def Tile_TileLoadWaitOp : Tile_Op<"tile_load_wait", []> {
  let summary = "wait until a stage's committed copies are in shared memory";
  let description = [{
    Returns once the copies of the awaited commit of `stage` are complete;
    `phase` is the parity (0 or 1) of how many commits of this stage came
    before it. Every lane that reads the copied data waits first; a lane
    that did not wait must not read it. Reusing a stage's shared memory for
    the next copies needs a `barrier` after every lane's last read.

    Example:
    ```mlir
    tessera_tile.tile_load_wait stage %st phase %p {stages = 2 : i64}
    ```
  }];
  let arguments = (ins Index:$stage, Index:$phase, I64Attr:$stages);
  let assemblyFormat = "`stage` $stage `phase` $phase attr-dict";
}

def Tile_TileLoadReleaseOp : Tile_Op<"tile_load_release", []> {
  let summary = "this lane is done reading a stage: its shared memory may be refilled";
  let description = [{
    The consumer half of a warp-specialized pipeline: each lane that reads
    a stage's data releases the stage after its last read of it (every lane
    of a 32-lane subgroup together: uniform control flow within each
    subgroup). Once the `releasers` lanes named by the producer's
    `tile_load_acquire` have released a stage, the acquire returns and the
    producer may refill it. Needs cuda sm_90a with TMA (an mbarrier per
    stage that each subgroup arrives at); other targets report it.

    Example:
    ```mlir
    tessera_tile.tile_load_release stage %st {stages = 4 : i64}
    ```
  }];
  let arguments = (ins Index:$stage, I64Attr:$stages);
  let assemblyFormat = "`stage` $stage attr-dict";
  let hasVerifier = 1;
}

def Tile_TileLoadAcquireOp : Tile_Op<"tile_load_acquire", []> {
  let summary = "wait until every reader has released a stage";
  let description = [{
    The producer half of a warp-specialized pipeline: returns once
    `releasers` lanes (a multiple of 32) have each executed one more
    `tile_load_release` of `stage` since the previous acquire; `phase` is
    the parity (0 or 1) of how many acquires of this stage came before it.
    The producer then refills the stage (`single_lane` `tile_load_async`).
    The first fill of each stage needs no acquire. Needs cuda sm_90a with
    TMA; other targets report it.

    Example:
    ```mlir
    tessera_tile.tile_load_acquire stage %st phase %p {stages = 4 : i64, releasers = 256 : i64}
    ```
  }];
  let arguments = (ins Index:$stage, Index:$phase, I64Attr:$stages, I64Attr:$releasers);
  let assemblyFormat = "`stage` $stage `phase` $phase attr-dict";
  let hasVerifier = 1;
}

def Tile_SetMaxRegistersOp : Tile_Op<"set_max_registers", []> {
  let summary = "move registers between the warpgroups of a warp-specialized group";
  let description = [{
    From here on the lanes of the executing warpgroup (128 lanes; every one
    of them executes it, uniform control flow within the warpgroup) use at
    most `registers` 32-bit registers each: a producer gives registers
    back, consumers take them. A multiple of 8 in 24..256. On cuda sm_90a
    it is `setmaxnreg.dec` or `.inc` (by whether `registers` is below or
    above what the group's size allows each lane at launch); elsewhere
    nothing.

    Example:
    ```mlir
    tessera_tile.set_max_registers {registers = 232 : i64}
    ```
  }];
  let arguments = (ins I64Attr:$registers);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

//===--- compute ----------------------------------------------------------===//

def Tile_MmaOp : Tile_Op<"mma", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "matrix multiply-accumulate on register fragments";
  let description = [{
    `c + a x b` with `a: vector<MxK>`, `b: vector<KxN>`, `c: vector<MxN>`.
    f16/bf16/fp8 fragments accumulate in f32, i8 in i32.

    Example:
    ```mlir
    %d = tessera_tile.mma %a, %b, %c : vector<16x8xf16>, vector<8x16xf16>, vector<16x16xf32>
    ```
  }];
  let arguments = (ins VectorOfRank<[2]>:$a, VectorOfRank<[2]>:$b,
                       VectorOfRank<[2]>:$acc);
  let results = (outs VectorOfRank<[2]>:$result);
  let assemblyFormat = "$a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)";
  let builders = [OpBuilder<(ins "::mlir::Value":$a, "::mlir::Value":$b, "::mlir::Value":$acc), [{
    build($_builder, $_state, acc.getType(), a, b, acc);
  }]>];
  let hasVerifier = 1;
}

def Tile_SubgroupMmaOp : Tile_Op<"subgroup_mma", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "a subgroup of 32 lanes multiplies matrices from shared memory (k = 16)";
  let description = [{
    The 32 lanes of a subgroup (lanes `32*w .. 32*w+31` of the group)
    compute together `C[m x n] += A[m x 16] x B[16 x n]`, where
    `A[i][k] = a[a_index + i*lda + k]` and `B[k][j] = b[b_index + k*ldb + j]`
    are 16-bit values in shared memory (`operand_type`, bf16 or f16, whose
    bits an i16 buffer may hold) and C is f32, spread over the lanes: lane
    `q = lane_id % 32` holds `m*n/32` elements of C, element `v` being
    `C[16*(t / (n/8)) + q/4 + 8*((v%4)/2)][8*(t % (n/8)) + 2*(q%4) + v%2]`
    with `t = v / 4` (the layout of the `mma.m16n8k16` fragments of PTX).

    Every lane of the subgroup must execute it, with the same `a_index`
    and `b_index`; `m` is a multiple of 16, `n` of 8, `lda` and `ldb` of
    8, and `a_index`, `b_index` multiples of 8 (16-byte rows). The order of
    the 16 products in each sum is not specified. On cuda sm_80 and up it
    is `ldmatrix` + `mma.sync` (tensor cores); elsewhere each lane computes
    its own elements with fused multiply-adds. With `operand_type = i8` the
    accumulator is i32 (exact products and sums, wrapping at 32 bits): on
    cuda sm_80 and up `mma.sync.m16n8k16.s32.s8.s8.s32`.

    Example:
    ```mlir
    %r = tessera_tile.subgroup_mma %a[%i], %b[%j], %c {m = 64 : i64, n = 32 : i64, lda = 40 : i64, ldb = 136 : i64, operand_type = bf16}
        : memref<10240xi16, 3>, memref<8704xi16, 3>, vector<64xf32>
    ```
  }];
  let arguments = (ins AnyMemRef:$a, Index:$a_index, AnyMemRef:$b, Index:$b_index,
                       VectorOfRankAndType<[1], [F32, I32]>:$acc,
                       I64Attr:$m, I64Attr:$n, I64Attr:$lda, I64Attr:$ldb, TypeAttr:$operand_type);
  let results = (outs VectorOfRankAndType<[1], [F32, I32]>:$result);
  let assemblyFormat = [{
    $a `[` $a_index `]` `,` $b `[` $b_index `]` `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Tile_WavefrontMmaOp : Tile_Op<"wavefront_mma", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "a wavefront of 64 lanes multiplies matrices from shared memory (k = 8; 16 for i8)";
  let description = [{
    The 64 lanes of a wavefront (lanes `64*w .. 64*w+63` of the group)
    compute together `C[m x n] += A[m x k] x B[k x n]`, `k` = 8 (16 for
    i8 operands), where
    `A[i][k] = a[a_index + i*lda + k]` and `B[k][j] = b[b_index + k*ldb + j]`
    are values in shared memory (`operand_type`: bf16 or f16, whose bits an
    i16 buffer may hold, or f32) and C is f32, spread over the lanes in
    32 x 32 tiles (row-major over the `(m/32) x (n/32)` of them): lane
    `p = lane_id % 64` holds `m*n/64` elements of C, element `v` being
    `C[32*(t / (n/32)) + 8*(u/4) + 4*(p/32) + u%4][32*(t % (n/32)) + p%32]`
    with `t = v / 16`, `u = v % 16` (the layout of the accumulators of
    CDNA's `v_mfma_f32_32x32x8` instructions).

    Every lane of the wavefront must execute it, with the same `a_index`
    and `b_index`; `m` and `n` are multiples of 32, `lda` and `ldb`
    multiples of 4, and `a_index`, `b_index` multiples of 4 (a lane reads
    8 bytes of a row of A per instruction). The order of the k products
    in each sum is not specified. On hip's CDNA targets (gfx908,
    gfx90a, gfx940) it is `v_mfma_f32_32x32x8f16` / `..bf16_1k` (gfx908:
    two `..32x32x4bf16` for bf16; f32: four `v_mfma_f32_32x32x2f32`, full
    f32 products); elsewhere each lane computes its own elements with fused
    multiply-adds. With `operand_type = i8` the accumulator is i32 (the
    products and sums are exact, wrapping at 32 bits):
    two `v_mfma_i32_32x32x8i8` on gfx908 / gfx90a, one
    `v_mfma_i32_32x32x16_i8` on gfx940, lane by lane elsewhere.

    Example:
    ```mlir
    %r = tessera_tile.wavefront_mma %a[%i], %b[%j], %c {m = 64 : i64, n = 64 : i64, lda = 40 : i64, ldb = 136 : i64, operand_type = bf16}
        : memref<10240xi16, 3>, memref<8704xi16, 3>, vector<64xf32>
    ```
  }];
  let arguments = (ins AnyMemRef:$a, Index:$a_index, AnyMemRef:$b, Index:$b_index,
                       VectorOfRankAndType<[1], [F32, I32]>:$acc,
                       I64Attr:$m, I64Attr:$n, I64Attr:$lda, I64Attr:$ldb, TypeAttr:$operand_type);
  let results = (outs VectorOfRankAndType<[1], [F32, I32]>:$result);
  let assemblyFormat = [{
    $a `[` $a_index `]` `,` $b `[` $b_index `]` `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Tile_Wave32MmaOp : Tile_Op<"wave32_mma", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "a wave of 32 lanes multiplies matrices from shared memory in 16 x 16 tiles (k = 16)";
  let description = [{
    The 32 lanes of a wave (lanes `32*w .. 32*w+31` of the group) compute
    together `C[m x n] += A[m x 16] x B[16 x n]`, where
    `A[i][k] = a[a_index + i*lda + k]` and `B[k][j] = b[b_index + k*ldb + j]`
    are values in shared memory (`operand_type`: bf16 or f16, whose bits
    an i16 buffer may hold, or i8) and C is f32 (i32 for i8 operands:
    exact products and sums, wrapping at 32 bits), spread over the lanes in
    16 x 16 tiles (row-major over the `(m/16) x (n/16)` of them): lane
    `q = lane_id % 32` holds `m*n/32` elements of C, element `v` being
    `C[16*(t / (n/16)) + 2*u + q/16][16*(t % (n/16)) + q%16]` with
    `t = v / 8`, `u = v % 8` (the layout of the 32-bit accumulators of
    RDNA3's `v_wmma_f32_16x16x16` and `v_wmma_i32_16x16x16_iu8`
    instructions in wave32).

    Every lane of the wave must execute it, with the same `a_index` and
    `b_index`; `m` and `n` are multiples of 16, `lda` and `ldb` multiples
    of 8. The order of the 16 products in each sum is not specified. On
    hip's RDNA3 target (gfx1100) it is `v_wmma_f32_16x16x16_f16` /
    `..._bf16` / `v_wmma_i32_16x16x16_iu8` (signed); elsewhere each lane
    computes its own elements with fused multiply-adds (integer ones for
    i8).

    Example:
    ```mlir
    %r = tessera_tile.wave32_mma %a[%i], %b[%j], %c {m = 64 : i64, n = 32 : i64, lda = 40 : i64, ldb = 40 : i64, operand_type = f16}
        : memref<5120xf16, 3>, memref<2560xf16, 3>, vector<64xf32>
    ```
  }];
  let arguments = (ins AnyMemRef:$a, Index:$a_index, AnyMemRef:$b, Index:$b_index,
                       VectorOfRankAndType<[1], [F32, I32]>:$acc,
                       I64Attr:$m, I64Attr:$n, I64Attr:$lda, I64Attr:$ldb, TypeAttr:$operand_type);
  let results = (outs VectorOfRankAndType<[1], [F32, I32]>:$result);
  let assemblyFormat = [{
    $a `[` $a_index `]` `,` $b `[` $b_index `]` `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Tile_WarpgroupMmaOp : Tile_Op<"warpgroup_mma", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "a warpgroup of 128 lanes multiplies swizzled matrices from shared memory";
  let description = [{
    The 128 lanes of a warpgroup (lanes `128*g .. 128*g+127` of the group)
    compute together `C[64 x n] += A[64 x k] x B[k x n]` from 16-bit values
    in shared memory (`operand_type`, bf16 or f16, whose bits an i16 buffer
    may hold), accumulating in f32. Both operands are read through the
    128-byte swizzle: element `e` of a buffer (counted from its start, which
    `shared_alloc alignment = 1024` places on a 1024-byte boundary) is
    stored at `sw(e) = e ^ ((e >> 3) & 0x38)`, i.e. the 16-byte chunk `c`
    of each 128-byte row `r` moves to chunk `c ^ (r % 8)`:

      A[i][kk] = a[sw(a_index + 64*i + kk)]         (rows of 64 elements, K contiguous)
      B[kk][j] = b[sw(b_index + b_block_stride*(j/64) + 64*kk + j%64)]
                                                     (blocks of 64 columns, N contiguous)

    This is the layout a TMA copy with 128-byte swizzle writes and the one
    the Hopper `wgmma` operand descriptors read. C is spread over the lanes:
    lane `p = lane_id % 128` (warp `w = p / 32`, `q = p % 32`) holds `n/2`
    elements, element `v` being
    `C[16*w + q/4 + 8*((v%4)/2)][8*(v/4) + 2*(q%4) + v%2]`.

    Every lane of the warpgroup must execute it with the same indices;
    `n` is 64, 128, 192 or 256, `k` a multiple of 16 with
    `a_index % 64 + k <= 64`; `a_index - a_index % 64` and `b_index` are
    multiples of 512 (1024 bytes), `a_index` of 16, `b_block_stride` a
    multiple of 512 no smaller than `64*k`. The order of the `k` products in
    each sum is not specified. On cuda sm_90a it is `wgmma.mma_async`
    (tensor cores, descriptors with 128-byte swizzle); elsewhere each lane
    computes its own elements with fused multiply-adds.

    `pending` (default 0): the op may return while up to `pending` of the
    warpgroup's most recent warpgroup_mma ops (this one included) still
    read their operands and write their results. Until a
    `warpgroup_mma_wait` with a smaller `pending` has returned them, those
    ops' shared memory must not be overwritten and their results may only
    be passed on as the accumulator of another warpgroup_mma or to the
    wait. Elsewhere than cuda sm_90a the op is complete when it returns.

    Example:
    ```mlir
    %r = tessera_tile.warpgroup_mma %a[%i], %b[%j], %c {n = 128 : i64, k = 64 : i64, b_block_stride = 4096 : i64, operand_type = bf16}
        : memref<8192xi16, 3>, memref<16384xi16, 3>, vector<64xf32>
    ```
  }];
  let arguments = (ins AnyMemRef:$a, Index:$a_index, AnyMemRef:$b, Index:$b_index,
                       VectorOfRankAndType<[1], [F32]>:$acc,
                       I64Attr:$n, I64Attr:$k, I64Attr:$b_block_stride, TypeAttr:$operand_type,
                       DefaultValuedAttr<I64Attr, "0">:$pending);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$result);
  let assemblyFormat = [{
    $a `[` $a_index `]` `,` $b `[` $b_index `]` `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Tile_WarpgroupMmaWaitOp : Tile_Op<"warpgroup_mma_wait", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "wait until at most `pending` of the warpgroup's warpgroup_mma ops are in flight";
  let description = [{
    Returns `acc`, the result of a warpgroup_mma with `pending` > 0, once
    at most `pending` of the executing warpgroup's warpgroup_mma ops are
    still in flight (0: all are complete, their results readable and their
    shared memory free). Every lane of the warpgroup executes it. On cuda
    sm_90a it is `wgmma.wait_group`; elsewhere it returns `acc`.

    Example:
    ```mlir
    %d = tessera_tile.warpgroup_mma_wait %c {pending = 0 : i64} : vector<64xf32>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$acc, I64Attr:$pending);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$result);
  let assemblyFormat = "$acc attr-dict `:` type($acc)";
  let hasVerifier = 1;
}

def Tile_RoundToBF16Op : Tile_Op<"round_to_bf16", [Pure]> {
  let summary = "the bits of an f32 rounded to bf16";
  let description = [{
    `value` rounded to the nearest bf16, ties to even, returned as the 16
    bits of the bf16 (the GPU kernels store bf16 as i16). A NaN stays a NaN:
    here and where it is expanded to integer code (vulkan, hip, level_zero,
    cuda before sm_80) its sign and top payload bits are kept and it is
    made quiet; cuda sm_80+ (`cvt.rn.bf16.f32`) gives the canonical NaN
    0x7fff.

    Example:
    ```mlir
    %bits = tessera_tile.round_to_bf16 %x
    ```
  }];
  let arguments = (ins F32:$value);
  let results = (outs I16:$bits);
  let assemblyFormat = "$value attr-dict";
}

def Tile_DotOp : Tile_Op<"dot", [Pure, AllTypesMatch<["acc", "result"]>, AllTypesMatch<["a", "b"]>]> {
  let summary = "dot product of two vectors plus an accumulator";
  let description = [{
    Example:
    ```mlir
    %d = tessera_tile.dot %a, %b, %acc : vector<8xf32>, f32
    ```
  }];
  let arguments = (ins VectorOfRank<[1]>:$a, VectorOfRank<[1]>:$b, AnyType:$acc);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$a `,` $b `,` $acc attr-dict `:` type($a) `,` type($acc)";
  let builders = [OpBuilder<(ins "::mlir::Value":$a, "::mlir::Value":$b, "::mlir::Value":$acc), [{
    build($_builder, $_state, acc.getType(), a, b, acc);
  }]>];
  let hasVerifier = 1;
}

def Tile_ShuffleOp : Tile_Op<"shuffle", [AllTypesMatch<["value", "result"]>]> {
  let summary = "exchange a value between lanes of a subgroup";
  let description = [{
    Reads `value` from another lane: `lane ^ offset` (xor), `lane + offset`
    (down), `lane - offset` (up) or `offset` (idx). Out-of-range lanes read
    their own value.

    Example:
    ```mlir
    %o = tessera_tile.shuffle xor %v, %c1 : f32
    ```
  }];
  let arguments = (ins Tile_ShuffleMode:$mode, Tile_Scalar:$value, Index:$offset);
  let results = (outs Tile_Scalar:$result);
  let assemblyFormat = "$mode $value `,` $offset attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Tile_SubgroupReduceOp : Tile_Op<"subgroup_reduce", [AllTypesMatch<["value", "result"]>]> {
  let summary = "reduce a value over the lanes of a subgroup";
  let description = [{
    Every lane gets the reduction of `value` over its subgroup.

    Example:
    ```mlir
    %s = tessera_tile.subgroup_reduce add %v : f32
    ```
  }];
  let arguments = (ins Tile_ReduceKind:$kind, Tile_Scalar:$value);
  let results = (outs Tile_Scalar:$result);
  let assemblyFormat = "$kind $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Tile_LoadOp : Tile_Op<"load", []> {
  let summary = "vector load from a buffer";
  let description = [{
    Loads `vector<N x T>` of contiguous elements starting at `indices`.

    Example:
    ```mlir
    %v = tessera_tile.load %m[%i] : memref<1024xf32>, vector<8xf32>
    ```
  }];
  let arguments = (ins AnyMemRef:$memref, Variadic<Index>:$indices);
  let results = (outs VectorOfRank<[1]>:$result);
  let assemblyFormat = "$memref `[` $indices `]` attr-dict `:` type($memref) `,` type($result)";
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", []> {
  let summary = "vector store to a buffer";
  let description = [{
    Example:
    ```mlir
    tessera_tile.store %v, %m[%i] : vector<8xf32>, memref<1024xf32>
    ```
  }];
  let arguments = (ins VectorOfRank<[1]>:$value, AnyMemRef:$memref, Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $memref `[` $indices `]` attr-dict `:` type($value) `,` type($memref)";
  let hasVerifier = 1;
}

def Tile_AtomicRMWOp : Tile_Op<"atomic_rmw", [AllTypesMatch<["value", "result"]>]> {
  let summary = "atomic read-modify-write with a visibility scope";
  let description = [{
    Atomically applies `kind` with `value` to `memref[indices]` and returns
    the old value. `scope` says which agents must observe it atomically:
    `tile` (the lanes of a subgroup), `group`, `device` or `mesh` (system).

    Example:
    ```mlir
    %old = tessera_tile.atomic_rmw add %v, %m[%i] scope = device : f32, memref<16xf32>
    ```
  }];
  let arguments = (ins Tile_AtomicKind:$kind, Tile_Scalar:$value, AnyMemRef:$memref,
                       Variadic<Index>:$indices, Tile_AtomicScope:$scope);
  let results = (outs Tile_Scalar:$result);
  let assemblyFormat = [{
    $kind $value `,` $memref `[` $indices `]` `scope` `=` $scope attr-dict
    `:` type($value) `,` type($memref)
  }];
  let hasVerifier = 1;
}

def Tile_MathOp : Tile_Op<"math", [Pure]> {
  let summary = "elementwise math on scalars or vectors";
  let description = [{
    `exp`, `log`, `sqrt`, `rsqrt`, `tanh` take one operand, `max` and `min`
    two, `fma` three (`a*b + c`). All operands have the result type.

    Example:
    ```mlir
    %e = tessera_tile.math exp(%x) : vector<8xf32>
    %f = tessera_tile.math fma(%a, %b, %c) : f32
    ```
  }];
  let arguments = (ins Tile_MathFn:$fn, Variadic<Tile_FloatLike>:$operands);
  let results = (outs Tile_FloatLike:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

#endif // TESSERA_TILE_OPS
