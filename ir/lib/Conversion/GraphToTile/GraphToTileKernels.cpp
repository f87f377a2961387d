//===- GraphToTileKernels.cpp - Graph IR -> Tile IR kernels + launch plan -===//
//
// The GPU path for Graph IR, target-neutral: every kernel is plain Tile IR
// (tessera_tile ids, shared_alloc, barrier + scf/arith/math/memref), so any
// backend that lowers Tile IR runs it; the host side is a launch plan in IR.
//
// 1. Fusion. A Graph value is *materialized* (gets a buffer) unless it can
//    be computed inside its single user: elementwise ops and matmuls whose
//    only user is an elementwise op (same shape along the path for a
//    matmul, at most one matmul per kernel), and splat constants used only
//    by elementwise ops (inlined as scalars). Function results and every
//    operand of matmul / softmax / reduce / convert_layout are materialized.
// 2. One kernel per materialized value, by what computes it:
//    - an expression tree containing a matmul: shared-memory tiled GEMM
//      (128x128 per group of 256 lanes, 8x8 per lane, BK = 16) with the
//      rest of the tree as its epilogue, applied to the registers;
//    - other elementwise trees (and splat constants, copies): a fused
//      elementwise kernel, one lane per element, grid-stride loop;
//    - softmax over any dim, reduce over any dims, in the reduce's
//      association order (RowKernels.cpp);
//    - convert_layout: a copy whose load and store offsets are the two
//      layouts' offset formulas (LayoutAttr::offset, emitted as index math).
//    Buffers are flat memrefs of the storage type (`memref<N x f32>`; bf16
//    as i16, fp8 as i8: kGpuElements); a leaf of N elements is read at
//    `flat % N` (a trailing-suffix broadcast, as Graph IR defines it).
//    Loads widen to f32 / i32, every op's value is rounded to its type,
//    stores narrow: the arithmetic of the cpu backend (ElementTypes.h).
// 3. The launch plan: the function rewritten on memrefs (inputs then
//    results as arguments), `memref.alloc` for intermediates, one
//    `func.call` per kernel launch with `tessera.grid`.
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Conversion/ShapeOps.h"

#include "AttentionGradKernel.h"
#include "GpuElements.h"
#include "AttentionKernel.h"
#include "MmaGemmKernel.h"
#include "RowKernels.h"
#include "ScheduleGroups.h"

#include <cmath>
#include <limits>

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/Passes.h"

namespace tessera::conversion {
#define GEN_PASS_DEF_GRAPHTOTILEKERNELS
#define GEN_PASS_DEF_STRIPLAUNCHPLANS
#include "tessera/Conversion/GraphToTile/Passes.h.inc"
}  // namespace tessera::conversion

using namespace mlir;
namespace g = tessera::graph;
namespace t = tessera::tile;
namespace conv = tessera::conversion;

namespace {

// Lanes per group of every kernel (1-D). 256 is a multiple of every
// subgroup width we know (8 on lavapipe, 32, 64) and fits all devices.
constexpr int64_t kLanes = 256;
// Lanes of the attention kernels (AttentionKernel.h, AttentionGradKernel.h):
// each lane a register block (LaneTile.h) of the 64 x 32 blocks of the GPU
// schedule; on lavapipe 64 lanes ran GPT-2's attention backward in 159 ms,
// 128 in 200 ms, 256 in 250 ms or more (docs/gpu-lowering.md).
constexpr int64_t kAttentionLanes = 64;
// The GEMM's tile comes from Schedule IR (ScheduleGroups.h: GemmTile; the GPU
// schedule is 128x128 outputs per group of 16x16 lanes, each lane an 8x8
// register block of rows ty + 16*i and columns tx + 16*j: conflict-free
// shared reads, coalesced global stores; K staged in slices of 16, 2 x 8
// KiB of shared memory). 8x8 rather than 4x4 halves the shared loads per
// FMA: 2.4x faster on lavapipe, where every per-lane load is a gather, and
// the usual choice on GPUs with 255 registers per lane. micro_layout =
// "quads" (vulkan's schedule) lays the block out in aligned runs of 4
// instead (buildGemm).
// Lanes a group may have (Vulkan guarantees 128; every device we target
// has at least 1024).
constexpr int64_t kMaxLanes = 1024;
// Vulkan's minimum maxComputeWorkGroupCount; larger problems loop.
constexpr int64_t kMaxGroups = 65535;

int64_t numElements(Type t) { return t.cast<ShapedType>().getNumElements(); }
using g::isSplatConstant;
double splatValue(Value v) {
  DenseElementsAttr d;
  (void)matchPattern(v, m_Constant(&d));
  if (d.getElementType().isa<FloatType>()) return d.getSplatValue<APFloat>().convertToDouble();
  return static_cast<double>(d.getSplatValue<APInt>().getSExtValue());
}
Type elemOf(Value v) { return v.getType().cast<ShapedType>().getElementType(); }
/// The element types the GPU kernels store and compute (ElementTypes.h).
bool supportedElement(Type t) {
  return t.isF32() || t.isF16() || t.isBF16() || t.isFloat8E4M3FN() || t.isFloat8E5M2() || t.isInteger(32) ||
         t.isInteger(8) || t.isInteger(1);
}
using conv::gpu_elements::narrow;
using conv::gpu_elements::widen;

Value cIdx(OpBuilder &b, Location l, int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); }

/// One kernel to emit: the value it materializes and how.
struct KernelSpec {
  enum Kind { kGemm, kElementwise, kRows, kLayout, kAttention, kShape, kAttentionGrad } kind;
  Value root;            // the materialized Graph value (or a copied one)
  mutable g::MatmulOp matmul;  // kGemm: the matmul inside the tree (op handles are not const-correct)
  Operation *rowOp = nullptr;  // kRows: the row op inside the tree (g::isRowOp); kAttention(Grad): the op
  conv::GemmTile tile;   // kGemm: its tile sizes (from Schedule IR)
  bool copy = false;     // kElementwise: out = root's buffer (a second result)
  SmallVector<Value> leaves;  // materialized values read (kernel arguments)
  std::array<int64_t, 3> grid{1, 1, 1};  // its launch (not kAttentionGrad: three kernels)
  int64_t lanes = 0;
};

/// Per-function lowering state.
struct FunctionLowering {
  func::FuncOp fn;
  std::string backend;
  conv::ScheduleGroups groups;
  DenseSet<Value> materialized;
  SmallVector<KernelSpec> specs;

  InFlightDiagnostic unsupported(Operation *op, const Twine &why) {
    return op->emitOpError() << "is not lowered for the " << backend
                             << " backend (tessera-graph-to-tile-kernels): " << why;
  }

  /// Is `v` computed inside its user's kernel rather than stored? Schedule
  /// IR decided (ScheduleGroups); `forced` overrides it where a kernel
  /// cannot fuse (a second matmul in a tree, a softmax or reduce epilogue).
  bool fusible(Value v, const DenseSet<Value> &forced) {
    return groups.fused.contains(v) && !forced.contains(v);
  }

  /// Walks the fused tree under `v` (a materialized value): collects
  /// leaves and roots (the matmul, softmax or reduce the tree is built
  /// around: at most one, on a path that keeps the tree's shape; the others
  /// go to `bad`). `full`: the path from `v` keeps its shape.
  void collect(Value v, bool top, bool full, KernelSpec &s, SmallVector<Value> &roots,
               SmallVector<Value> &bad) {
    if (!top && materialized.contains(v)) {
      if (!llvm::is_contained(s.leaves, v)) s.leaves.push_back(v);
      return;
    }
    if (!top && isSplatConstant(v)) return;
    Operation *def = v.getDefiningOp();
    if (g::isTileRoot(def)) {
      (full && roots.empty() ? roots : bad).push_back(v);
      for (Value o : def->getOperands())
        if (!llvm::is_contained(s.leaves, o)) s.leaves.push_back(o);
      return;
    }
    if (def && g::isElementwise(def)) {
      int64_t n = numElements(v.getType());
      for (Value o : def->getOperands())
        collect(o, false, full && numElements(o.getType()) == n, s, roots, bad);
    }
  }

  LogicalResult check(Operation *op) {
    if (isa<func::ReturnOp>(op)) return success();
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      if (!isSplatConstant(c.getResult()) || !supportedElement(elemOf(c.getResult())))
        return unsupported(op, "only splat tensor constants are supported (f32, f16, bf16, f8E4M3FN, f8E5M2, i32, i8, i1)");
      return success();
    }
    if (auto fa = dyn_cast<tessera::schedule::FlashAttentionOp>(op)) {
      for (Value v : {fa.getQuery(), fa.getKeyT(), fa.getValue(), fa.getResult()})
        if (!elemOf(v).isF32())
          return unsupported(op, "flash_attention runs on f32 tensors, got ") << v.getType();
      for (Value v : {fa.getQuery(), fa.getValue(), fa.getResult()})
        if (!g::isRowMajor(v.getType()))
          return unsupported(op, "query, value and result must be row-major, got ") << v.getType();
      if (fa.getQuery().getType().cast<ShapedType>().getRank() == 3 && !g::isRowMajor(fa.getKeyT().getType()))
        return unsupported(op, "a batched key_t must be row-major, got ") << fa.getKeyT().getType();
      return success();
    }
    if (isa<tessera::schedule::FlashAttentionGradOp>(op))
      return success();  // f32, row-major: its verifier
    if (!isa_and_nonnull<g::GraphDialect>(op->getDialect()))
      return unsupported(op, "not a Graph IR op");
    if (!g::isTileRoot(op) && !isa<g::ConvertLayoutOp>(op) && !g::isElementwise(op) && !g::isShapeOp(op))
      return unsupported(op, "no GPU kernel for this op yet");
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type ty : types) {
      auto tt = ty.dyn_cast<RankedTensorType>();
      if (!tt || !supportedElement(tt.getElementType()))
        return unsupported(op, "element types f32, f16, bf16, f8E4M3FN, f8E5M2, i32, i8 and i1 are supported, got ") << ty;
      if (!isa<g::ConvertLayoutOp>(op) && !g::isRowMajor(ty))
        return unsupported(op, "operands must be row-major (insert a convert_layout), got ") << ty;
    }
    if (auto mm = dyn_cast<g::MatmulOp>(op)) {
      auto a = mm.getLhs().getType().cast<ShapedType>(), b = mm.getRhs().getType().cast<ShapedType>();
      if (a.getRank() != b.getRank() || a.getShape().drop_back(2) != b.getShape().drop_back(2))
        return unsupported(op, "batch dimensions of both operands must be equal");
    }
    if (auto cl = dyn_cast<g::ConvertLayoutOp>(op); cl && cl.getType().cast<ShapedType>().getRank() < 2)
      return unsupported(op, "convert_layout needs a tensor of rank >= 2");
    return success();
  }

  /// Decides what is materialized and which kernel computes each root.
  LogicalResult plan() {
    Block &body = fn.front();
    for (Operation &op : body)
      if (failed(check(&op))) return failure();
    DenseSet<Value> forced;
    // Fixed point: a tree may hold one root (matmul, softmax, reduce), on a
    // full-shape path; extra roots are materialized and the trees rebuilt.
    for (int round = 0;; ++round) {
      materialized.clear();
      specs.clear();
      for (BlockArgument a : fn.getArguments()) materialized.insert(a);
      for (Operation &op : body)
        for (Value r : op.getResults())
          if (!fusible(r, forced)) materialized.insert(r);
      bool again = false;
      for (Operation &op : body) {
        if (isa<tessera::schedule::FlashAttentionGradOp>(op)) {
          // Three results from three kernels (AttentionGradKernel.h); root:
          // the first.
          KernelSpec s{KernelSpec::kAttentionGrad, op.getResult(0), {}, &op, {}, false, {}};
          for (Value o : op.getOperands())
            if (!llvm::is_contained(s.leaves, o)) s.leaves.push_back(o);
          specs.push_back(std::move(s));
          continue;
        }
        if (op.getNumResults() != 1 || !materialized.contains(op.getResult(0))) continue;
        Value r = op.getResult(0);
        KernelSpec s{KernelSpec::kElementwise, r, {}, nullptr, {}, false, {}};
        if (isa<g::ConvertLayoutOp>(op)) {
          s.kind = KernelSpec::kLayout;
          s.leaves.push_back(op.getOperand(0));
        } else if (g::isShapeOp(&op)) {
          s.kind = KernelSpec::kShape;
          s.rowOp = &op;
          llvm::append_range(s.leaves, op.getOperands());
        } else if (isa<tessera::schedule::FlashAttentionOp>(op)) {
          s.kind = KernelSpec::kAttention;
          s.rowOp = &op;
          for (Value o : op.getOperands())
            if (!llvm::is_contained(s.leaves, o)) s.leaves.push_back(o);
        } else {
          SmallVector<Value> roots, bad;
          collect(r, true, true, s, roots, bad);
          for (Value m : bad) forced.insert(m), again = true;
          Operation *root = roots.empty() ? nullptr : roots.front().getDefiningOp();
          if (g::isRowOp(root)) {
            // The row kernel of the op, the rest of the tree applied before
            // its store.
            s.kind = KernelSpec::kRows;
            s.rowOp = root;
          } else if (root) {
            s.kind = KernelSpec::kGemm;
            s.matmul = cast<g::MatmulOp>(root);
            if (auto it = groups.gemm.find(s.matmul); it != groups.gemm.end()) s.tile = it->second;
            s.tile = conv::mma::fitTile(s.matmul, s.tile);
            const conv::GemmTile &t = s.tile;
            if (t.tm < 1 || t.tn < 1 || t.bk < 1 || t.rm < 1 || t.rn < 1 || t.tm % t.rm ||
                t.tn % t.rn || t.lanes() > kMaxLanes)
              return unsupported(s.matmul, "the schedule's GEMM tile ")
                     << t.tm << "x" << t.tn << "x" << t.bk << " with " << t.rm << "x" << t.rn
                     << " per lane has "
                     << (t.tm % t.rm || t.tn % t.rn ? std::string("a register block that does not divide it")
                                                    : std::to_string(t.lanes()) + " lanes per group")
                     << "; it needs RM | TM, RN | TN and (TM/RM) x (TN/RN) <= " << kMaxLanes
                     << " lanes (raise micro-m / micro-n or lower tile-m / tile-n)";
          }
        }
        specs.push_back(std::move(s));
      }
      if (!again) break;
    }
    return success();
  }
};

/// Emits the fused elementwise tree of one kernel.
struct ExprEmitter {
  OpBuilder &b;
  Location loc;
  DenseMap<Value, Value> args;  // materialized Graph value -> kernel memref
  Value matmul;                 // the matmul result inside the tree
  Value acc;                    // its value at this element
  DenseMap<Value, Value> memo;  // per element
  SmallVector<int64_t> outShape;  // the shape of the tree's output

  ExprEmitter(OpBuilder &b, Location loc, DenseMap<Value, Value> args, Value output, Value matmul = {},
              Value acc = {})
      : b(b), loc(loc), args(std::move(args)), matmul(matmul), acc(acc),
        outShape(output.getType().cast<ShapedType>().getShape()) {}

  /// Leaf `leaf` at flat element `flat` of a `total`-element result of
  /// shape `outShape` (numpy broadcasting when smaller), widened to its
  /// compute type.
  Value load(Value leaf, Value flat, int64_t total) {
    Value buf = args.lookup(leaf);
    ArrayRef<int64_t> shape = leaf.getType().cast<ShapedType>().getShape();
    int64_t n = numElements(leaf.getType());
    Value idx = flat;
    if (n != total) {
      // A trailing suffix of the result's shape: one remainder. Otherwise the
      // result index digit by digit (from the last dim), the operand's
      // stride for its dims that are not 1.
      ArrayRef<int64_t> out = outShape;
      if (out.size() >= shape.size() && out.take_back(shape.size()) == shape) {
        idx = b.create<arith::RemUIOp>(loc, flat, cIdx(b, loc, n));
      } else {
        Value off = cIdx(b, loc, 0), rest = flat;
        int64_t stride = 1;
        for (size_t k = 0; k < shape.size(); ++k) {
          int64_t d = out[out.size() - 1 - k], m = shape[shape.size() - 1 - k];
          if (m != 1) {
            Value i = b.create<arith::RemUIOp>(loc, rest, cIdx(b, loc, d));
            off = b.create<arith::AddIOp>(loc, off, b.create<arith::MulIOp>(loc, i, cIdx(b, loc, stride)));
          }
          if (k + 1 < shape.size()) rest = b.create<arith::DivUIOp>(loc, rest, cIdx(b, loc, d));
          stride *= m;
        }
        idx = off;
      }
    }
    return widen(b, loc, b.create<memref::LoadOp>(loc, buf, idx), elemOf(leaf));
  }

  /// The compute-type value of Graph value `v` at flat element `flat` of a
  /// result with `total` elements; `top`: v is the root, computed even if
  /// materialized, and left unrounded (the store narrows it). Every other
  /// op's value is rounded to its result type, as the reference does.
  Value emit(Value v, Value flat, int64_t total, bool top = false) {
    Type elem = elemOf(v);
    auto rounded = [&](Value x) {
      return top ? x : tessera::elements::roundTo(b, loc, x, elem, conv::kGpuElements);
    };
    if (v == matmul) return rounded(acc);
    if (!top && args.count(v)) return load(v, flat, total);
    if (isSplatConstant(v))
      return tessera::elements::splatConstant(b, loc, tessera::elements::computeType(elem), splatValue(v));
    if (auto it = memo.find(v); it != memo.end()) return it->second;
    Operation *op = v.getDefiningOp();
    if (!op) return load(v, flat, total);  // a copied argument
    SmallVector<Value> xs;
    for (Value o : op->getOperands()) xs.push_back(emit(o, flat, total));
    // Only elementwise ops reach here (FunctionLowering::check).
    Value r;
    if (auto cast = dyn_cast<g::CastOp>(op); cast && cast.isStochastic()) {
      // Its random bits are keyed by the element's row-major index: `flat`
      // (fused ops have the root's shape; the verifier keeps these casts
      // row-major). An SPMD part's cast keys them by the index in the
      // global tensor: flat's digits times the global strides, plus the
      // device's offset from its mesh position (xs[1]).
      Value index;
      if (!cast.getPosition()) {
        index = b.create<arith::IndexCastOp>(loc, b.getI64Type(), flat);
      } else {
        SmallVector<Value> digits(outShape.size());
        Value rest = flat;
        for (size_t d = outShape.size(); d-- > 0;) {
          digits[d] = b.create<arith::RemUIOp>(loc, rest, cIdx(b, loc, outShape[d]));
          rest = b.create<arith::DivUIOp>(loc, rest, cIdx(b, loc, outShape[d]));
        }
        index = tessera::elements::emitStochasticIndex(b, loc, digits, cast.indexStrides(), xs[1],
                                                       *cast.getMeshShape(), *cast.getMeshOffsets());
      }
      r = tessera::elements::emitStochasticRound(b, loc, xs[0], elemOf(v), static_cast<uint64_t>(*cast.getSeed()),
                                                 index);
    } else {
      r = *tessera::elements::emitElementwise(b, loc, op, xs, conv::kGpuElements);
    }
    return memo[v] = rounded(r);
  }
};

MemRefType flatType(Value v) {
  auto tt = v.getType().cast<ShapedType>();
  return MemRefType::get({tt.getNumElements()}, tessera::elements::storageType(tt.getElementType(), conv::kGpuElements));
}

/// Builds the bodies of the Tile IR kernels (the launch-plan patterns below
/// create the functions and their launches).
struct KernelBuilder {
  Location loc;

  /// for (i = group*256 + lane; i < n; i += groups*256) body(i)
  static void gridStride(OpBuilder &b, Location l, int64_t n, function_ref<void(OpBuilder &, Value)> body) {
    Value g = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0});
    Value gc = b.create<t::GroupCountOp>(l, b.getIndexType(), uint64_t{0});
    Value lane = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
    Value c256 = cIdx(b, l, kLanes);
    Value start = b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, g, c256), lane);
    Value step = b.create<arith::MulIOp>(l, gc, c256);
    auto loop = b.create<scf::ForOp>(l, start, cIdx(b, l, n), step);
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    body(lb, loop.getInductionVar());
  }

  static std::array<int64_t, 3> grid1D(int64_t n) {
    return {std::max<int64_t>(1, std::min((n + kLanes - 1) / kLanes, kMaxGroups)), 1, 1};
  }

  static Value emitOffset(OpBuilder &b, Location l, g::LayoutAttr layout, Value i, Value j, int64_t M, int64_t N) {
    auto mul = [&](Value x, int64_t c) { return b.create<arith::MulIOp>(l, x, cIdx(b, l, c)).getResult(); };
    auto add = [&](Value x, Value y) { return b.create<arith::AddIOp>(l, x, y).getResult(); };
    auto div = [&](Value x, int64_t c) { return b.create<arith::DivUIOp>(l, x, cIdx(b, l, c)).getResult(); };
    auto rem = [&](Value x, int64_t c) { return b.create<arith::RemUIOp>(l, x, cIdx(b, l, c)).getResult(); };
    if (!layout) return add(mul(i, N), j);
    ArrayRef<int64_t> bl = layout.getBlock();
    switch (layout.getKind()) {
    case g::LayoutKind::RowMajor: return add(mul(i, N), j);
    case g::LayoutKind::ColMajor: return add(mul(j, M), i);
    case g::LayoutKind::Blocked: {
      Value blk = add(mul(div(i, bl[0]), N / bl[1]), div(j, bl[1]));
      return add(mul(blk, bl[0] * bl[1]), add(mul(rem(i, bl[0]), bl[1]), rem(j, bl[1])));
    }
    case g::LayoutKind::Tiled: {
      ArrayRef<int64_t> u = layout.getMicro();
      Value macro = mul(add(mul(div(i, bl[0]), N / bl[1]), div(j, bl[1])), bl[0] * bl[1]);
      Value ii = rem(i, bl[0]), jj = rem(j, bl[1]);
      Value micro = mul(add(mul(div(ii, u[0]), bl[1] / u[1]), div(jj, u[1])), u[0] * u[1]);
      return add(add(macro, micro), add(mul(rem(ii, u[0]), u[1]), rem(jj, u[1])));
    }
    case g::LayoutKind::Interleaved: {
      int64_t f = layout.getFactor();
      return add(mul(add(mul(div(i, f), N), j), f), rem(i, f));
    }
    }
    return {};
  }

  void buildElementwise(func::FuncOp k, const KernelSpec &s) {
    int64_t n = numElements(s.root.getType());
    OpBuilder b = OpBuilder::atBlockBegin(&k.front());
    Value out = k.getArgument(s.leaves.size());
    DenseMap<Value, Value> args;  // leaf Graph value -> kernel argument
    for (auto [i, v] : llvm::enumerate(s.leaves)) args[v] = k.getArgument(i);
    gridStride(b, loc, n, [&](OpBuilder &lb, Value i) {
      if (s.copy) {  // the stored bits, unchanged
        lb.create<memref::StoreOp>(loc, lb.create<memref::LoadOp>(loc, k.getArgument(0), i), out, i);
        return;
      }
      ExprEmitter e(lb, loc, args, s.root);
      lb.create<memref::StoreOp>(loc, narrow(lb, loc, e.emit(s.root, i, n, /*top=*/true), elemOf(s.root)), out, i);
    });
    b.create<func::ReturnOp>(loc);
  }

  void buildLayout(func::FuncOp k, const KernelSpec &s) {
    auto src = s.leaves[0].getType().cast<ShapedType>(), dst = s.root.getType().cast<ShapedType>();
    int64_t M = src.getShape()[src.getRank() - 2], N = src.getShape().back(), n = src.getNumElements();
    OpBuilder b = OpBuilder::atBlockBegin(&k.front());
    Value in = k.getArgument(0), out = k.getArgument(1);
    g::LayoutAttr ls = g::getLayout(src), ld = g::getLayout(dst);
    gridStride(b, loc, n, [&](OpBuilder &lb, Value e) {
      // Logical element e = (batch, i, j); leading dims stay row-major.
      Value mat = lb.create<arith::DivUIOp>(loc, e, cIdx(lb, loc, M * N));
      Value base = lb.create<arith::MulIOp>(loc, mat, cIdx(lb, loc, M * N));
      Value r = lb.create<arith::RemUIOp>(loc, e, cIdx(lb, loc, M * N));
      Value i = lb.create<arith::DivUIOp>(loc, r, cIdx(lb, loc, N));
      Value j = lb.create<arith::RemUIOp>(loc, r, cIdx(lb, loc, N));
      Value so = lb.create<arith::AddIOp>(loc, base, emitOffset(lb, loc, ls, i, j, M, N));
      Value dO = lb.create<arith::AddIOp>(loc, base, emitOffset(lb, loc, ld, i, j, M, N));
      Value v = lb.create<memref::LoadOp>(loc, in, so);
      lb.create<memref::StoreOp>(loc, v, out, dO);
    });
    b.create<func::ReturnOp>(loc);
  }

  /// A shape op (ShapeOps.h): one lane per result element, the stored bits
  /// of the input element it reads copied; iota converts its index.
  void buildShape(func::FuncOp k, const KernelSpec &s) {
    ArrayRef<int64_t> outShape = s.root.getType().cast<ShapedType>().getShape();
    int64_t n = numElements(s.root.getType());
    OpBuilder b = OpBuilder::atBlockBegin(&k.front());
    Value out = k.getArgument(s.leaves.size());
    gridStride(b, loc, n, [&](OpBuilder &lb, Value flat) {
      SmallVector<Value> idx = tessera::shapes::delinearize(lb, loc, flat, outShape);
      if (auto iota = dyn_cast<g::IotaOp>(s.rowOp)) {
        Type elem = elemOf(s.root), ct = tessera::elements::computeType(elem);
        Value i = lb.create<arith::IndexCastOp>(loc, lb.getI32Type(), idx[iota.getDim()]);
        Value v = ct.isa<FloatType>() ? lb.create<arith::SIToFPOp>(loc, ct, i).getResult() : i;
        lb.create<memref::StoreOp>(loc, narrow(lb, loc, v, elem), out, flat);
        return;
      }
      // Operand k is kernel argument k (leaves are the op's operands).
      auto rawAt = [&](OpBuilder &ob, unsigned op, ArrayRef<Value> at) -> Value {
        ArrayRef<int64_t> shape = s.rowOp->getOperand(op).getType().cast<ShapedType>().getShape();
        return ob.create<memref::LoadOp>(loc, k.getArgument(op), tessera::shapes::linearize(ob, loc, at, shape));
      };
      if (isa<g::ArgmaxOp>(s.rowOp)) {
        Type inElem = elemOf(s.rowOp->getOperand(0));
        Value r = tessera::shapes::emitArgmax(lb, loc, s.rowOp, idx, [&](OpBuilder &ob, unsigned op, ArrayRef<Value> at) {
          return widen(ob, loc, rawAt(ob, op, at), inElem);
        });
        lb.create<memref::StoreOp>(loc, r, out, flat);
        return;
      }
      if (isa<g::ConcatOp, g::PadOp>(s.rowOp)) {
        Type elem = elemOf(s.root);
        Value v = tessera::shapes::emitShapeValue(
            lb, loc, s.rowOp, idx, rawAt,
            [&](OpBuilder &ob) {
              double pv = cast<g::PadOp>(s.rowOp).getValue().convertToDouble();
              return narrow(ob, loc, tessera::elements::splatConstant(ob, loc, tessera::elements::computeType(elem), pv), elem);
            },
            tessera::elements::storageType(elem, conv::kGpuElements));
        lb.create<memref::StoreOp>(loc, v, out, flat);
        return;
      }
      Value in = s.leaves[0];
      SmallVector<Value> src;
      if (isa<g::GatherOp>(s.rowOp)) {
        // The i32 index at the result's leading (indices) position.
        Value ids = s.leaves.size() > 1 ? s.leaves[1] : s.leaves[0];
        ArrayRef<int64_t> idShape = ids.getType().cast<ShapedType>().getShape();
        Value at = tessera::shapes::linearize(lb, loc, ArrayRef<Value>(idx).take_front(idShape.size()), idShape);
        Value row = lb.create<memref::LoadOp>(loc, k.getArgument(s.leaves.size() > 1 ? 1 : 0), at);
        src = tessera::shapes::gatherTableIndex(lb, loc, s.rowOp, idx, row);
      } else {
        src = tessera::shapes::sourceIndex(lb, loc, s.rowOp, idx);
      }
      Value so = tessera::shapes::linearize(lb, loc, src, in.getType().cast<ShapedType>().getShape());
      lb.create<memref::StoreOp>(loc, lb.create<memref::LoadOp>(loc, k.getArgument(0), so), out, flat);
    });
    b.create<func::ReturnOp>(loc);
  }

  /// Softmax / reduce with the rest of its tree applied before the store.
  void buildRows(func::FuncOp k, const KernelSpec &s) {
    DenseMap<Value, Value> args;  // leaf Graph value -> kernel argument
    for (auto [i, v] : llvm::enumerate(s.leaves)) args[v] = k.getArgument(i);
    Value rowResult = s.rowOp->getResult(0);
    int64_t total = numElements(s.root.getType());
    conv::rows::Store store;
    store.elem = elemOf(s.root);
    if (s.root != rowResult)
      store.value = [&, rowResult, total](OpBuilder &b, Value v, Value flat) {
        ExprEmitter e(b, loc, args, s.root, rowResult, v);
        return e.emit(s.root, flat, total, /*top=*/true);
      };
    SmallVector<Value> operands;  // the row op's operands' buffers
    for (Value o : s.rowOp->getOperands()) operands.push_back(args.lookup(o));
    conv::rows::buildKernel(k, s.rowOp, kLanes, operands, k.getArgument(s.leaves.size()), store);
  }

  /// flash_attention: AttentionKernel.cpp; K^T is read through its layout.
  void buildAttention(func::FuncOp k, const KernelSpec &s) {
    auto fa = cast<tessera::schedule::FlashAttentionOp>(s.rowOp);
    DenseMap<Value, Value> args;
    for (auto [i, v] : llvm::enumerate(s.leaves)) args[v] = k.getArgument(i);
    auto kt = fa.getKeyT().getType().cast<ShapedType>();
    g::LayoutAttr layout = g::getLayout(kt);
    int64_t d = kt.getDimSize(kt.getRank() - 2), skv = kt.getDimSize(kt.getRank() - 1);
    conv::attention::buildKernel(
        k, fa, kAttentionLanes, args.lookup(fa.getQuery()), args.lookup(fa.getKeyT()), args.lookup(fa.getValue()),
        k.getArgument(s.leaves.size()),
        [layout, d, skv, this](OpBuilder &b, Value i, Value j) { return emitOffset(b, loc, layout, i, j, d, skv); });
  }

  /// The GEMM on subgroup matrix units (MmaGemmKernel.h), with the same
  /// fused epilogue per element.
  void buildMmaGemm(func::FuncOp k, const KernelSpec &s) {
    DenseMap<Value, Value> args;
    for (auto [i, v] : llvm::enumerate(s.leaves)) args[v] = k.getArgument(i);
    Value C = k.getArgument(s.leaves.size());
    auto ct = s.matmul.getType().cast<ShapedType>();
    const int64_t M = ct.getDimSize(ct.getRank() - 2), N = ct.getShape().back(), total = ct.getNumElements();
    Location l = loc;
    conv::mma::buildKernel(k, s.matmul, s.tile, args.lookup(s.matmul.getLhs()), args.lookup(s.matmul.getRhs()),
                           [&](OpBuilder &sb, Value row, Value col, Value acc) {
                             Value gb = sb.create<t::GroupIdOp>(l, sb.getIndexType(), uint64_t{2});
                             Value flat = sb.create<arith::AddIOp>(
                                 l, sb.create<arith::MulIOp>(l, gb, cIdx(sb, l, M * N)),
                                 sb.create<arith::AddIOp>(l, sb.create<arith::MulIOp>(l, row, cIdx(sb, l, N)), col));
                             ExprEmitter e(sb, l, args, s.root, s.matmul.getResult(), acc);
                             sb.create<memref::StoreOp>(
                                 l, narrow(sb, l, e.emit(s.root, flat, total, /*top=*/true), elemOf(s.root)), C, flat);
                           });
    OpBuilder::atBlockEnd(&k.front()).create<func::ReturnOp>(l);
  }

  /// Shared-memory tiled GEMM with the fused epilogue before the store.
  void buildGemm(func::FuncOp k, const KernelSpec &s) {
    if (conv::mma::eligible(s.matmul, s.tile)) return buildMmaGemm(k, s);
    auto at = s.matmul.getLhs().getType().cast<ShapedType>();
    auto ct = s.matmul.getType().cast<ShapedType>();
    int64_t r = at.getRank(), M = at.getShape()[r - 2], K = at.getShape()[r - 1], N = ct.getShape().back();
    int64_t total = ct.getNumElements();
    const conv::GemmTile &t = s.tile;
    const int64_t TM = t.tm, TN = t.tn, BK = t.bk, RM = t.rm, RN = t.rn;
    const int64_t LM = t.lanesM(), LN = t.lanesN(), lanes = t.lanes();
    bool guardM = M % TM != 0, guardN = N % TN != 0, guardK = K % BK != 0;
    OpBuilder b = OpBuilder::atBlockBegin(&k.front());
    Location l = loc;
    DenseMap<Value, Value> args;  // leaf Graph value -> kernel argument
    for (auto [i, v] : llvm::enumerate(s.leaves)) args[v] = k.getArgument(i);
    Value A = args.lookup(s.matmul.getLhs()), B = args.lookup(s.matmul.getRhs());
    Value C = k.getArgument(s.leaves.size());
    Value lane = b.create<t::LaneIdOp>(l, b.getIndexType(), uint64_t{0});
    Value gn = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{0});
    Value gm = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{1});
    Value gb = b.create<t::GroupIdOp>(l, b.getIndexType(), uint64_t{2});
    auto cI = [&](int64_t v) { return cIdx(b, l, v); };
    auto mulC = [&](OpBuilder &ob, Value x, int64_t c) { return ob.create<arith::MulIOp>(l, x, cIdx(ob, l, c)).getResult(); };
    auto add = [&](OpBuilder &ob, Value x, Value y) { return ob.create<arith::AddIOp>(l, x, y).getResult(); };
    auto lt = [&](OpBuilder &ob, Value x, int64_t c) {
      return ob.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, x, cIdx(ob, l, c)).getResult();
    };
    // Lane (tx, ty) of an LN x LM grid owns rows ty + LM*i, columns tx + LN*j
    // (strided); with micro_layout = "quads" rows 4*ty + i%4 + 4*LM*(i/4)
    // (columns alike): each run of 4 is consecutive and 4-aligned, so the
    // SPIR-V code generator reads it as one vec4 (VectorizeBufferAccess.cpp;
    // with slices staged and C stored in runs of 4 too, 1024^3 on lavapipe
    // went from 2.2-2.6x to 1.16-1.21x the hand-tiled GLSL GEMM). Offsets
    // are built as aligned base + constant, the form that pass recognizes.
    // `pos` is tx or ty, `L` the lanes along that dim, `R` the block's size.
    auto laneOffset = [&](OpBuilder &ob, Value base, Value pos, int64_t L, int64_t R, int64_t i) -> Value {
      if (t.quads && R % 4 == 0) {
        Value q = ob.create<arith::AddIOp>(l, base, mulC(ob, pos, 4));
        return ob.create<arith::AddIOp>(l, q, cIdx(ob, l, (i / 4) * 4 * L + i % 4));
      }
      return add(ob, base, add(ob, pos, cIdx(ob, l, L * i)));
    };
    Value tx = b.create<arith::RemUIOp>(l, lane, cI(LN)), ty = b.create<arith::DivUIOp>(l, lane, cI(LN));
    Value m0 = mulC(b, gm, TM), n0 = mulC(b, gn, TN);
    Value aBase = mulC(b, gb, M * K), bBase = mulC(b, gb, K * N), cBase = mulC(b, gb, M * N);
    // Operands are staged widened to their compute type (f32, or i32 for
    // i8 / i32), which is also the accumulator's.
    Type aElem = elemOf(s.matmul.getLhs()), bElem = elemOf(s.matmul.getRhs());
    Type acct = tessera::elements::computeType(elemOf(s.matmul.getResult()));
    const bool isFloat = acct.isa<FloatType>();
    auto shared = [&](int64_t n) {
      return MemRefType::get({n}, acct, AffineMap(), b.getI64IntegerAttr(t::kSharedMemorySpace));
    };
    Value As = b.create<t::SharedAllocOp>(l, shared(BK * TM), uint64_t{0});  // [k][m]
    Value Bs = b.create<t::SharedAllocOp>(l, shared(BK * TN), uint64_t{0});  // [k][n]
    auto zeroOf = [&](OpBuilder &ob) { return tessera::elements::splatConstant(ob, l, acct, 0.0); };
    Value zero = zeroOf(b);
    SmallVector<Value> init(RM * RN, zero);
    auto kLoop = b.create<scf::ForOp>(l, cI(0), cI((K + BK - 1) / BK * BK), cI(BK), init);
    {
      OpBuilder kb = OpBuilder::atBlockBegin(kLoop.getBody());
      Value k0 = kLoop.getInductionVar();
      // Stage A[m0.., k0..] (TM x BK, transposed to [k][m]) and B[k0.., n0..]
      // (BK x TN): consecutive lanes on consecutive addresses, each lane
      // ceil(BK*T/lanes) elements (the last round guarded when lanes do not
      // divide the slice). Out-of-range elements read as 0 (clamped address
      // + select: no divergent branch).
      auto guarded = [&](Value buf, Type elem, Value flat, Value ok) -> Value {
        if (!ok) return widen(kb, l, kb.create<memref::LoadOp>(l, buf, flat), elem);
        Value safe = kb.create<arith::SelectOp>(l, ok, flat, cIdx(kb, l, 0));
        Value v = widen(kb, l, kb.create<memref::LoadOp>(l, buf, safe), elem);
        return kb.create<arith::SelectOp>(l, ok, v, zeroOf(kb));
      };
      auto andOk = [&](Value a, Value c) -> Value {
        if (!a) return c;
        if (!c) return a;
        return kb.create<arith::AndIOp>(l, a, c);
      };
      // Round q of a staging loop over `n` slice elements: body(e) for
      // e = lane + q*lanes, inside `if e < n` on the last round if needed.
      auto stage = [&](int64_t n, function_ref<void(OpBuilder &, Value)> body) {
        for (int64_t q = 0; q * lanes < n; ++q) {
          Value e = add(kb, lane, cIdx(kb, l, q * lanes));
          if ((q + 1) * lanes <= n) { body(kb, e); continue; }
          auto ifOp = kb.create<scf::IfOp>(l, lt(kb, e, n), false);
          OpBuilder ib = ifOp.getThenBodyBuilder();
          body(ib, e);
        }
      };
      // micro_layout = "quads" without guards: each lane stages runs of 4
      // consecutive elements of a row (A: 4 k of one row; B: 4 columns of
      // one k), indexed as an aligned base plus 0..3, so the SPIR-V path
      // loads each run as one vec4 (and stores B's into shared memory as
      // one); A's runs land in 4 rows of its transposed slice.
      const bool quadStageA = t.quads && !guardM && !guardK && BK % 4 == 0;
      const bool quadStageB = t.quads && !guardK && !guardN && TN % 4 == 0;
      // Round q over the slice's n/4 runs: body(run index) for
      // r = lane + q*lanes, inside `if r < n/4` on the last round if needed.
      auto stageQuads = [&](int64_t n, function_ref<void(Value)> body) {
        stage(n / 4, [&](OpBuilder &ob, Value r) {
          OpBuilder::InsertionGuard g(kb);
          kb.setInsertionPoint(ob.getInsertionBlock(), ob.getInsertionPoint());
          body(r);
        });
      };
      // One run: the 4 loads, then the 4 stores (a load between two stores,
      // or the reverse, keeps them from merging).
      auto copyRun = [&](Value src, Type elem, Value base, Value dst, function_ref<Value(int64_t)> dstIndex) {
        Value v[4];
        for (int64_t c = 0; c < 4; ++c)
          v[c] = widen(kb, l, kb.create<memref::LoadOp>(l, src, add(kb, base, cIdx(kb, l, c))), elem);
        for (int64_t c = 0; c < 4; ++c) kb.create<memref::StoreOp>(l, v[c], dst, ValueRange{dstIndex(c)});
      };
      if (quadStageA) {
        stageQuads(BK * TM, [&](Value r) {
          Value am = kb.create<arith::DivUIOp>(l, r, cIdx(kb, l, BK / 4));
          Value ak = mulC(kb, kb.create<arith::RemUIOp>(l, r, cIdx(kb, l, BK / 4)), 4);
          Value base = add(kb, aBase, add(kb, mulC(kb, add(kb, m0, am), K), add(kb, k0, ak)));
          copyRun(A, aElem, base, As, [&](int64_t c) { return add(kb, mulC(kb, add(kb, ak, cIdx(kb, l, c)), TM), am); });
        });
      } else {
        stage(BK * TM, [&](OpBuilder &ob, Value e) {
          OpBuilder::InsertionGuard g(kb);
          kb.setInsertionPoint(ob.getInsertionBlock(), ob.getInsertionPoint());
          Value am = kb.create<arith::DivUIOp>(l, e, cIdx(kb, l, BK)), ak = kb.create<arith::RemUIOp>(l, e, cIdx(kb, l, BK));
          Value row = add(kb, m0, am), kk = add(kb, k0, ak);
          Value okA = andOk(guardM ? lt(kb, row, M) : Value(), guardK ? lt(kb, kk, K) : Value());
          Value va = guarded(A, aElem, add(kb, aBase, add(kb, mulC(kb, row, K), kk)), okA);
          kb.create<memref::StoreOp>(l, va, As, ValueRange{add(kb, mulC(kb, ak, TM), am)});
        });
      }
      if (quadStageB) {
        stageQuads(BK * TN, [&](Value r) {
          Value bk = kb.create<arith::DivUIOp>(l, r, cIdx(kb, l, TN / 4));
          Value bn = mulC(kb, kb.create<arith::RemUIOp>(l, r, cIdx(kb, l, TN / 4)), 4);
          Value base = add(kb, bBase, add(kb, mulC(kb, add(kb, k0, bk), N), add(kb, n0, bn)));
          Value sbase = add(kb, mulC(kb, bk, TN), bn);
          copyRun(B, bElem, base, Bs, [&](int64_t c) { return add(kb, sbase, cIdx(kb, l, c)); });
        });
      } else {
        stage(BK * TN, [&](OpBuilder &ob, Value e) {
          OpBuilder::InsertionGuard g(kb);
          kb.setInsertionPoint(ob.getInsertionBlock(), ob.getInsertionPoint());
          Value bk = kb.create<arith::DivUIOp>(l, e, cIdx(kb, l, TN)), bn = kb.create<arith::RemUIOp>(l, e, cIdx(kb, l, TN));
          Value kr = add(kb, k0, bk), col = add(kb, n0, bn);
          Value okB = andOk(guardK ? lt(kb, kr, K) : Value(), guardN ? lt(kb, col, N) : Value());
          Value vb = guarded(B, bElem, add(kb, bBase, add(kb, mulC(kb, kr, N), col)), okB);
          kb.create<memref::StoreOp>(l, vb, Bs, ValueRange{add(kb, mulC(kb, bk, TN), bn)});
        });
      }
      kb.create<t::BarrierOp>(l);
      auto inner = kb.create<scf::ForOp>(l, cIdx(kb, l, 0), cIdx(kb, l, BK), cIdx(kb, l, 1), kLoop.getRegionIterArgs());
      {
        OpBuilder ib = OpBuilder::atBlockBegin(inner.getBody());
        Value kk = inner.getInductionVar();
        Value rowA = mulC(ib, kk, TM), rowB = mulC(ib, kk, TN);
        SmallVector<Value> a, bv, acc;
        for (int64_t i = 0; i < RM; ++i)
          a.push_back(ib.create<memref::LoadOp>(l, As, ValueRange{laneOffset(ib, rowA, ty, LM, RM, i)}));
        for (int64_t j = 0; j < RN; ++j)
          bv.push_back(ib.create<memref::LoadOp>(l, Bs, ValueRange{laneOffset(ib, rowB, tx, LN, RN, j)}));
        for (int64_t i = 0; i < RM; ++i)
          for (int64_t j = 0; j < RN; ++j)
            acc.push_back(isFloat ? ib.create<math::FmaOp>(l, a[i], bv[j], inner.getRegionIterArgs()[i * RN + j]).getResult()
                                  : ib.create<arith::AddIOp>(l, inner.getRegionIterArgs()[i * RN + j],
                                                             ib.create<arith::MulIOp>(l, a[i], bv[j])).getResult());
        ib.create<scf::YieldOp>(l, acc);
      }
      // The next slice overwrites As/Bs: every lane must be done reading.
      kb.create<t::BarrierOp>(l);
      kb.create<scf::YieldOp>(l, inner.getResults());
    }
    // Epilogue (bias, relu, ...) on the registers, then the guarded store.
    // With quads and no guards, 4 consecutive columns are computed, then
    // stored at an aligned base plus 0..3 (one vec4 store on SPIR-V; the
    // epilogue's own loads would otherwise sit between the stores).
    const bool quadStore = t.quads && RN % 4 == 0 && !guardM && !guardN;
    for (int64_t i = 0; i < RM; ++i)
      for (int64_t j = 0; j < RN; j += quadStore ? 4 : 1) {
        Value row = laneOffset(b, m0, ty, LM, RM, i);
        if (quadStore) {
          Value colBase = add(b, n0, mulC(b, tx, 4));
          Value base = add(b, cBase, add(b, mulC(b, row, N), colBase));
          int64_t c0 = (j / 4) * 4 * LN;
          Value flat[4], v[4];
          for (int64_t c = 0; c < 4; ++c) {
            flat[c] = add(b, base, cI(c0 + c));
            ExprEmitter e(b, l, args, s.root, s.matmul.getResult(), kLoop.getResult(i * RN + j + c));
            v[c] = narrow(b, l, e.emit(s.root, flat[c], total, /*top=*/true), elemOf(s.root));
          }
          for (int64_t c = 0; c < 4; ++c) b.create<memref::StoreOp>(l, v[c], C, flat[c]);
          continue;
        }
        Value col = laneOffset(b, n0, tx, LN, RN, j);
        Value ok;
        if (guardM) ok = lt(b, row, M);
        if (guardN) ok = ok ? b.create<arith::AndIOp>(l, ok, lt(b, col, N)).getResult() : lt(b, col, N);
        OpBuilder sb = b;
        if (ok) {
          auto ifOp = b.create<scf::IfOp>(l, ok, false);
          sb = ifOp.getThenBodyBuilder();
        }
        Value flat = add(sb, cBase, add(sb, mulC(sb, row, N), col));
        ExprEmitter e(sb, l, args, s.root, s.matmul.getResult(), kLoop.getResult(i * RN + j));
        sb.create<memref::StoreOp>(l, narrow(sb, l, e.emit(s.root, flat, total, /*top=*/true), elemOf(s.root)), C, flat);
      }
    b.create<func::ReturnOp>(l);
  }

  /// The body of kernel `k` computing `s` (not kAttentionGrad).
  void build(func::FuncOp k, const KernelSpec &s) {
    switch (s.kind) {
    case KernelSpec::kGemm: buildGemm(k, s); break;
    case KernelSpec::kElementwise: buildElementwise(k, s); break;
    case KernelSpec::kRows: buildRows(k, s); break;
    case KernelSpec::kAttention: buildAttention(k, s); break;
    case KernelSpec::kLayout: buildLayout(k, s); break;
    case KernelSpec::kShape: buildShape(k, s); break;
    case KernelSpec::kAttentionGrad: break;  // AttentionGradPattern
    }
  }
};

/// The launch of `s`: its grid and lanes per group; a GEMM too large for one
/// launch is an error (found before any IR changes).
LogicalResult sizeLaunch(FunctionLowering &fl, KernelSpec &s) {
  switch (s.kind) {
  case KernelSpec::kGemm: {
    auto at = s.matmul.getLhs().getType().cast<ShapedType>();
    auto ct = s.matmul.getType().cast<ShapedType>();
    int64_t M = at.getShape()[at.getRank() - 2], N = ct.getShape().back();
    int64_t batch = ct.getNumElements() / (M * N);
    s.grid = {(N + s.tile.tn - 1) / s.tile.tn, (M + s.tile.tm - 1) / s.tile.tm, batch};
    if (s.grid[0] > kMaxGroups || s.grid[1] > kMaxGroups || s.grid[2] > kMaxGroups)
      return s.matmul.emitOpError() << "is too large for one " << fl.backend << " launch (grid " << s.grid[0] << "x"
                                    << s.grid[1] << "x" << s.grid[2] << ")";
    s.lanes = conv::mma::eligible(s.matmul, s.tile) ? conv::mma::lanes(s.tile) : s.tile.lanes();
    return success();
  }
  case KernelSpec::kRows: s.grid = conv::rows::grid(s.rowOp, kLanes, kMaxGroups); break;
  case KernelSpec::kAttention:
    s.grid = conv::attention::grid(cast<tessera::schedule::FlashAttentionOp>(s.rowOp), kMaxGroups);
    s.lanes = kAttentionLanes;
    return success();
  case KernelSpec::kAttentionGrad: s.lanes = kAttentionLanes; return success();
  case KernelSpec::kLayout: s.grid = KernelBuilder::grid1D(numElements(s.leaves[0].getType())); break;
  case KernelSpec::kElementwise:
  case KernelSpec::kShape: s.grid = KernelBuilder::grid1D(numElements(s.root.getType())); break;
  }
  s.lanes = kLanes;
  return success();
}

//===----------------------------------------------------------------------===//
// The launch plan, by dialect conversion: a Graph function is rewritten in
// place on flat memrefs (its results become output arguments), each op
// that computes a materialized value becomes the launch of its kernel (a
// `func.call` with the buffers it binds), each fused op is erased (its
// user's kernel computes it), and the return launches copies for results
// no kernel wrote and frees the intermediates.
//===----------------------------------------------------------------------===//

/// A Graph function being lowered: its fusion plan and what its launch
/// patterns share. Owned by the pass run; used by one thread.
struct PlannedFunction {
  FunctionLowering fl;
  DenseMap<Value, const KernelSpec *> specOf;  // a kernel's value -> its spec (flash_attention_grad: result 0)
  DenseMap<Value, unsigned> outOf;             // a value a kernel writes into output argument #n
  unsigned numInputs = 0;
  unsigned nextKernel = 0;
  Operation *lastKernel = nullptr;  // kernels follow the plan in the module, in launch order
  bool returned = false;            // its return has been rewritten
};

/// Every function one pass run lowers, and the kernels it built.
struct Lowerings {
  DenseMap<Operation *, std::unique_ptr<PlannedFunction>> functions;
  SmallVector<func::FuncOp> kernels;

  PlannedFunction *of(Operation *op) {
    auto fn = isa<func::FuncOp>(op) ? cast<func::FuncOp>(op) : op->getParentOfType<func::FuncOp>();
    auto it = fn ? functions.find(fn) : functions.end();
    return it == functions.end() ? nullptr : it->second.get();
  }
};

/// Creates kernels and their launches in a planned function at the
/// rewriter's insertion point.
struct Launcher {
  ConversionPatternRewriter &rw;
  PlannedFunction &pf;
  Lowerings &all;
  Location loc;

  std::string nextName(StringRef kind) {
    return pf.fl.fn.getName().str() + "_k" + std::to_string(pf.nextKernel++) + "_" + kind.str();
  }

  /// A kernel taking buffers of types `tys`, after the last one.
  func::FuncOp newKernel(StringRef kind, ArrayRef<Type> tys, std::array<int64_t, 3> grid, int64_t lanes) {
    OpBuilder::InsertionGuard guard(rw);
    rw.setInsertionPointAfter(pf.lastKernel);
    auto f = rw.create<func::FuncOp>(loc, nextName(kind), rw.getFunctionType(tys, {}));
    f->setAttr(t::kGroupSizeAttr, rw.getDenseI64ArrayAttr({lanes}));
    f->setAttr(t::kGridAttr, rw.getDenseI64ArrayAttr(grid));
    f.addEntryBlock();
    pf.lastKernel = f;
    all.kernels.push_back(f);
    return f;
  }

  void call(func::FuncOp k, ValueRange operands, std::array<int64_t, 3> grid) {
    auto call = rw.create<func::CallOp>(loc, k, operands);
    call->setAttr(conv::kLaunchGridAttr, rw.getDenseI64ArrayAttr(grid));
  }

  /// A buffer the host allocates for the plan (freed at its return).
  Value scratch(MemRefType ft) {
    auto alloc = rw.create<memref::AllocOp>(loc, ft);
    alloc->setAttr(conv::kBufferRoleAttr, rw.getStringAttr("intermediate"));
    alloc->setAttr(conv::kBytesAttr, rw.getI64IntegerAttr(ft.getNumElements() * ft.getElementTypeBitWidth() / 8));
    return alloc;
  }

  /// The buffer a kernel computing `root` writes: its output argument when
  /// the function returns it, else an intermediate.
  Value bufferFor(Value root) {
    auto it = pf.outOf.find(root);
    return it != pf.outOf.end() ? pf.fl.fn.getArgument(it->second) : scratch(flatType(root));
  }

  /// Builds the kernel of `s` and launches it on the leaves' buffers and
  /// `out`.
  void launch(const KernelSpec &s, StringRef kind, Value out) {
    SmallVector<Value> operands;
    SmallVector<Type> tys;
    for (Value v : s.leaves) {
      operands.push_back(rw.getRemappedValue(v));
      tys.push_back(flatType(v));
    }
    operands.push_back(out);
    tys.push_back(flatType(s.root));
    func::FuncOp k = newKernel(kind, tys, s.grid, s.lanes);
    KernelBuilder{loc}.build(k, s);
    call(k, operands, s.grid);
  }
};

/// The kernel of a materialized value, by the kind of kernel the fusion
/// plan gave it: `Kind` selects its kernels (kGemm: a matmul with its
/// epilogue; kElementwise: a fused tree or a materialized splat; kRows:
/// softmax / reduce / ... with the tree around them; kShape: a shape op).
template <KernelSpec::Kind Kind>
struct FusedTreeKernel : ConversionPattern {
  Lowerings &all;
  FusedTreeKernel(Lowerings &all, MLIRContext *ctx)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx), all(all) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value>, ConversionPatternRewriter &rw) const override {
    PlannedFunction *pf = all.of(op);
    if (!pf || op->getNumResults() != 1) return failure();
    const KernelSpec *s = pf->specOf.lookup(op->getResult(0));
    if (!s || s->kind != Kind) return failure();
    static const char *kKind[] = {"gemm", "elementwise", "rows", "layout", "attention", "shape", "attention_grad"};
    Launcher l{rw, *pf, all, op->getLoc()};
    Value out = l.bufferFor(s->root);
    l.launch(*s, Kind == KernelSpec::kRows || Kind == KernelSpec::kShape ? s->rowOp->getName().stripDialect()
                                                                          : StringRef(kKind[Kind]),
             out);
    rw.replaceOp(op, out);
    return success();
  }
};

/// convert_layout: a copy between the two layouts' offsets.
struct ConvertLayoutKernel : OpConversionPattern<g::ConvertLayoutOp> {
  Lowerings &all;
  ConvertLayoutKernel(Lowerings &all, MLIRContext *ctx) : OpConversionPattern(ctx), all(all) {}
  LogicalResult matchAndRewrite(g::ConvertLayoutOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    PlannedFunction *pf = all.of(op);
    const KernelSpec *s = pf ? pf->specOf.lookup(op.getResult()) : nullptr;
    if (!s) return failure();
    Launcher l{rw, *pf, all, op.getLoc()};
    Value out = l.bufferFor(s->root);
    l.launch(*s, "layout", out);
    rw.replaceOp(op, out);
    return success();
  }
};

/// flash_attention: one kernel (AttentionKernel.h).
struct FlashAttentionKernel : OpConversionPattern<tessera::schedule::FlashAttentionOp> {
  Lowerings &all;
  FlashAttentionKernel(Lowerings &all, MLIRContext *ctx) : OpConversionPattern(ctx), all(all) {}
  LogicalResult matchAndRewrite(tessera::schedule::FlashAttentionOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    PlannedFunction *pf = all.of(op);
    const KernelSpec *s = pf ? pf->specOf.lookup(op.getResult()) : nullptr;
    if (!s) return failure();
    Launcher l{rw, *pf, all, op.getLoc()};
    Value out = l.bufferFor(s->root);
    l.launch(*s, "attention", out);
    rw.replaceOp(op, out);
    return success();
  }
};

/// flash_attention_grad: statistics into an intermediate, then dQ, then
/// dK^T and dV (AttentionGradKernel.h).
struct FlashAttentionGradKernels : OpConversionPattern<tessera::schedule::FlashAttentionGradOp> {
  Lowerings &all;
  FlashAttentionGradKernels(Lowerings &all, MLIRContext *ctx) : OpConversionPattern(ctx), all(all) {}
  LogicalResult matchAndRewrite(tessera::schedule::FlashAttentionGradOp fg, OpAdaptor ad,
                                ConversionPatternRewriter &rw) const override {
    PlannedFunction *pf = all.of(fg);
    if (!pf) return failure();
    namespace ag = conv::attention_grad;
    Launcher l{rw, *pf, all, fg.getLoc()};
    Value q = ad.getQuery(), kt = ad.getKeyT(), v = ad.getValue(), o = ad.getOut(), dout = ad.getDout();
    Value stats = l.scratch(MemRefType::get({ag::statsElements(fg)}, rw.getF32Type()));
    Value dq = l.bufferFor(fg.getDquery()), dkt = l.bufferFor(fg.getDkeyT()), dv = l.bufferFor(fg.getDvalue());
    auto emit = [&](StringRef kind, SmallVector<Value> operands, std::array<int64_t, 3> grid,
                    function_ref<void(func::FuncOp)> body) {
      SmallVector<Type> tys;
      for (Value b : operands) tys.push_back(b.getType());
      func::FuncOp k = l.newKernel(kind, tys, grid, kAttentionLanes);
      body(k);
      l.call(k, operands, grid);
    };
    emit("attention_stats", {q, kt, o, dout, stats}, ag::queryGrid(fg, kMaxGroups), [&](func::FuncOp k) {
      ag::buildStats(k, fg, kAttentionLanes, k.getArgument(0), k.getArgument(1), k.getArgument(2), k.getArgument(3),
                     k.getArgument(4));
    });
    emit("attention_dq", {q, kt, v, dout, stats, dq}, ag::queryGrid(fg, kMaxGroups), [&](func::FuncOp k) {
      ag::buildQueryGrad(k, fg, kAttentionLanes, k.getArgument(0), k.getArgument(1), k.getArgument(2), k.getArgument(3),
                         k.getArgument(4), k.getArgument(5));
    });
    emit("attention_dkv", {q, kt, v, dout, stats, dkt, dv}, ag::keyGrid(fg, kMaxGroups), [&](func::FuncOp k) {
      ag::buildKeyValueGrad(k, fg, kAttentionLanes, k.getArgument(0), k.getArgument(1), k.getArgument(2),
                            k.getArgument(3), k.getArgument(4), k.getArgument(5), k.getArgument(6));
    });
    rw.replaceOp(fg, ValueRange{dq, dkt, dv});
    return success();
  }
};

/// An op the fusion plan computes inside its user's kernel (and a splat
/// constant inlined as a scalar): nothing left to launch.
struct FusedOp : ConversionPattern {
  Lowerings &all;
  FusedOp(Lowerings &all, MLIRContext *ctx) : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx), all(all) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value>, ConversionPatternRewriter &rw) const override {
    PlannedFunction *pf = all.of(op);
    if (!pf || op->getNumResults() == 0 || isa<func::FuncOp, func::ReturnOp>(op)) return failure();
    for (Value r : op->getResults())
      if (pf->specOf.count(r)) return failure();
    rw.eraseOp(op);
    return success();
  }
};

/// The function's signature: inputs then results as flat memrefs
/// (`tessera.buffer` roles), no results; marked a launch plan.
struct PlanSignature : OpConversionPattern<func::FuncOp> {
  Lowerings &all;
  PlanSignature(Lowerings &all, MLIRContext *ctx) : OpConversionPattern(ctx), all(all) {}
  LogicalResult matchAndRewrite(func::FuncOp fn, OpAdaptor, ConversionPatternRewriter &rw) const override {
    PlannedFunction *pf = all.of(fn);
    if (!pf || fn->hasAttr(conv::kLaunchPlanAttr)) return failure();
    auto ret = cast<func::ReturnOp>(fn.front().getTerminator());
    TypeConverter::SignatureConversion sig(fn.getNumArguments());
    SmallVector<Type> outputs;
    for (BlockArgument a : fn.getArguments()) sig.addInputs(a.getArgNumber(), flatType(a));
    for (Value r : ret.getOperands()) outputs.push_back(flatType(r));
    sig.addInputs(outputs);
    rw.applySignatureConversion(&fn.getBody(), sig);
    rw.updateRootInPlace(fn, [&] {
      fn.setType(rw.getFunctionType(sig.getConvertedTypes(), {}));
      fn.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
      fn.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        fn.setArgAttr(i, conv::kBufferRoleAttr, rw.getStringAttr(i < pf->numInputs ? "input" : "output"));
      fn->setAttr(conv::kLaunchPlanAttr, rw.getUnitAttr());
    });
    return success();
  }
};

/// The return: copies into the outputs no kernel wrote (a returned input,
/// a value returned twice), then frees the intermediates.
struct PlanReturn : OpConversionPattern<func::ReturnOp> {
  Lowerings &all;
  PlanReturn(Lowerings &all, MLIRContext *ctx) : OpConversionPattern(ctx), all(all) {}
  LogicalResult matchAndRewrite(func::ReturnOp ret, OpAdaptor, ConversionPatternRewriter &rw) const override {
    PlannedFunction *pf = all.of(ret);
    if (!pf || pf->returned) return failure();
    func::FuncOp fn = pf->fl.fn;
    Launcher l{rw, *pf, all, ret.getLoc()};
    for (auto [i, r] : llvm::enumerate(ret.getOperands())) {
      Value o = fn.getArgument(pf->numInputs + i);
      if (rw.getRemappedValue(r) == o) continue;
      KernelSpec c{KernelSpec::kElementwise, r, {}, nullptr, {}, true, {r}, {}, 0};
      (void)sizeLaunch(pf->fl, c);
      l.launch(c, "copy", o);
    }
    SmallVector<Value> intermediates;
    for (Operation &op : fn.front())
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) intermediates.push_back(alloc);
    for (Value a : intermediates) rw.create<memref::DeallocOp>(ret.getLoc(), a);
    pf->returned = true;
    rw.replaceOpWithNewOp<func::ReturnOp>(ret);
    return success();
  }
};

struct GraphToTileKernelsPass : tessera::conversion::impl::GraphToTileKernelsBase<GraphToTileKernelsPass> {
  using GraphToTileKernelsBase::GraphToTileKernelsBase;

  /// Refuses what no kernel takes (shapes, zero-size tensors), before the
  /// plan.
  LogicalResult checkFunction(func::FuncOp f) {
    if (!f.getBody().hasOneBlock())
      return f.emitError() << "a Graph IR function must have one block to be lowered for the " << backend
                           << " backend";
    for (Type ty : llvm::concat<const Type>(f.getArgumentTypes(), f.getResultTypes()))
      if (!ty.isa<RankedTensorType>() || !ty.cast<ShapedType>().hasStaticShape())
        return f.emitError() << "Graph IR function arguments and results must be statically shaped tensors for the "
                             << backend << " backend, got " << ty;
    // Zero-element tensors: every kernel shape (groups per row, elements
    // per lane) divides by a dim; refuse them here, naming the value,
    // as the cpu backend does (a reduce over a 0-length dim divided by 0).
    WalkResult empty = f.walk([&](Operation *op) {
      SmallVector<Type> types(op->getOperandTypes());
      llvm::append_range(types, op->getResultTypes());
      for (Type ty : types)
        if (auto t = ty.dyn_cast<RankedTensorType>(); t && t.hasStaticShape() && t.getNumElements() == 0) {
          op->emitOpError() << "has a zero-element tensor " << t << ": zero-sized tensors are not supported by the "
                            << backend << " backend (give every dim a size >= 1)";
          return WalkResult::interrupt();
        } else if (t && t.hasStaticShape() && backend == "vulkan" &&
                   t.getNumElements() > std::numeric_limits<int32_t>::max()) {
          // SPIR-V kernels index with 32 bits (Vulkan's index type).
          op->emitOpError() << "has a tensor " << t << " of " << t.getNumElements()
                            << " elements: a vulkan kernel indexes at most 2^31 - 1";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (empty.wasInterrupted()) return failure();
    for (BlockArgument a : f.getArguments())
      if (auto t = a.getType().dyn_cast<RankedTensorType>(); t && t.getNumElements() == 0)
        return f.emitError() << "argument " << a.getArgNumber() << " " << t
                             << " has no elements: zero-sized tensors are not supported by the " << backend
                             << " backend";
    return success();
  }

  void runOnOperation() override {
    ModuleOp m = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<func::FuncOp> fns;
    for (func::FuncOp f : m.getOps<func::FuncOp>()) {
      if (f.isExternal() || f->hasAttr(t::kGroupSizeAttr) || f->hasAttr(conv::kLaunchPlanAttr)) continue;
      bool graph = llvm::any_of(f.getArgumentTypes(), [](Type t) { return t.isa<TensorType>(); }) ||
                   llvm::any_of(f.getResultTypes(), [](Type t) { return t.isa<TensorType>(); });
      f.walk([&](Operation *op) { graph |= isa_and_nonnull<g::GraphDialect>(op->getDialect()); });
      if (graph) fns.push_back(f);
    }
    // The plans first: every refusal comes before any IR changes.
    Lowerings all;
    SmallVector<Operation *> roots;
    for (func::FuncOp f : fns) {
      if (failed(checkFunction(f))) return signalPassFailure();
      auto pf = std::make_unique<PlannedFunction>(
          PlannedFunction{FunctionLowering{f, backend, conv::inlineScheduleGroups(f), {}, {}}, {}, {}, 0, 0, f, false});
      FunctionLowering &fl = pf->fl;
      if (failed(fl.plan())) return signalPassFailure();
      for (KernelSpec &s : fl.specs) {
        if (failed(sizeLaunch(fl, s))) return signalPassFailure();
        pf->specOf[s.root] = &s;
      }
      // A result gets its output buffer directly when a kernel computes it;
      // arguments and values returned twice are copied (PlanReturn).
      pf->numInputs = f.getNumArguments();
      auto ret = cast<func::ReturnOp>(f.front().getTerminator());
      for (auto [i, r] : llvm::enumerate(ret.getOperands()))
        if (!r.isa<BlockArgument>() && !pf->outOf.count(r)) pf->outOf[r] = pf->numInputs + i;
      // flash_attention_grad's other results are its kernels' too.
      for (const KernelSpec &s : fl.specs)
        if (s.kind == KernelSpec::kAttentionGrad)
          for (Value r : s.rowOp->getResults().drop_front()) pf->specOf[r] = &s;
      roots.push_back(f);
      all.functions[f] = std::move(pf);
    }
    if (roots.empty()) return;

    ConversionTarget target(*ctx);
    target.addLegalDialect<t::TileDialect, arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
                           scf::SCFDialect, vector::VectorDialect>();
    target.addIllegalDialect<g::GraphDialect>();
    target.addIllegalOp<tessera::schedule::FlashAttentionOp, tessera::schedule::FlashAttentionGradOp>();
    target.addDynamicallyLegalOp<arith::ConstantOp>([](arith::ConstantOp c) { return !c.getType().isa<TensorType>(); });
    target.addDynamicallyLegalOp<func::FuncOp>(
        [&](func::FuncOp f) { return !all.of(f) || f->hasAttr(conv::kLaunchPlanAttr); });
    target.addDynamicallyLegalOp<func::ReturnOp>([&](func::ReturnOp r) {
      PlannedFunction *pf = all.of(r);
      return !pf || pf->returned;
    });
    target.addLegalOp<func::CallOp>();
    RewritePatternSet patterns(ctx);
    patterns.add<PlanSignature, PlanReturn, FusedOp, ConvertLayoutKernel, FlashAttentionKernel,
                 FlashAttentionGradKernels, FusedTreeKernel<KernelSpec::kGemm>,
                 FusedTreeKernel<KernelSpec::kElementwise>, FusedTreeKernel<KernelSpec::kRows>,
                 FusedTreeKernel<KernelSpec::kShape>>(all, ctx);
    if (failed(applyPartialConversion(roots, target, std::move(patterns)))) return signalPassFailure();

    // The builders emit one constant per use and unfolded index math:
    // canonicalize + CSE each new kernel so the output reads like the
    // hand-written Tile IR examples (the SPIR-V pipeline would do it anyway).
    OpPassManager cleanup(func::FuncOp::getOperationName());
    cleanup.addPass(createCanonicalizerPass());
    cleanup.addPass(createCSEPass());
    for (func::FuncOp k : all.kernels)
      if (failed(runPipeline(cleanup, k))) return signalPassFailure();
  }
};

struct StripLaunchPlansPass : tessera::conversion::impl::StripLaunchPlansBase<StripLaunchPlansPass> {
  using StripLaunchPlansBase::StripLaunchPlansBase;
  void runOnOperation() override {
    ModuleOp m = getOperation();
    bool found = keep.empty();
    for (func::FuncOp f : llvm::make_early_inc_range(m.getOps<func::FuncOp>())) {
      if (f->hasAttr(conv::kLaunchPlanAttr)) {
        f.erase();
      } else if (!keep.empty() && f->hasAttr(t::kGroupSizeAttr)) {
        if (f.getName() == keep) found = true;
        else f.erase();
      }
    }
    if (!found) {
      m.emitError() << "tessera-strip-launch-plans: no kernel named '" << keep << "'";
      signalPassFailure();
    }
  }
};

}  // namespace

FailureOr<conv::LaunchPlan> conv::readLaunchPlan(func::FuncOp plan) {
  LaunchPlan p;
  p.name = plan.getName().str();
  DenseMap<Value, unsigned> index;
  auto addBuffer = [&](Value v, PlanBuffer::Role role) {
    auto mt = v.getType().cast<MemRefType>();
    PlanBuffer b;
    b.role = role;
    b.elements.assign(mt.getShape().begin(), mt.getShape().end());
    b.bytes = mt.getNumElements() * mt.getElementTypeBitWidth() / 8;
    llvm::raw_string_ostream os(b.dtype);
    mt.getElementType().print(os);
    os.flush();
    index[v] = p.buffers.size();
    p.buffers.push_back(std::move(b));
  };
  for (auto [i, a] : llvm::enumerate(plan.getArguments())) {
    auto role = plan.getArgAttrOfType<StringAttr>(i, kBufferRoleAttr);
    if (!role || !a.getType().isa<MemRefType>())
      return plan.emitError() << "launch plan argument " << i << " has no " << kBufferRoleAttr << " role";
    addBuffer(a, role.getValue() == "input" ? PlanBuffer::kInput : PlanBuffer::kOutput);
  }
  ModuleOp m = plan->getParentOfType<ModuleOp>();
  for (Operation &op : plan.front()) {
    if (auto a = dyn_cast<memref::AllocOp>(op)) {
      addBuffer(a, PlanBuffer::kIntermediate);
    } else if (auto c = dyn_cast<func::CallOp>(op)) {
      PlanLaunch l;
      l.kernel = c.getCallee().str();
      auto k = m.lookupSymbol<func::FuncOp>(c.getCallee());
      if (!k || !k->hasAttr(t::kGroupSizeAttr)) return c.emitError("launch of something that is not a Tile IR kernel");
      auto gs = t::getGroupSize(k);
      for (int d = 0; d < 3; ++d) l.groupSize[d] = gs[d];
      auto grid = c->getAttrOfType<DenseI64ArrayAttr>(kLaunchGridAttr);
      if (!grid) return c.emitError() << "launch without " << kLaunchGridAttr;
      for (auto [d, v] : llvm::enumerate(grid.asArrayRef())) l.grid[d] = v;
      for (Value o : c.getOperands()) {
        auto it = index.find(o);
        if (it == index.end()) return c.emitError("launch operand is not a plan buffer");
        l.buffers.push_back(it->second);
      }
      p.launches.push_back(std::move(l));
    } else if (!isa<memref::DeallocOp, func::ReturnOp>(op)) {
      return op.emitError("unexpected op in a launch plan");
    }
  }
  return p;
}
