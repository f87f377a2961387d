//===- GraphOps.td - Tessera Graph IR ----------------------*- tablegen -*-===//
//
// Graph IR: tensor-level ops with layouts (LayoutSpec, carried as the tensor
// encoding) and shardings (ShardSpec over a named-axis Mesh).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_GRAPH_OPS
#define TESSERA_GRAPH_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Graph_Dialect : Dialect {
  let name = "tessera_graph";
  let cppNamespace = "::tessera::graph";
  let summary = "Tessera Graph IR: tensor ops with layouts and shardings";
  let description = [{
    Whole-tensor operations on builtin `tensor` values. A tensor's physical
    layout is its encoding (`#tessera_graph.layout<...>`, row-major when
    absent); shardings are `#tessera_graph.shard<...>` attributes naming axes
    of a `tessera_graph.mesh`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let useFoldAPI = kEmitFoldAdaptorFolder;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Graph_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"mean", 3>]> {
  let cppNamespace = "::tessera::graph";
}
def Graph_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "elementwise comparison (IEEE: every comparison with NaN is false but ne)", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>, I32EnumAttrCase<"lt", 2>,
    I32EnumAttrCase<"le", 3>, I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::tessera::graph";
}
def Graph_AssocOrder : I32EnumAttr<"AssocOrder",
    "association order of a reduction (fixed, hence deterministic)", [
    I32EnumAttrCase<"sequential", 0>, I32EnumAttrCase<"pairwise", 1>]> {
  let cppNamespace = "::tessera::graph";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Graph_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Graph_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Graph_LayoutAttr : Graph_Attr<"Layout", "layout",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "LayoutSpec: physical order of the last two dims of a tensor";
  let description = [{
    One of five layouts of the two innermost dimensions `[M, N]` (leading
    dimensions stay row-major):

    - `row_major`: offset `i*N + j`.
    - `col_major`: offset `j*M + i`.
    - `blocked<BM, BN[, BK]>`: BMxBN blocks stored contiguously, blocks and
      elements in row-major order. `BK` is the contraction block
      `--tessera-graph-to-schedule` gives a matmul fed by the tensor (its
      KC, also through the `convert_layout` that makes it row-major); it
      has no effect on offsets.
    - `tiled<[TM, TN], [UM, UN]>`: two levels of blocking: macro tiles TMxTN
      in row-major order, micro tiles UMxUN inside each, row-major elements.
    - `interleaved<F>`: groups of F rows stored element-interleaved:
      offset `((i/F)*N + j)*F + i%F`.

    The verifier checks that the blocks divide the shape.

    Example:
    ```mlir
    tensor<64x64xf32, #tessera_graph.layout<blocked<16, 16>>>
    tensor<64x64xf32, #tessera_graph.layout<tiled<[32, 32], [8, 8]>>>
    ```
  }];
  let parameters = (ins
    "::tessera::graph::LayoutKind":$kind,
    ArrayRefParameter<"int64_t">:$block,
    ArrayRefParameter<"int64_t">:$micro,
    "int64_t":$factor);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isRowMajor() const { return getKind() == LayoutKind::RowMajor; }
    /// Physical element offset of logical (i, j) in an MxN tensor.
    int64_t offset(int64_t i, int64_t j, int64_t M, int64_t N) const;
  }];
}

def Graph_ShardAttr : Graph_Attr<"Shard", "shard"> {
  let summary = "ShardSpec: how a tensor is placed on a mesh";
  let description = [{
    `dims` has one entry per tensor dimension: the mesh axis it is
    partitioned over, `""` for none, or a list of axes (`["dp", "tp"]`) for
    a dim partitioned over several, the first one major: the device's block
    is its coordinates on them taken row-major (JAX's
    `PartitionSpec(("dp", "tp"))`). `replicate` lists axes the tensor is
    replicated over; `reduce` lists axes that hold partial sums still to be
    reduced. The mesh is a `tessera_graph.mesh` symbol; every axis named must
    exist on it (checked where the attribute is used).

    Example:
    ```mlir
    #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = ["tp"], reduce = []>
    #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>
    ```
  }];
  let extraClassDeclaration = [{
    /// The mesh axes dim `d` is partitioned over, the major one first
    /// (empty: not partitioned). Entries the verifier would refuse read as
    /// empty.
    ::llvm::SmallVector<::llvm::StringRef> getDimAxes(unsigned d) const;
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$mesh,
                        "::mlir::ArrayAttr":$dims,
                        "::mlir::ArrayAttr":$replicate,
                        "::mlir::ArrayAttr":$reduce);
  let assemblyFormat = "`<` struct(params) `>`";
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

// i1 (the result of `compare`, the condition of `select`) is stored as one
// byte holding 0 or 1 everywhere (memrefs, SPIR-V buffers, host arrays,
// .npy files as numpy's bool `|b1`); only compare, select, cast and the
// data-movement ops take it (the verifiers say so).
def Graph_ElementType : AnyTypeOf<[F32, F16, BF16, I32, I8, F8E4M3FN, F8E5M2, I1]>;
// Static shapes: every backend sizes its loops, tiles and buffers at compile
// time (a dynamic dim is a verifier error naming the operand).
def Graph_Tensor : StaticShapeTensorOf<[F32, F16, BF16, I32, I8, F8E4M3FN, F8E5M2, I1]>;

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

def Graph_MeshOp : Graph_Op<"mesh", [Symbol]> {
  let summary = "a device mesh with named axes";
  let description = [{
    Declares a logical mesh of devices; shardings and collectives name its
    axes (conventionally `dp`, `tp`, `pp`).

    Example:
    ```mlir
    tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 4]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$axes,
                       DenseI64ArrayAttr:$shape);
  let assemblyFormat = "$sym_name `axes` `=` $axes `shape` `=` $shape attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Size of the named axis, or -1 when the mesh has no such axis.
    int64_t axisSize(::llvm::StringRef axis);
  }];
}

def Graph_MatmulOp : Graph_Op<"matmul", [Pure]> {
  let summary = "matrix product with optional batch dimensions";
  let description = [{
    `[..., M, K] x [..., K, N] -> [..., M, N]`; leading (batch) dimensions
    must match. Operand and result element types:

    | operands | result |
    |---|---|
    | f32 | f32 |
    | f16 | f16 or f32 |
    | bf16 | bf16 or f32 |
    | f8E4M3FN, f8E5M2 (either on each side) | f32 (fp8 is a storage type) |
    | i8 | i8 or i32 |
    | i32 | i32 |

    Each result element is the sum over all of K of the products, in the
    accumulator type (f32 for float operands, the products of narrow floats
    being exact; i32 for integer operands, wrapping), rounded once to the
    result type (round to nearest even; i32 -> i8 keeps the low byte). The
    order of the summation is the backend's.

    `accum` states the accumulator type as a policy (the design documents'
    `accum = f32`). It must be a float type for float operands and an
    integer type for integer ones. Every Tessera backend accumulates in f32
    (i32); any other accumulator is refused when the program is compiled
    (UNSUPPORTED, naming the policy), never silently changed.

    Example:
    ```mlir
    %c = tessera_graph.matmul %a, %b : tensor<128x64xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
    %d = tessera_graph.matmul %x, %w : tensor<4x128x64xbf16>, tensor<4x64x32xbf16> -> tensor<4x128x32xf32>
    %e = tessera_graph.matmul %x, %v {accum = f32} : tensor<128x64xbf16>, tensor<64x32xbf16> -> tensor<128x32xbf16>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs, OptionalAttr<TypeAttr>:$accum);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

class Graph_BinaryOp<string mnemonic, string what>
    : Graph_Op<mnemonic, [Pure]> {
  let summary = "elementwise " # what # " with numpy broadcasting";
  let description = [{
    Elementwise on two tensors of the same element type, broadcast as numpy
    does: the shapes are aligned at their last dims; each pair of dims must
    be equal or one of them 1 (a missing leading dim counts as 1), and the
    result has the larger of each pair, e.g. a bias `[N]` on `[M, N]`, a
    row statistic `[M, 1]` on `[M, N]`, `[B, 1, N]` with `[S, 1]`. The
    result type is inferred when omitted from the builder. Operands whose
    shape differs from the result must be row-major.

    f16, bf16 and fp8 values are computed in f32 and the result is
    rounded to the element type (nearest even; see `cast`); integers wrap
    around in their width. Integer `div` truncates toward zero; `x / 0` is
    0 and `INT_MIN / -1` wraps to `INT_MIN` (never a trap).

    Example:
    ```mlir
    %y = tessera_graph.}] # mnemonic # [{ %x, %b : tensor<4x8xf32>, tensor<8xf32>
    %z = tessera_graph.}] # mnemonic # [{ %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  // The result type is written after `->` when it is not the lhs type.
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `` custom<BroadcastResult>(type($result), ref(type($lhs)), ref(type($rhs)))";
  let builders = [OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
    build($_builder, $_state, ::tessera::graph::broadcastType(lhs.getType(), rhs.getType()), lhs, rhs);
  }]>];
  let hasVerifier = 1;
}
def Graph_AddOp : Graph_BinaryOp<"add", "addition">;
def Graph_SubOp : Graph_BinaryOp<"sub", "subtraction">;
def Graph_MulOp : Graph_BinaryOp<"mul", "multiplication">;
def Graph_DivOp : Graph_BinaryOp<"div", "division">;
def Graph_MaxOp : Graph_BinaryOp<"max", "maximum">;
def Graph_MinOp : Graph_BinaryOp<"min", "minimum">;
def Graph_PowOp : Graph_BinaryOp<"pow", "power (lhs ** rhs, floats only)">;

def Graph_CompareOp : Graph_Op<"compare", [Pure]> {
  let summary = "elementwise comparison with numpy broadcasting, an i1 result";
  let description = [{
    `result[i] = lhs[i] <predicate> rhs[i]` for `predicate` one of `eq`,
    `ne`, `lt`, `le`, `gt`, `ge`, on two tensors of the same element type
    broadcast as the binary ops do (numpy rules); the result has the
    broadcast shape and element type `i1` (stored as a byte, 0 or 1).
    Floats compare as IEEE does: every comparison with a NaN is false except
    `ne`, which is true; -0 == +0. f16, bf16 and fp8 compare their
    exact values; integers compare as signed. i1 operands take `eq` and `ne`
    only. Operands and result are row-major.

    Example:
    ```mlir
    %m = tessera_graph.compare lt %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
    ```
  }];
  let arguments = (ins Graph_ComparePredicate:$predicate, Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let builders = [OpBuilder<(ins "::tessera::graph::ComparePredicate":$predicate,
                                 "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
    build($_builder, $_state, ::tessera::graph::compareType(lhs.getType(), rhs.getType()),
          predicate, lhs, rhs);
  }]>];
  let hasVerifier = 1;
}

def Graph_SelectOp : Graph_Op<"select", [Pure]> {
  let summary = "elementwise choice by an i1 condition, numpy broadcasting";
  let description = [{
    `result[i] = cond[i] ? a[i] : b[i]`: `cond` is i1, `a` and `b` have the
    same element type (any, i1 too), and the three shapes broadcast as
    numpy does; the result has the broadcast shape and the element type of
    `a`. The result type is written after `->` only when it is not the
    type of `a` (inferred by the builder). Row-major tensors.

    Example:
    ```mlir
    %y = tessera_graph.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>
    %z = tessera_graph.select %c, %s, %b : tensor<4x8xi1>, tensor<f32>, tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$cond, Graph_Tensor:$a, Graph_Tensor:$b);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$cond `,` $a `,` $b attr-dict `:` type($cond) `,` type($a) `,` type($b) `` custom<SelectResult>(type($result), ref(type($cond)), ref(type($a)), ref(type($b)))";
  let builders = [OpBuilder<(ins "::mlir::Value":$cond, "::mlir::Value":$a, "::mlir::Value":$b), [{
    build($_builder, $_state, ::tessera::graph::selectType(cond.getType(), a.getType(), b.getType()),
          cond, a, b);
  }]>];
  let hasVerifier = 1;
}

class Graph_UnaryOp<string mnemonic, string what>
    : Graph_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # what;
  let description = [{
    Elementwise }] # what # [{ of a tensor.

    Example:
    ```mlir
    %y = tessera_graph.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}
def Graph_ExpOp : Graph_UnaryOp<"exp", "exponential">;
def Graph_ReluOp : Graph_UnaryOp<"relu", "max(x, 0)">;
def Graph_NegOp : Graph_UnaryOp<"neg", "negation (integers wrap)">;
def Graph_AbsOp : Graph_UnaryOp<"abs", "absolute value (integers wrap: abs(INT_MIN) = INT_MIN)">;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "square root (floats)">;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", "1 / sqrt(x) (floats)">;
def Graph_LogOp : Graph_UnaryOp<"log", "natural logarithm (floats)">;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "hyperbolic tangent (floats)">;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "logistic sigmoid 1 / (1 + exp(-x)) (floats)">;
def Graph_ErfOp : Graph_UnaryOp<"erf", "error function (floats)">;
def Graph_SiluOp : Graph_UnaryOp<"silu", "SiLU x * sigmoid(x) (floats)">;

def Graph_GeluOp : Graph_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise GELU, exact or with the tanh approximation";
  let description = [{
    `approximate = "tanh"` (the default, GPT-2's form):
    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`;
    `approximate = "none"`: the exact `0.5 x (1 + erf(x / sqrt(2)))`
    (PyTorch's names for the two forms).

    Example:
    ```mlir
    %y = tessera_graph.gelu %x : tensor<4x8xf32>
    %z = tessera_graph.gelu %x {approximate = "none"} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input,
                       DefaultValuedStrAttr<StrAttr, "tanh">:$approximate);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_CastOp : Graph_Op<"cast", [Pure]> {
  let summary = "elementwise element-type conversion";
  let description = [{
    Converts each element; shapes and layouts must match. Between any two
    of f32, f16, bf16, f8E4M3FN, f8E5M2, i32, i8 and i1:

    - float -> float: the nearest value of the result type, ties to even.
      Overflow: f16, bf16 and f8E5M2 (IEEE-style: the top byte of an f16,
      largest finite value 57344) become +-inf; f8E4M3FN (no infinities,
      largest finite value 448) saturates: a finite value whose rounding
      exceeds 448 becomes +-448, and so do +-inf (NVIDIA's
      `cvt.rn.satfinite`). NaN stays NaN (f8E4M3FN: 0x7F / 0xFF; f8E5M2:
      0x7E / 0xFE quiet); -0 stays -0; subnormals of every format are kept
      (no flush to zero).
    - float -> int: round toward zero, then saturate to the range of the
      result type (i8: [-128, 127]); NaN gives 0. Never undefined.
    - int -> float: to the nearest f32 (ties to even), then as float ->
      float (an i32 beyond 2^24 may round twice).
    - int -> int: i8 -> i32 sign-extends; i32 -> i8 keeps the low 8 bits
      (two's complement wrap-around).
    - i1 -> any type: 0 or 1; any type -> i1: `x != 0` (NaN is true, -0
      is false), as numpy's `astype(bool)`.

    `rounding = "stochastic"` with `seed = S` (f32 -> bf16, f16,
    f8E4M3FN or f8E5M2 only): each element rounds to one of its two neighbours in the result
    type, up with probability equal to its distance from the lower one over
    the gap, so the result is unbiased in expectation. The random bits are
    Philox-4x32-10 keyed by `S`, with the element's row-major index as the
    counter: the same seed gives the same bits on every backend and in the
    reference. docs/ir.md ("stochastic rounding") gives the exact integer
    definition, overflow and subnormals. `rounding = "nearest_even"` is the
    default.

    In an SPMD program the tensor is one device's part of a global one,
    and the counter can be the element's index in the *global* tensor, so
    that the bits equal the single-device program's: a second operand, the
    device's `tessera_graph.mesh_position` (`tensor<1xi32>`), with
    `global_strides` (per dim, the global tensor's row-major stride),
    `mesh_shape` and `mesh_offsets` (per mesh axis, the global index of a
    device's first element per unit of its coordinate on that axis). The
    index is then `sum_d i_d * global_strides[d] + sum_a c_a *
    mesh_offsets[a]`, with `c` the position's row-major digits over
    `mesh_shape`. --tessera-shard-propagation writes these for every
    stochastic cast of a partitioned tensor.

    Example:
    ```mlir
    %h = tessera_graph.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    %q = tessera_graph.cast %y : tensor<4x8xf32> -> tensor<4x8xf8E4M3FN>
    %s = tessera_graph.cast %x {rounding = "stochastic", seed = 42} : tensor<4x8xf32> -> tensor<4x8xbf16>
    // Rows split over "tp" (2 devices) of a global 8x8 tensor:
    %g = tessera_graph.cast %x, %pos {rounding = "stochastic", seed = 42, global_strides = array<i64: 8, 1>,
           mesh_shape = array<i64: 2>, mesh_offsets = array<i64: 32>} : tensor<4x8xf32>, tensor<1xi32> -> tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Optional<Graph_Tensor>:$position,
                       OptionalAttr<StrAttr>:$rounding, OptionalAttr<I64Attr>:$seed,
                       OptionalAttr<DenseI64ArrayAttr>:$global_strides,
                       OptionalAttr<DenseI64ArrayAttr>:$mesh_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$mesh_offsets);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input (`,` $position^)? attr-dict `:` type($input) (`,` type($position)^)? `->` type($result)";
  let hasVerifier = 1;
  let builders = [
    // Round to nearest even (the default).
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input), [{
      build($_builder, $_state, result, input, ::mlir::Value(), ::mlir::StringAttr(), ::mlir::IntegerAttr(),
            ::mlir::DenseI64ArrayAttr(), ::mlir::DenseI64ArrayAttr(), ::mlir::DenseI64ArrayAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// True for rounding = "stochastic".
    bool isStochastic() { return getRounding() && *getRounding() == "stochastic"; }
    /// A stochastic cast's counter coefficients: per dim the multiplier of
    /// the element's index along it (the row-major strides of its own shape
    /// unless `global_strides` says otherwise).
    ::llvm::SmallVector<int64_t> indexStrides();
  }];
}

def Graph_ReduceOp : Graph_Op<"reduce", [Pure]> {
  let summary = "sum, mean, max or min over dimensions with a fixed association order";
  let description = [{
    Reduces `dims` (any set of dims, in any order). `order` fixes the
    association tree (`sequential`: left to right; `pairwise`: a balanced
    binary tree) over the reduced elements of each output taken in
    row-major order of the reduced dims, so results are bitwise
    reproducible. `mean` (floats only) is the sum in that order divided by
    the number of reduced elements, in f32.

    The result drops the reduced dims, or keeps them with size 1
    (numpy's `keepdims`): the result type says which. Both have the same
    elements in the same order; a kept `[M, 1]` broadcasts against
    `[M, N]` in the binary ops.

    `sum` and `mean` accumulate floats in f32 and integers in i32, rounded
    once to the result type. `accum` states that as a policy; as on
    `matmul`, any other accumulator is refused at compile time.

    Example:
    ```mlir
    %s = tessera_graph.reduce sum %x dims = [1] order = pairwise : tensor<4x8xf32> -> tensor<4xf32>
    %m = tessera_graph.reduce mean %x dims = [1] order = pairwise : tensor<4x8xf32> -> tensor<4x1xf32>
    %h = tessera_graph.reduce sum %y dims = [0] order = pairwise {accum = f32} : tensor<64x8xbf16> -> tensor<8xbf16>
    ```
  }];
  let arguments = (ins Graph_ReduceKind:$kind, Graph_Tensor:$input,
                       DenseI64ArrayAttr:$dims, Graph_AssocOrder:$order,
                       OptionalAttr<TypeAttr>:$accum);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$kind $input `dims` `=` $dims `order` `=` $order attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when the result keeps the reduced dims (with size 1).
    bool keepsDims();
    /// The number of input elements each result element combines.
    int64_t reducedCount();
  }];
}

def Graph_SoftmaxOp : Graph_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "numerically stable softmax along one dimension";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `dim`.

    Example:
    ```mlir
    %p = tessera_graph.softmax %x dim = 1 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_AttentionGradOp : Graph_Op<"attention_grad", [Pure,
    AllTypesMatch<["query", "dquery"]>, AllTypesMatch<["key_t", "dkey_t"]>,
    AllTypesMatch<["value", "dvalue"]>]> {
  let summary = "the VJP of attention, computed blockwise without the score matrix";
  let description = [{
    For `O = softmax(scale * Q K^T + M) V` (softmax over the keys; `M` is 0,
    or with `causal` -inf where key j > query i) and the cotangent `dO` of
    `O`, the cotangents of `query` (Q `[Sq, d]`), `key_t` (K^T `[d, Skv]`)
    and `value` (V `[Skv, dv]`):

    ```
    P = softmax(scale * Q K^T + M)     dV = P^T dO     dP = dO V^T
    dS = P * (dP - rowsum(dO * O))     dQ = scale * dS K     dK^T = scale * Q^T dS
    ```

    `--tessera-grad` writes it for an attention chain (matmul, a splat
    scale, a causal mask, softmax, matmul) whose probabilities nothing else
    reads, so the backward keeps no `Sq x Skv` matrix: a backend computes
    it block by block, recomputing the scores from Q and K
    (`tessera_schedule.flash_attention_grad`), or graph-to-schedule writes
    it out as matmuls and a softmax. Rank 2, or rank 3 with a leading batch
    (heads) dim on every operand; f32, row-major; `out` is `O`.

    Example:
    ```mlir
    %dq, %dkt, %dv = tessera_graph.attention_grad %q, %kt, %v, %o, %do scale = 0.125 causal
        : tensor<256x64xf32>, tensor<64x256xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$query, Graph_Tensor:$key_t, Graph_Tensor:$value,
                       Graph_Tensor:$out, Graph_Tensor:$dout, F32Attr:$scale, UnitAttr:$causal);
  let results = (outs Graph_Tensor:$dquery, Graph_Tensor:$dkey_t, Graph_Tensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key_t `,` $value `,` $out `,` $dout `scale` `=` $scale (`causal` $causal^)? attr-dict
    `:` type($query) `,` type($key_t) `,` type($value) `,` type($out) `,` type($dout)
  }];
  let hasVerifier = 1;
}

def Graph_LayerNormOp : Graph_Op<"layernorm", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalization over the last dim, with scale and shift";
  let description = [{
    Along the last dim (N elements) of each row, in f32:
    `mean = sum(x) / N`, `var = sum((x - mean)^2) / N` (two passes, not
    E[x^2] - E[x]^2, which cancels), then
    `y = (x - mean) / sqrt(var + epsilon) * gamma + beta`, rounded once to
    the element type. `gamma` and `beta` are `[N]`, of the input's element
    type; `epsilon` defaults to 1e-5 (PyTorch's). Lowered to one fused
    kernel per norm on every backend (a group per row on GPUs; the rows
    loop on the cpu), with elementwise users fused after it under
    `fuse-reductions`.

    Example:
    ```mlir
    %y = tessera_graph.layernorm %x, %gamma, %beta : tensor<256x768xf32>, tensor<768xf32>, tensor<768xf32>
    %z = tessera_graph.layernorm %x, %gamma, %beta {epsilon = 1.0e-6 : f32} : tensor<256x768xf32>, tensor<768xf32>, tensor<768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$gamma, Graph_Tensor:$beta,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma) `,` type($beta)";
  let hasVerifier = 1;
}

def Graph_RmsNormOp : Graph_Op<"rmsnorm", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "RMS normalization over the last dim, with scale";
  let description = [{
    Along the last dim (N elements) of each row, in f32:
    `y = x / sqrt(sum(x^2) / N + epsilon) * gamma`, rounded once to the
    element type (LLaMA's RMSNorm). `gamma` is `[N]`; `epsilon` defaults
    to 1e-6. One fused kernel per norm, as for `layernorm`.

    Example:
    ```mlir
    %y = tessera_graph.rmsnorm %x, %gamma : tensor<256x768xf32>, tensor<768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$gamma,
                       DefaultValuedAttr<F32Attr, "1.0e-6">:$epsilon);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $gamma attr-dict `:` type($input) `,` type($gamma)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement (shape) ops: each result element is one input element (or
// an index, for iota), copied bit for bit. Row-major operands and results;
// each is its own kernel (not fused into its users yet).
//===----------------------------------------------------------------------===//

def Graph_TransposeOp : Graph_Op<"transpose", [Pure]> {
  let summary = "permute the dims of a tensor";
  let description = [{
    Result dim `i` is input dim `perm[i]`:
    `result[i0, .., in] = input[j]` with `j[perm[k]] = i_k`.

    Example:
    ```mlir
    %t = tessera_graph.transpose %x perm = [0, 2, 1, 3] : tensor<256x12x4x64xf32> -> tensor<256x4x12x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `perm` `=` $perm attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure]> {
  let summary = "same elements in row-major order, another shape";
  let description = [{
    The element count must not change.

    Example:
    ```mlir
    %h = tessera_graph.reshape %x : tensor<256x768xf32> -> tensor<256x12x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_SliceOp : Graph_Op<"slice", [Pure]> {
  let summary = "a strided window of a tensor";
  let description = [{
    `result[i] = input[offsets + i * strides]` per dim; the sizes are the
    result's shape. Every element read must be inside the input (checked
    by the verifier: static shapes).

    Example:
    ```mlir
    %q = tessera_graph.slice %qkv offsets = [0, 0] strides = [1, 1] : tensor<256x2304xf32> -> tensor<256x768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$offsets, DenseI64ArrayAttr:$strides);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `offsets` `=` $offsets `strides` `=` $strides attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_BroadcastInDimOp : Graph_Op<"broadcast_in_dim", [Pure]> {
  let summary = "broadcast into a larger shape, any dims";
  let description = [{
    Input dim `k` becomes result dim `dims[k]` (strictly increasing); it
    must have the result's size there or size 1 (stretched). The other
    result dims are new (XLA's broadcast_in_dim).

    Example:
    ```mlir
    %b = tessera_graph.broadcast_in_dim %v dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_IotaOp : Graph_Op<"iota", [Pure]> {
  let summary = "the index along one dim";
  let description = [{
    `result[i0, .., in] = i_dim`, converted to the element type (exact up
    to 2^24 in f32; bf16 and fp8 round; integers wrap).

    Example:
    ```mlir
    %i = tessera_graph.iota dim = 1 : tensor<4x8xi32>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "`dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_MeshPositionOp : Graph_Op<"mesh_position", [Pure]> {
  let summary = "the device's position in the mesh";
  let description = [{
    In an SPMD program, the index of the device that runs it: its mesh
    coordinates, row-major over the mesh's axes (the last axis fastest), the
    numbering collectives and the program layer use. The program layer
    writes it into the device's buffer once, when the program is loaded;
    no kernel computes it. A stochastic `cast` of a partitioned tensor reads
    it to key its random bits by the element's global index.

    Example:
    ```mlir
    %p = tessera_graph.mesh_position @mesh : tensor<1xi32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$mesh attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_GatherOp : Graph_Op<"gather", [Pure]> {
  let summary = "rows of a table picked by integer indices (embedding lookup)";
  let description = [{
    `result[i.., j..] = table[clamp(indices[i..], 0, V - 1), j..]` for a
    table `[V, ...]` and i32 indices of any shape; the result is the
    indices' shape followed by the table's dims after the first. An index
    outside [0, V) is clamped to the nearest row (never a read out of
    bounds; the reference does the same).

    Example:
    ```mlir
    %e = tessera_graph.gather %wte, %tokens : tensor<50257x768xf32>, tensor<256xi32> -> tensor<256x768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$table, Graph_Tensor:$indices);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$table `,` $indices attr-dict `:` type($table) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ConcatOp : Graph_Op<"concat", [Pure]> {
  let summary = "join tensors along one dim";
  let description = [{
    The inputs, in order, along `dim`; every other dim must match.

    Example:
    ```mlir
    %c = tessera_graph.concat %a, %b dim = 1 : tensor<4x8xf32>, tensor<4x3xf32> -> tensor<4x11xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs `dim` `=` $dim attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_PadOp : Graph_Op<"pad", [Pure]> {
  let summary = "surround a tensor with a constant";
  let description = [{
    `low[d]` elements before and `high[d]` after each dim hold `value`
    (converted to the element type); `result[i] = input[i - low]` inside.

    Example:
    ```mlir
    %p = tessera_graph.pad %x low = [0, 1] high = [2, 0] value = 0.0 : tensor<4x8xf32> -> tensor<6x9xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high, F64Attr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `low` `=` $low `high` `=` $high `value` `=` $value attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ArgmaxOp : Graph_Op<"argmax", [Pure]> {
  let summary = "the index of the largest element along one dim";
  let description = [{
    i32 result, the input's shape without `dim`: the first index whose
    value is strictly greater than every earlier one (ties: the first; a
    NaN is never greater, so it is chosen only at index 0).

    Example:
    ```mlir
    %i = tessera_graph.argmax %logits dim = 1 : tensor<256x50257xf32> -> tensor<256xi32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_QuantizeOp : Graph_Op<"quantize", [Pure]> {
  let summary = "f32 -> i8 storage with an f32 scale, per tensor or per channel";
  let description = [{
    `q = saturate(round(x / scale))`: the quotient in f32, rounded half
    away from zero as `trunc(v + 0.5)` for `v >= 0` and `trunc(v - 0.5)`
    otherwise (in f32), saturated to [-128, 127]; NaN gives 0 (as `cast`).
    `scale` is `tensor<1xf32>` (per tensor), or with `axis = d` a
    `tensor<Cxf32>` with C the input's size along dim d (per channel: the
    weight's output channels). Every backend runs it as that composition
    of Graph ops (`--tessera-lower-quantization`), so the bits are the
    same everywhere.

    Example:
    ```mlir
    %q = tessera_graph.quantize %x, %s : tensor<64x128xf32>, tensor<1xf32> -> tensor<64x128xi8>
    %w8 = tessera_graph.quantize %w, %ws axis = 1 : tensor<128x32xf32>, tensor<32xf32> -> tensor<128x32xi8>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$scale, OptionalAttr<I64Attr>:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $scale (`axis` `=` $axis^)? attr-dict `:` type($input) `,` type($scale) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_DequantizeOp : Graph_Op<"dequantize", [Pure]> {
  let summary = "i8 (or the i32 of an int8 matmul) -> f32 times an f32 scale";
  let description = [{
    `y = f32(q) * scale`, with `scale` per tensor (`tensor<1xf32>`) or per
    channel (`axis = d`, `tensor<Cxf32>`) as for `quantize`. The input is
    i8 storage, or the i32 accumulator of an `i8 x i8 -> i32` matmul with
    the product of the two scales.

    Example:
    ```mlir
    %acc = tessera_graph.matmul %q, %w8 : tensor<64x128xi8>, tensor<128x32xi8> -> tensor<64x32xi32>
    %y = tessera_graph.dequantize %acc, %s_xw axis = 1 : tensor<64x32xi32>, tensor<32xf32> -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_Tensor:$scale, OptionalAttr<I64Attr>:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $scale (`axis` `=` $axis^)? attr-dict `:` type($input) `,` type($scale) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ConvertLayoutOp : Graph_Op<"convert_layout", [Pure]> {
  let summary = "change the physical layout of a tensor";
  let description = [{
    Same logical values, different LayoutSpec encoding. Conversions between
    any two of the five layouts are exact.

    Example:
    ```mlir
    %b = tessera_graph.convert_layout %a : tensor<64x64xf32> -> tensor<64x64xf32, #tessera_graph.layout<blocked<16, 16>>>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class Graph_CollectiveOp<string mnemonic, string what, dag extra,
                         string fmt> : Graph_Op<mnemonic, []> {
  let summary = what # " over mesh axes";
  let arguments = !con((ins Graph_Tensor:$input, FlatSymbolRefAttr:$mesh,
                            StrArrayAttr:$axes), extra);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = fmt;
  let hasVerifier = 1;
}
def Graph_AllReduceOp : Graph_CollectiveOp<"all_reduce", "all-reduce",
    (ins Graph_ReduceKind:$kind),
    "$kind $input `over` $mesh $axes attr-dict `:` type($input) `->` type($result)"> {
  let description = [{
    Every rank ends with the reduction of all ranks' tensors along `axes`.

    Example:
    ```mlir
    %r = tessera_graph.all_reduce sum %x over @mesh ["tp"] : tensor<8xf32> -> tensor<8xf32>
    ```
  }];
}
def Graph_BroadcastOp : Graph_CollectiveOp<"broadcast", "broadcast from a root",
    (ins I64Attr:$root),
    "$input `over` $mesh $axes `root` `=` $root attr-dict `:` type($input) `->` type($result)"> {
  let description = [{
    Every rank ends with the root's tensor.

    Example:
    ```mlir
    %r = tessera_graph.broadcast %x over @mesh ["dp"] root = 0 : tensor<8xf32> -> tensor<8xf32>
    ```
  }];
}
def Graph_AllGatherOp : Graph_CollectiveOp<"all_gather", "all-gather",
    (ins I64Attr:$dim),
    "$input `over` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)"> {
  let description = [{
    Concatenates every rank's tensor along `dim`; the result dimension is
    the input's times the number of ranks on `axes`.

    Example:
    ```mlir
    %r = tessera_graph.all_gather %x over @mesh ["tp"] dim = 0 : tensor<2x8xf32> -> tensor<8x8xf32>
    ```
  }];
}
def Graph_ReduceScatterOp : Graph_CollectiveOp<"reduce_scatter", "reduce-scatter",
    (ins Graph_ReduceKind:$kind, I64Attr:$dim),
    "$kind $input `over` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)"> {
  let description = [{
    Reduces over `axes`, then each rank keeps its slice along `dim` (the
    dimension is divided by the number of ranks).

    Example:
    ```mlir
    %r = tessera_graph.reduce_scatter sum %x over @mesh ["tp"] dim = 0 : tensor<8x8xf32> -> tensor<2x8xf32>
    ```
  }];
}

#endif // TESSERA_GRAPH_OPS
