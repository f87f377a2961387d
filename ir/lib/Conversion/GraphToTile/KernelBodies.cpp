//===- KernelBodies.cpp - the Tile IR bodies of GraphToTile's kernels -----===//
#include "KernelBodies.h"

#include "AttentionKernel.h"
#include "MmaGemmKernel.h"
#include "RowKernels.h"
#include "WgmmaAttentionKernel.h"

#include <cmath>
#include <limits>

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "tessera/Conversion/ShapeOps.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

using namespace mlir;
namespace g = tessera::graph;
namespace t = tessera::tile;
namespace conv = tessera::conversion;
namespace gt = tessera::conversion::graph_to_tile;
using gt::KernelSpec;
using gt::elemOf;
using gt::numElements;
using gt::kLanes;
using gt::kAttentionLanes;
using g::isSplatConstant;
using conv::gpu_elements::narrow;
using conv::gpu_elements::widen;

namespace {

double splatValue(Value v) {
  DenseElementsAttr d;
  (void)matchPattern(v, m_Constant(&d));
  if (d.getElementType().isa<FloatType>()) return d.getSplatValue<APFloat>().convertToDouble();
  return static_cast<double>(d.getSplatValue<APInt>().getSExtValue());
}

Value cIdx(OpBuilder &b, Location l, int64_t v) { return b.create<arith::ConstantIndexOp>(l, v); }

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

/// Builds the bodies of the Tile IR kernels (the launch-plan patterns
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
    if (fa.getMma()) {
      Value out = k.getArgument(s.leaves.size());
      Type elem = elemOf(fa.getResult());
      Location l = loc;
      conv::wgmma_attention::buildKernel(k, fa, args.lookup(fa.getQuery()), args.lookup(fa.getKeyT()),
                                         args.lookup(fa.getValue()), [=](OpBuilder &b, Value flat, Value value) {
                                           b.create<memref::StoreOp>(l, narrow(b, l, value, elem), out, flat);
                                         });
      return;
    }
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

}  // namespace

void gt::buildKernelBody(func::FuncOp k, const KernelSpec &s) { KernelBuilder{k.getLoc()}.build(k, s); }
