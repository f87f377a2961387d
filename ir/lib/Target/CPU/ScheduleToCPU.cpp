//===- ScheduleToCPU.cpp - Graph/Schedule IR -> vectorized cpu loops ------===//
//
// A function on tensors becomes one kernel on memrefs.  When every op keeps
// rows independent (matmul lhs, elementwise, softmax and reductions along
// inner dims: the MLP), each tile group computes one block of MC output rows
// and intermediates live in per-group scratch; otherwise one group computes
// everything.  Matmuls are emitted in the BLIS structure with a register
// tile of vector<8xf32> accumulators and vector.fma.  flash_attention ops
// (FlashAttentionToCPU.cpp) are row-local in their queries.
//
//===----------------------------------------------------------------------===//
#include "tessera/Target/CPU/Passes.h"

#include "FlashAttentionToCPU.h"
#include "LoopBuilder.h"

#include <algorithm>
#include <cstdlib>
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/BuiltinOps.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_SCHEDULETOCPU
#include "tessera/Target/CPU/Passes.h.inc"
}  // namespace tessera::cpu

using namespace mlir;
using namespace tessera;
using namespace tessera::cpu;
namespace g = tessera::graph;

namespace {

constexpr int64_t kVec = 8;  // f32 lanes of an AVX2 register

/// Where a tensor value lives in the kernel.
struct Buf {
  Value mem;
  RankedTensorType type;
  bool row = false;   // a block of rows starting at `row0` of the full tensor
  Value row0;         // added to dim 0 when `row` (null: 0)
  g::LayoutAttr layout;  // non-row-major: `mem` is flat
};

Value constF(OpBuilder &b, Location loc, Type t, double v) {
  if (auto vt = t.dyn_cast<VectorType>())
    return b.create<arith::ConstantOp>(
        loc, vt, SplatElementsAttr::get(vt, b.getFloatAttr(vt.getElementType(), v)));
  if (t.isa<FloatType>()) return b.create<arith::ConstantOp>(loc, t, b.getFloatAttr(t, v));
  return b.create<arith::ConstantOp>(loc, t, b.getIntegerAttr(t, (int64_t)v));
}

bool isFloatLike(Type t) { return getElementTypeOrSelf(t).isa<FloatType>(); }

/// The scalar/vector body of an elementwise Graph op.
FailureOr<Value> emitElementwise(OpBuilder &b, Location loc, Operation *op,
                                 ArrayRef<Value> in, Type resultType) {
  Value x = in[0];
  Type t = x.getType();
  bool f = isFloatLike(t);
  if (isa<g::AddOp>(op)) return f ? b.create<arith::AddFOp>(loc, x, in[1]).getResult() : b.create<arith::AddIOp>(loc, x, in[1]).getResult();
  if (isa<g::SubOp>(op)) return f ? b.create<arith::SubFOp>(loc, x, in[1]).getResult() : b.create<arith::SubIOp>(loc, x, in[1]).getResult();
  if (isa<g::MulOp>(op)) return f ? b.create<arith::MulFOp>(loc, x, in[1]).getResult() : b.create<arith::MulIOp>(loc, x, in[1]).getResult();
  if (isa<g::DivOp>(op)) return f ? b.create<arith::DivFOp>(loc, x, in[1]).getResult() : b.create<arith::DivSIOp>(loc, x, in[1]).getResult();
  if (isa<g::MaxOp>(op)) return f ? b.create<arith::MaxFOp>(loc, x, in[1]).getResult() : b.create<arith::MaxSIOp>(loc, x, in[1]).getResult();
  if (isa<g::ReluOp>(op)) {
    Value z = constF(b, loc, t, 0.0);
    return f ? b.create<arith::MaxFOp>(loc, x, z).getResult() : b.create<arith::MaxSIOp>(loc, x, z).getResult();
  }
  if (isa<g::ExpOp>(op)) return b.create<math::ExpOp>(loc, x).getResult();
  if (isa<g::GeluOp>(op)) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), tanh(y) = 1 - 2/(e^{2y}+1)
    Value x3 = b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, x, x), x);
    Value inner = b.create<arith::AddFOp>(loc, x, b.create<arith::MulFOp>(loc, x3, constF(b, loc, t, 0.044715)));
    Value y2 = b.create<arith::MulFOp>(loc, inner, constF(b, loc, t, 2.0 * 0.7978845608028654));
    Value e = b.create<math::ExpOp>(loc, y2);
    Value th = b.create<arith::SubFOp>(loc, constF(b, loc, t, 1.0),
        b.create<arith::DivFOp>(loc, constF(b, loc, t, 2.0), b.create<arith::AddFOp>(loc, e, constF(b, loc, t, 1.0))));
    Value half = b.create<arith::MulFOp>(loc, x, constF(b, loc, t, 0.5));
    return b.create<arith::AddFOp>(loc, half, b.create<arith::MulFOp>(loc, half, th)).getResult();
  }
  if (isa<g::CastOp>(op)) {
    Type to = resultType;
    Type fe = getElementTypeOrSelf(t), te = getElementTypeOrSelf(to);
    if (fe == te) return x;
    if (fe.isa<FloatType>() && te.isa<FloatType>()) {
      if (fe.getIntOrFloatBitWidth() < te.getIntOrFloatBitWidth())
        return b.create<arith::ExtFOp>(loc, to, x).getResult();
      return b.create<arith::TruncFOp>(loc, to, x).getResult();
    }
    if (fe.isa<FloatType>()) return b.create<arith::FPToSIOp>(loc, to, x).getResult();
    if (te.isa<FloatType>()) return b.create<arith::SIToFPOp>(loc, to, x).getResult();
    if (fe.getIntOrFloatBitWidth() < te.getIntOrFloatBitWidth())
      return b.create<arith::ExtSIOp>(loc, to, x).getResult();
    return b.create<arith::TruncIOp>(loc, to, x).getResult();
  }
  return failure();
}

class KernelBuilder {
 public:
  KernelBuilder(func::FuncOp src, OpBuilder &b) : src(src), b(b), loc(src.getLoc()) {}

  LogicalResult run();

 private:
  func::FuncOp src;
  OpBuilder &b;
  Location loc;
  DenseMap<Value, Buf> bufs;
  DenseSet<Value> rowValues;
  bool parallel = false;
  int64_t rowsTotal = 0, rowBlock = 0;
  Value rows;  // rows this group owns (index)
  Value packA, packB;
  int64_t MC = 144, NC = 4096, KC = 256, MR = 6, NR = 16;
  SmallVector<Value> allocs;

  LogicalResult analyzeRows();
  Buf makeBuf(Value v);
  Value load(const Buf &buf, ArrayRef<Value> idx);
  void store(const Buf &buf, ArrayRef<Value> idx, Value v);
  SmallVector<Value> memIndices(const Buf &buf, ArrayRef<Value> idx);
  SmallVector<Value> extents(const Buf &buf);
  LogicalResult lowerMatmul(Operation *at, g::MatmulOp mm, ArrayRef<Operation *> epilogue,
                            const Buf &A, const Buf &B, const Buf &C,
                            DenseMap<Value, Buf> &local);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerTile(schedule::TileOp tile);
  LogicalResult lowerFlashAttention(schedule::FlashAttentionOp fa);
};

/// Rows are independent when every op maps row i of its row operands to row
/// i of its result; weights (matmul rhs, broadcast operands) must be inputs.
LogicalResult KernelBuilder::analyzeRows() {
  auto results = src.getFunctionType().getResults();
  if (results.empty()) return src.emitError("a Graph IR program must return a tensor");
  auto r0 = results[0].dyn_cast<RankedTensorType>();
  if (!r0 || r0.getRank() < 1) return failure();
  rowsTotal = r0.getDimSize(0);
  bool ok = true;
  auto isArg = [&](Value v) { return v.isa<BlockArgument>() && v.getParentBlock() == &src.front(); };
  auto dim0 = [&](Value v) {
    auto t = v.getType().cast<RankedTensorType>();
    return t.getRank() >= 1 ? t.getDimSize(0) : -1;
  };
  auto markRowIf = [&](Value v) { if (dim0(v) == rowsTotal) rowValues.insert(v); };
  std::function<void(Operation *)> visit = [&](Operation *op) {
    if (auto tile = dyn_cast<schedule::TileOp>(op)) {
      // Map region arguments to operands, analyse the region, map back.
      for (auto [arg, v] : llvm::zip(tile.getBody().getArguments(), tile.getOperands()))
        if (rowValues.contains(v)) rowValues.insert(arg);
      for (Operation &inner : tile.getBody().front().without_terminator()) visit(&inner);
      auto y = cast<schedule::YieldOp>(tile.getBody().front().getTerminator());
      for (auto [res, v] : llvm::zip(tile.getResults(), y.getValues()))
        if (rowValues.contains(v)) rowValues.insert(res);
      // Weights inside the region must come from function inputs.
      for (auto [arg, v] : llvm::zip(tile.getBody().getArguments(), tile.getOperands()))
        if (!rowValues.contains(arg) && !isArg(v)) ok = false;
      return;
    }
    if (auto mm = dyn_cast<g::MatmulOp>(op)) {
      if (!rowValues.contains(mm.getLhs()) || rowValues.contains(mm.getRhs())) ok = false;
      rowValues.insert(mm.getResult());
      return;
    }
    if (g::isElementwise(op)) {
      Value lhs = op->getOperand(0);
      if (!rowValues.contains(lhs)) { ok = false; return; }
      if (op->getNumOperands() == 2) {
        Value rhs = op->getOperand(1);
        bool sameRank = rhs.getType().cast<RankedTensorType>().getRank() ==
                        lhs.getType().cast<RankedTensorType>().getRank();
        if (sameRank ? !rowValues.contains(rhs) : rowValues.contains(rhs)) ok = false;
      }
      rowValues.insert(op->getResult(0));
      return;
    }
    if (auto fa = dyn_cast<schedule::FlashAttentionOp>(op)) {
      // Query rows are independent; every group reads all of K and V, which
      // must therefore be inputs (computed ones would be per-group rows).
      if (!rowValues.contains(fa.getQuery()) || !isArg(fa.getKeyT()) || !isArg(fa.getValue()) ||
          rowValues.contains(fa.getKeyT()) || rowValues.contains(fa.getValue()))
        ok = false;
      rowValues.insert(fa.getResult());
      return;
    }
    if (auto sm = dyn_cast<g::SoftmaxOp>(op)) {
      if (!rowValues.contains(sm.getInput()) || sm.getDim() == 0) ok = false;
      rowValues.insert(sm.getResult());
      return;
    }
    if (auto red = dyn_cast<g::ReduceOp>(op)) {
      if (!rowValues.contains(red.getInput()) || llvm::is_contained(red.getDims(), 0)) ok = false;
      rowValues.insert(red.getResult());
      return;
    }
    ok = false;  // layout conversions, collectives: not row-local
  };
  // Seed: inputs with the row count whose first use reads them as rows.
  for (BlockArgument a : src.getArguments()) {
    bool asRows = false;
    for (OpOperand &use : a.getUses()) {
      Operation *u = use.getOwner();
      if (auto tile = dyn_cast<schedule::TileOp>(u)) {
        Value arg = tile.getBody().getArgument(use.getOperandNumber());
        for (OpOperand &inner : arg.getUses())
          if ((isa<g::MatmulOp>(inner.getOwner()) && inner.getOperandNumber() == 0) ||
              (!isa<g::MatmulOp>(inner.getOwner()) && inner.getOperandNumber() == 0))
            asRows = true;
      } else if (use.getOperandNumber() == 0 || !isa<g::MatmulOp, schedule::FlashAttentionOp>(u)) {
        if (!(g::isElementwise(u) && use.getOperandNumber() == 1 &&
              a.getType().cast<RankedTensorType>().getRank() <
                  u->getOperand(0).getType().cast<RankedTensorType>().getRank()))
          asRows = true;
      }
    }
    if (asRows) markRowIf(a);
    // Layout arguments are not row blocks; the K^T of a flash_attention is
    // read whole in any layout (memIndices), so it does not count.
    bool onlyKey = !a.use_empty() && llvm::all_of(a.getUses(), [](OpOperand &use) {
      return isa<schedule::FlashAttentionOp>(use.getOwner()) && use.getOperandNumber() == 1;
    });
    if (g::getLayout(a.getType()) && !g::getLayout(a.getType()).isRowMajor() && !onlyKey) ok = false;
  }
  for (Operation &op : src.front().without_terminator()) visit(&op);
  for (Value v : src.front().getTerminator()->getOperands())
    if (!rowValues.contains(v)) ok = false;
  parallel = ok;
  if (!parallel) rowValues.clear();
  return success();
}

SmallVector<Value> KernelBuilder::memIndices(const Buf &buf, ArrayRef<Value> idx) {
  if (buf.layout && !buf.layout.isRowMajor()) {
    // Flat physical storage: offset of (i, j) in the innermost two dims.
    auto shape = buf.type.getShape();
    int64_t M = shape[shape.size() - 2], N = shape.back();
    Value i = idx[idx.size() - 2], j = idx.back();
    auto c = [&](int64_t v) { return cIdx(b, loc, v); };
    auto mul = [&](Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y).getResult(); };
    auto add = [&](Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y).getResult(); };
    auto div = [&](Value x, int64_t y) { return b.create<arith::DivUIOp>(loc, x, c(y)).getResult(); };
    auto rem = [&](Value x, int64_t y) { return b.create<arith::RemUIOp>(loc, x, c(y)).getResult(); };
    ArrayRef<int64_t> bl = buf.layout.getBlock();
    Value off;
    switch (buf.layout.getKind()) {
    case g::LayoutKind::ColMajor: off = add(mul(j, c(M)), i); break;
    case g::LayoutKind::Blocked:
      off = add(mul(add(mul(div(i, bl[0]), c(N / bl[1])), div(j, bl[1])), c(bl[0] * bl[1])),
                add(mul(rem(i, bl[0]), c(bl[1])), rem(j, bl[1])));
      break;
    case g::LayoutKind::Tiled: {
      ArrayRef<int64_t> u = buf.layout.getMicro();
      Value macro = mul(add(mul(div(i, bl[0]), c(N / bl[1])), div(j, bl[1])), c(bl[0] * bl[1]));
      Value ii = rem(i, bl[0]), jj = rem(j, bl[1]);
      Value micro = mul(add(mul(div(ii, u[0]), c(bl[1] / u[1])), div(jj, u[1])), c(u[0] * u[1]));
      off = add(add(macro, micro), add(mul(rem(ii, u[0]), c(u[1])), rem(jj, u[1])));
      break;
    }
    case g::LayoutKind::Interleaved: {
      int64_t f = buf.layout.getFactor();
      off = add(mul(add(mul(div(i, f), c(N)), j), c(f)), rem(i, f));
      break;
    }
    default: off = add(mul(i, c(N)), j); break;
    }
    // Leading (batch) dims are row-major over the MxN matrices.
    Value lead = c(0);
    for (size_t d = 0; d + 2 < idx.size(); ++d) lead = add(mul(lead, c(shape[d])), idx[d]);
    return {add(mul(lead, c(M * N)), off)};
  }
  SmallVector<Value> out(idx.begin(), idx.end());
  if (buf.row && buf.row0) out[0] = b.create<arith::AddIOp>(loc, out[0], buf.row0);
  return out;
}

Value KernelBuilder::load(const Buf &buf, ArrayRef<Value> idx) {
  return b.create<memref::LoadOp>(loc, buf.mem, memIndices(buf, idx));
}
void KernelBuilder::store(const Buf &buf, ArrayRef<Value> idx, Value v) {
  b.create<memref::StoreOp>(loc, v, buf.mem, memIndices(buf, idx));
}

/// Loop extents of a value: its shape, with this group's row count in dim 0.
SmallVector<Value> KernelBuilder::extents(const Buf &buf) {
  SmallVector<Value> ext;
  for (auto [d, n] : llvm::enumerate(buf.type.getShape()))
    ext.push_back(d == 0 && buf.row ? rows : cIdx(b, loc, n));
  return ext;
}

Buf KernelBuilder::makeBuf(Value v) {
  auto t = v.getType().cast<RankedTensorType>();
  Buf buf;
  buf.type = t;
  buf.layout = g::getLayout(t);
  buf.row = parallel && rowValues.contains(v);
  SmallVector<int64_t> shape(t.getShape());
  if (buf.layout && !buf.layout.isRowMajor()) shape = {t.getNumElements()};
  else if (buf.row) shape[0] = rowBlock;
  auto mt = MemRefType::get(shape, t.getElementType());
  buf.mem = b.create<memref::AllocOp>(loc, mt, b.getI64IntegerAttr(64));
  allocs.push_back(buf.mem);
  return buf;
}

LogicalResult KernelBuilder::lowerMatmul(Operation *at, g::MatmulOp mm,
                                         ArrayRef<Operation *> epilogue,
                                         const Buf &A, const Buf &B, const Buf &C,
                                         DenseMap<Value, Buf> &local) {
  auto at_ = A.type, bt = B.type;
  if (at_.getRank() != 2 || !at_.getElementType().isF32() || !bt.getElementType().isF32())
    return at->emitError("cpu backend: matmul supports rank-2 f32 operands");
  if ((A.layout && !A.layout.isRowMajor()) || (B.layout && !B.layout.isRowMajor()) ||
      (C.layout && !C.layout.isRowMajor()))
    return at->emitError("cpu backend: matmul operands must be row-major (insert convert_layout)");
  int64_t K = at_.getDimSize(1), N = bt.getDimSize(1);
  if (N % NR)
    return at->emitError() << "cpu backend: N = " << N << " must be a multiple of the micro tile NR = " << NR;
  // The BLIS structure (Goto, van Zee):
  //   for jc in N step NC:            B panel KC x NC packed once per (jc, pc)
  //     for pc in K step KC:          (L3 / L2)
  //       pack B[pc:pc+kc, jc:jc+nc] into NR-column slivers, k-major
  //       for ic in rows step MC:     A block MC x KC packed (L2)
  //         pack A[ic:ic+mc, pc:pc+kc] into MR-row slivers, k-major
  //         for jr in nc step NR:     B sliver KC x NR stays in L1
  //           for ir in mc step MR:   MR x NR register tile, k loop unrolled
  // Each tile group owns a block of rows, so B is packed once per group and
  // A never twice.  Earlier K slices are accumulated in C; the fused
  // epilogue is applied in registers after the last slice, before the store.
  int64_t nv = NR / kVec;
  int64_t nc = std::min(NC, N);
  nc = (nc + NR - 1) / NR * NR;
  int64_t kcMax = std::min(KC, K);
  auto f32 = b.getF32Type();
  auto vt = VectorType::get({kVec}, f32);
  Value c0 = cIdx(b, loc, 0), c1 = cIdx(b, loc, 1);
  Value mRows = A.row ? rows : cIdx(b, loc, at_.getDimSize(0));
  Value zeroV = constF(b, loc, vt, 0.0), zeroF = constF(b, loc, f32, 0.0);
  auto add = [&](Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y).getResult(); };
  auto mul = [&](Value x, int64_t y) { return b.create<arith::MulIOp>(loc, x, cIdx(b, loc, y)).getResult(); };
  auto addc = [&](Value x, int64_t y) { return y ? add(x, cIdx(b, loc, y)) : x; };
  auto minI = [&](int64_t cap, Value ub, Value iv) {
    return b.create<arith::MinSIOp>(loc, cIdx(b, loc, cap), b.create<arith::SubIOp>(loc, ub, iv)).getResult();
  };
  constexpr int64_t kUnroll = 8;
  int64_t maxRows = A.row ? std::min(rowBlock, rowsTotal) : at_.getDimSize(0);
  // One A block per group (the usual case: groups own <= MC rows): B is
  // packed sliver by sliver into L1; else the KC x NC panel is packed once
  // per K slice and shared by the A blocks.
  bool panel = maxRows > MC;
  int64_t tilesPerSliver = std::max<int64_t>(1, std::min(MC, maxRows) / MR);
  int64_t prefetchRows = (kcMax + std::max<int64_t>(1, tilesPerSliver - 1) - 1) /
                         std::max<int64_t>(1, tilesPerSliver - 1);
  // Row counts mc of an A block this kernel can see -> remainders mod MR.
  SmallVector<int64_t> remainders;
  {
    SmallVector<int64_t> rowCounts;
    if (A.row) {
      rowCounts.push_back(std::min(rowBlock, rowsTotal));
      if (rowsTotal % rowBlock) rowCounts.push_back(rowsTotal % rowBlock);
    } else {
      rowCounts.push_back(at_.getDimSize(0));
    }
    for (int64_t m : rowCounts)
      for (int64_t mcv : {m >= MC ? MC : int64_t(0), m % MC})
        if (mcv % MR && !llvm::is_contained(remainders, mcv % MR)) remainders.push_back(mcv % MR);
  }  // k iterations per trip of the micro-kernel loop

  forLoop(b, loc, c0, cIdx(b, loc, N), cIdx(b, loc, nc), [&](Value jc) {
    Value ncv = minI(nc, cIdx(b, loc, N), jc);
    forLoop(b, loc, c0, cIdx(b, loc, K), cIdx(b, loc, kcMax), [&](Value pc) {
      Value kc = minI(kcMax, cIdx(b, loc, K), pc);
      Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, pc, c0);
      Value last = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, add(pc, kc), cIdx(b, loc, K));
      // Pack the B panel (only when a group has several A blocks): sliver t
      // holds B[pc+k, jc+t*NR : +NR] at t*KC*NR + k*NR.  Rows of B are read
      // contiguously (k outer).
      if (panel) forLoop(b, loc, c0, kc, c1, [&](Value k) {
        Value krow = add(pc, k);
        Value dk = mul(k, NR);
        forLoop(b, loc, c0, ncv, cIdx(b, loc, NR), [&](Value t) {
          Value col0 = add(jc, t);
          // t counts columns; the sliver index is t / NR.
          Value dst = add(mul(b.create<arith::DivUIOp>(loc, t, cIdx(b, loc, NR)), kcMax * NR), dk);
          for (int64_t j = 0; j < nv; ++j) {
            Value v = b.create<vector::LoadOp>(loc, vt, B.mem, memIndices(B, {krow, addc(col0, j * kVec)}));
            b.create<vector::StoreOp>(loc, v, packB, ValueRange{addc(dst, j * kVec)});
          }
        });
      });
      forLoop(b, loc, c0, mRows, cIdx(b, loc, MC), [&](Value ic) {
        Value mc = minI(MC, mRows, ic);
        // Pack A: sliver s holds rows ic+s*MR .. +MR at s*KC*MR + k*MR + r;
        // rows past the end read as zero.
        Value lastRow = b.create<arith::SubIOp>(loc, mRows, c1);
        Value nSlivers = b.create<arith::DivUIOp>(loc, addc(mc, MR - 1), cIdx(b, loc, MR));
        forLoop(b, loc, c0, nSlivers, c1, [&](Value s) {
          Value sBase = mul(s, kcMax * MR);
          SmallVector<Value> valid, clamped;
          for (int64_t r = 0; r < MR; ++r) {
            Value row = add(ic, addc(mul(s, MR), r));
            valid.push_back(b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, row, mRows));
            clamped.push_back(b.create<arith::MinSIOp>(loc, row, lastRow));
          }
          // k outer: each k writes MR contiguous floats.
          forLoop(b, loc, c0, kc, c1, [&](Value k) {
            Value dst = add(sBase, mul(k, MR)), col = add(pc, k);
            for (int64_t r = 0; r < MR; ++r) {
              Value v = load(A, {clamped[r], col});
              v = b.create<arith::SelectOp>(loc, valid[r], v, zeroF);
              b.create<memref::StoreOp>(loc, v, packA, ValueRange{addc(dst, r)});
            }
          });
        });
        forLoop(b, loc, c0, ncv, cIdx(b, loc, NR), [&](Value jr) {
          Value jcol = add(jc, jr);
          Value bBase = c0;
          if (panel) {
            bBase = mul(b.create<arith::DivUIOp>(loc, jr, cIdx(b, loc, NR)), kcMax * NR);
          } else {
            // Pack this KC x NR sliver of B right before its micro-kernels:
            // it stays in L1 for all of them.
            forLoop(b, loc, c0, kc, c1, [&](Value k) {
              Value krow = add(pc, k);
              for (int64_t j = 0; j < nv; ++j) {
                Value v = b.create<vector::LoadOp>(loc, vt, B.mem, memIndices(B, {krow, addc(jcol, j * kVec)}));
                b.create<vector::StoreOp>(loc, v, packB, ValueRange{addc(mul(k, NR), j * kVec)});
              }
            });
          }
          // One MR x NR register tile (or an mr-row remainder tile) at row ir.
          auto emitTile = [&](Value ir, int64_t mr) {
            Value aBase = mul(b.create<arith::DivUIOp>(loc, ir, cIdx(b, loc, MR)), kcMax * MR);
            // k loop: kUnroll steps per trip, then the remainder.
            auto kStep = [&](Value k, SmallVector<Value> &acc) {
              Value bo = add(bBase, mul(k, NR)), ao = add(aBase, mul(k, MR));
              SmallVector<Value> bv;
              for (int64_t j = 0; j < nv; ++j)
                bv.push_back(b.create<vector::LoadOp>(loc, vt, packB, ValueRange{addc(bo, j * kVec)}));
              for (int64_t r = 0; r < mr; ++r) {
                Value a = b.create<memref::LoadOp>(loc, packA, ValueRange{addc(ao, r)});
                Value ab = b.create<vector::BroadcastOp>(loc, vt, a);
                for (int64_t j = 0; j < nv; ++j)
                  acc[r * nv + j] = b.create<vector::FMAOp>(loc, ab, bv[j], acc[r * nv + j]);
              }
            };
            // Prefetch the rows of B that the next K slice packs for this
            // sliver, prefetchRows per tile, spread over the sliver's tiles
            // (B comes from memory once per group: hide it behind compute).
            {
              Value nextRow = add(addc(pc, kcMax), mul(b.create<arith::DivUIOp>(loc, ir, cIdx(b, loc, MR)), prefetchRows));
              Value lastK = cIdx(b, loc, K - 1);
              for (int64_t i = 0; i < prefetchRows; ++i) {
                Value krow = b.create<arith::MinSIOp>(loc, addc(nextRow, i), lastK);
                b.create<memref::PrefetchOp>(loc, B.mem, memIndices(B, {krow, jcol}),
                                             /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
              }
            }
            // Prefetch the C tile (it is read and written after the k loop).
            Value lastRowC = b.create<arith::SubIOp>(loc, mRows, c1);
            for (int64_t r = 0; r < mr; ++r) {
              Value prow = b.create<arith::MinSIOp>(loc, add(ic, addc(ir, r)), lastRowC);
              b.create<memref::PrefetchOp>(loc, C.mem, memIndices(C, {prow, jcol}),
                                           /*isWrite=*/true, /*localityHint=*/3, /*isDataCache=*/true);
            }
            Value kMain = b.create<arith::SubIOp>(loc, kc, b.create<arith::RemUIOp>(loc, kc, cIdx(b, loc, kUnroll)));
            SmallVector<Value> init(mr * nv, zeroV);
            auto main = b.create<scf::ForOp>(loc, c0, kMain, cIdx(b, loc, kUnroll), init);
            {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(main.getBody());
              SmallVector<Value> acc(main.getRegionIterArgs());
              for (int64_t u = 0; u < kUnroll; ++u) kStep(addc(main.getInductionVar(), u), acc);
              b.create<scf::YieldOp>(loc, acc);
            }
            auto rest = b.create<scf::ForOp>(loc, kMain, kc, c1, main.getResults());
            {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(rest.getBody());
              SmallVector<Value> acc(rest.getRegionIterArgs());
              kStep(rest.getInductionVar(), acc);
              b.create<scf::YieldOp>(loc, acc);
            }
            // Store the register tile.
            for (int64_t r = 0; r < mr; ++r) {
              Value lrow = add(ic, addc(ir, r));
              Value valid = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, lrow, mRows);
              auto ifOp = b.create<scf::IfOp>(loc, valid, false);
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(&ifOp.getThenRegion().front());
              for (int64_t j = 0; j < nv; ++j) {
                Value col = addc(jcol, j * kVec);
                auto cIdxs = memIndices(C, {lrow, col});
                Value acc = rest.getResult(r * nv + j);
                // Accumulate earlier K slices (not on the first).
                auto accIf = b.create<scf::IfOp>(loc, TypeRange{vt}, first, true);
                {
                  OpBuilder::InsertionGuard g2(b);
                  b.setInsertionPointToStart(&accIf.getThenRegion().front());
                  b.create<scf::YieldOp>(loc, acc);
                  b.setInsertionPointToStart(&accIf.getElseRegion().front());
                  Value old = b.create<vector::LoadOp>(loc, vt, C.mem, cIdxs);
                  b.create<scf::YieldOp>(loc, ValueRange{b.create<arith::AddFOp>(loc, acc, old).getResult()});
                }
                Value v = accIf.getResult(0);
                Value e = v;
                for (Operation *op : epilogue) {
                  SmallVector<Value> ins{e};
                  if (op->getNumOperands() == 2) {
                    const Buf &rb = local.find(op->getOperand(1))->second;
                    SmallVector<Value> ridx;
                    if (rb.type.getRank() == 1) ridx = {col};
                    else ridx = {lrow, col};
                    ins.push_back(b.create<vector::LoadOp>(loc, vt, rb.mem, memIndices(rb, ridx)));
                  }
                  FailureOr<Value> res = emitElementwise(b, loc, op, ins, vt);
                  if (failed(res)) return;
                  e = *res;
                }
                if (!epilogue.empty()) v = b.create<arith::SelectOp>(loc, last, e, v);
                b.create<vector::StoreOp>(loc, v, C.mem, cIdxs);
              }
            }
          };
          // Full tiles, then the remainder rows (mc % MR) with a smaller
          // register tile: one variant per remainder this kernel can see.
          Value mcFull = b.create<arith::SubIOp>(loc, mc, b.create<arith::RemUIOp>(loc, mc, cIdx(b, loc, MR)));
          forLoop(b, loc, c0, mcFull, cIdx(b, loc, MR), [&](Value ir) { emitTile(ir, MR); });
          for (int64_t rem : remainders) {
            Value is = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, b.create<arith::SubIOp>(loc, mc, mcFull), cIdx(b, loc, rem));
            auto ifOp = b.create<scf::IfOp>(loc, is, false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(&ifOp.getThenRegion().front());
            emitTile(mcFull, rem);
          }
        });
      });
    });
  });
  return success();
}

LogicalResult KernelBuilder::lowerTile(schedule::TileOp tile) {
  ArrayRef<int64_t> ts = tile.getTileSizes(), mt = tile.getMicroTile();
  MC = ts[0]; NC = ts[1]; KC = ts[2]; MR = mt[0]; NR = mt[1];
  if (NR % kVec) return tile.emitError() << "cpu backend: NR must be a multiple of " << kVec;
  DenseMap<Value, Buf> local;
  for (auto [arg, v] : llvm::zip(tile.getBody().getArguments(), tile.getOperands()))
    local[arg] = bufs[v];
  Block &body = tile.getBody().front();
  auto yield = cast<schedule::YieldOp>(body.getTerminator());
  // Chains of `matmul -> elementwise*` become one BLIS nest each.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator()) ops.push_back(&op);
  for (size_t i = 0; i < ops.size();) {
    auto mm = dyn_cast<g::MatmulOp>(ops[i]);
    if (!mm) return ops[i]->emitError("cpu backend: a tile region must be matmul chains");
    SmallVector<Operation *> epi;
    Value cur = mm.getResult();
    size_t j = i + 1;
    while (j < ops.size() && g::isElementwise(ops[j]) && ops[j]->getOperand(0) == cur &&
           cur.hasOneUse() && !isa<g::CastOp>(ops[j]) &&
           (ops[j]->getNumOperands() == 1 || local.count(ops[j]->getOperand(1)))) {
      epi.push_back(ops[j]);
      cur = ops[j]->getResult(0);
      ++j;
    }
    // The chain's result: the tile's output buffer when yielded, else scratch.
    Buf out;
    bool yielded = false;
    for (auto [k, y] : llvm::enumerate(yield.getValues()))
      if (y == cur) { out = bufs[tile.getResult(k)]; yielded = true; }
    if (!yielded) {
      bool saved = rowValues.contains(cur);
      if (parallel && rowValues.contains(mm.getLhs())) rowValues.insert(cur);
      out = makeBuf(cur);
      if (!saved) rowValues.erase(cur);
    }
    local[cur] = out;
    if (failed(lowerMatmul(mm, mm, epi, local[mm.getLhs()], local[mm.getRhs()], out, local)))
      return failure();
    i = j;
  }
  return success();
}

LogicalResult KernelBuilder::lowerFlashAttention(schedule::FlashAttentionOp fa) {
  Buf q = bufs[fa.getQuery()], kt = bufs[fa.getKeyT()], v = bufs[fa.getValue()];
  Buf out = bufs[fa.getResult()];
  if (out.layout && !out.layout.isRowMajor())
    return fa.emitError("cpu backend: flash_attention result must be row-major");
  FlashAttentionAccess a;
  a.q = q.mem;
  a.kt = kt.mem;
  a.v = v.mem;
  a.out = out.mem;
  // memIndices adds the group's row offset to row buffers and applies layouts.
  auto at = [this](Buf buf) {
    return [this, buf](Value i, Value j) { return memIndices(buf, {i, j}); };
  };
  a.qAt = at(q);
  a.ktAt = at(kt);
  a.vAt = at(v);
  a.outAt = at(out);
  a.rows = q.row ? rows : cIdx(b, loc, q.type.getDimSize(0));
  return cpu::lowerFlashAttention(b, fa, a, allocs);
}

LogicalResult KernelBuilder::lowerOp(Operation *op) {
  if (auto tile = dyn_cast<schedule::TileOp>(op)) return lowerTile(tile);
  if (auto fa = dyn_cast<schedule::FlashAttentionOp>(op)) return lowerFlashAttention(fa);
  if (auto mm = dyn_cast<g::MatmulOp>(op))
    return lowerMatmul(op, mm, {}, bufs[mm.getLhs()], bufs[mm.getRhs()], bufs[mm.getResult()], bufs);
  Value c0 = cIdx(b, loc, 0);
  if (g::isElementwise(op)) {
    Buf out = bufs[op->getResult(0)], lhs = bufs[op->getOperand(0)];
    forNest(b, loc, extents(out), [&](ArrayRef<Value> iv) {
      SmallVector<Value> ins{load(lhs, iv)};
      if (op->getNumOperands() == 2) {
        Buf rhs = bufs[op->getOperand(1)];
        ins.push_back(load(rhs, iv.take_back(rhs.type.getRank())));
      }
      FailureOr<Value> r = emitElementwise(b, loc, op, ins, out.type.getElementType());
      if (succeeded(r)) store(out, iv, *r);
    });
    return success();
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    // Splat tensor constants (e.g. an attention scale): fill the buffer.
    auto dense = cst.getValue().dyn_cast<DenseElementsAttr>();
    if (!dense || !dense.isSplat() || !cst.getType().isa<RankedTensorType>())
      return op->emitError("cpu backend: only splat tensor constants are supported");
    Buf out = bufs[cst.getResult()];
    Type et = out.type.getElementType();
    Value v = et.isa<FloatType>()
                  ? constF(b, loc, et, dense.getSplatValue<APFloat>().convertToDouble())
                  : constF(b, loc, et, (double)dense.getSplatValue<APInt>().getSExtValue());
    forNest(b, loc, extents(out), [&](ArrayRef<Value> iv) { store(out, iv, v); });
    return success();
  }
  if (auto cl = dyn_cast<g::ConvertLayoutOp>(op)) {
    Buf out = bufs[cl.getResult()], in = bufs[cl.getInput()];
    forNest(b, loc, extents(out), [&](ArrayRef<Value> iv) { store(out, iv, load(in, iv)); });
    return success();
  }
  if (auto sm = dyn_cast<g::SoftmaxOp>(op)) {
    Buf out = bufs[sm.getResult()], in = bufs[sm.getInput()];
    auto t = in.type;
    if (sm.getDim() != t.getRank() - 1 || !t.getElementType().isF32())
      return op->emitError("cpu backend: softmax along the last dim of f32 tensors");
    auto ext = extents(in);
    Type f32 = b.getF32Type();
    Value n = ext.back();
    forNest(b, loc, ArrayRef<Value>(ext).drop_back(), [&](ArrayRef<Value> outer) {
      auto idx = [&](Value j) { SmallVector<Value> v(outer.begin(), outer.end()); v.push_back(j); return v; };
      auto mx = b.create<scf::ForOp>(loc, c0, n, cIdx(b, loc, 1), ValueRange{constF(b, loc, f32, -INFINITY)});
      { OpBuilder::InsertionGuard gd(b); b.setInsertionPointToStart(mx.getBody());
        b.create<scf::YieldOp>(loc, ValueRange{b.create<arith::MaxFOp>(loc, mx.getRegionIterArgs()[0], load(in, idx(mx.getInductionVar())))}); }
      auto sum = b.create<scf::ForOp>(loc, c0, n, cIdx(b, loc, 1), ValueRange{constF(b, loc, f32, 0.0)});
      { OpBuilder::InsertionGuard gd(b); b.setInsertionPointToStart(sum.getBody());
        Value e = b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, load(in, idx(sum.getInductionVar())), mx.getResult(0)));
        store(out, idx(sum.getInductionVar()), e);
        b.create<scf::YieldOp>(loc, ValueRange{b.create<arith::AddFOp>(loc, sum.getRegionIterArgs()[0], e)}); }
      Value inv = b.create<arith::DivFOp>(loc, constF(b, loc, f32, 1.0), sum.getResult(0));
      forLoop(b, loc, c0, n, cIdx(b, loc, 1), [&](Value j) {
        store(out, idx(j), b.create<arith::MulFOp>(loc, load(out, idx(j)), inv));
      });
    });
    return success();
  }
  if (auto red = dyn_cast<g::ReduceOp>(op)) {
    Buf out = bufs[red.getResult()], in = bufs[red.getInput()];
    auto t = in.type;
    ArrayRef<int64_t> dims = red.getDims();
    if (dims.size() != 1 || dims[0] != t.getRank() - 1)
      return op->emitError("cpu backend: reductions over the innermost dimension");
    bool isMax = red.getKind() == g::ReduceKind::max;
    Type et = t.getElementType();
    auto combine = [&](Value x, Value y) -> Value {
      if (et.isa<FloatType>())
        return isMax ? b.create<arith::MaxFOp>(loc, x, y).getResult() : b.create<arith::AddFOp>(loc, x, y).getResult();
      return isMax ? b.create<arith::MaxSIOp>(loc, x, y).getResult() : b.create<arith::AddIOp>(loc, x, y).getResult();
    };
    int64_t n = t.getShape().back();
    auto ext = extents(in);
    Value scratch;
    if (red.getOrder() == g::AssocOrder::pairwise) {
      scratch = b.create<memref::AllocOp>(loc, MemRefType::get({n}, et), b.getI64IntegerAttr(64));
      allocs.push_back(scratch);
    }
    forNest(b, loc, ArrayRef<Value>(ext).drop_back(), [&](ArrayRef<Value> outer) {
      auto idx = [&](Value j) { SmallVector<Value> v(outer.begin(), outer.end()); v.push_back(j); return v; };
      Value result;
      if (red.getOrder() == g::AssocOrder::sequential) {
        auto loop = b.create<scf::ForOp>(loc, cIdx(b, loc, 1), cIdx(b, loc, n), cIdx(b, loc, 1),
                                         ValueRange{load(in, idx(c0))});
        OpBuilder::InsertionGuard gd(b);
        b.setInsertionPointToStart(loop.getBody());
        b.create<scf::YieldOp>(loc, ValueRange{combine(loop.getRegionIterArgs()[0], load(in, idx(loop.getInductionVar())))});
        b.setInsertionPointAfter(loop);
        result = loop.getResult(0);
        store(out, outer, result);
      } else {
        // Balanced tree: level s combines x[i] and x[i+s] for i % 2s == 0.
        forLoop(b, loc, c0, cIdx(b, loc, n), cIdx(b, loc, 1), [&](Value j) {
          b.create<memref::StoreOp>(loc, load(in, idx(j)), scratch, ValueRange{j});
        });
        for (int64_t s = 1; s < n; s *= 2) {
          forLoop(b, loc, c0, cIdx(b, loc, n - s), cIdx(b, loc, 2 * s), [&](Value i) {
            Value i2 = b.create<arith::AddIOp>(loc, i, cIdx(b, loc, s));
            Value v = combine(b.create<memref::LoadOp>(loc, scratch, ValueRange{i}),
                              b.create<memref::LoadOp>(loc, scratch, ValueRange{i2}));
            b.create<memref::StoreOp>(loc, v, scratch, ValueRange{i});
          });
        }
        store(out, outer, b.create<memref::LoadOp>(loc, scratch, ValueRange{c0}));
      }
    });
    return success();
  }
  return op->emitError() << "cpu backend: cannot lower '" << op->getName()
                         << "' (collectives run through the runtime's Communicator)";
}

LogicalResult KernelBuilder::run() {
  if (failed(analyzeRows())) return failure();
  // Row block of a tile group.  B panels are packed once per group, so a
  // group should own many rows (its packing cost is K*N per group against
  // rows*K*N FMAs); the runtime runs groups on its workers (2 here), so the
  // count should be even and large enough to balance on a shared machine:
  // about 128 rows (<= MC, so B slivers are packed once per group), at most
  // 16 groups.  Measured on 2 Zen 3 cores: 2048^3 with 16 groups ~1.0x
  // OpenBLAS, with 8 groups 0.87x (noisy).
  rowBlock = rowsTotal;
  if (parallel) {
    int64_t groups = std::clamp<int64_t>(rowsTotal / 128, rowsTotal >= 32 ? 2 : 1, 16);
    if (groups > 1 && groups % 2) --groups;
    rowBlock = (rowsTotal + groups - 1) / groups;
  }
  int64_t grid = parallel ? (rowsTotal + rowBlock - 1) / rowBlock : 1;

  // Signature: inputs, outputs, group id x3, grid x3, shared memory.
  SmallVector<Type> types;
  auto memTy = [](Type t) {
    auto tt = t.cast<RankedTensorType>();
    auto l = g::getLayout(tt);
    if (l && !l.isRowMajor()) return MemRefType::get({tt.getNumElements()}, tt.getElementType());
    return MemRefType::get(tt.getShape(), tt.getElementType());
  };
  for (Type t : src.getArgumentTypes()) {
    if (!t.isa<RankedTensorType>()) return src.emitError("cpu backend: program arguments must be tensors");
    types.push_back(memTy(t));
  }
  for (Type t : src.getResultTypes()) types.push_back(memTy(t));
  unsigned nIn = src.getNumArguments(), nOut = src.getNumResults();
  for (int i = 0; i < 6; ++i) types.push_back(b.getIndexType());
  types.push_back(MemRefType::get({tile::kDefaultMaxSharedMemory}, b.getI8Type()));
  b.setInsertionPoint(src);
  auto fn = b.create<func::FuncOp>(loc, src.getName(), b.getFunctionType(types, {}));
  fn->setAttr(kKernelAttr, b.getDictionaryAttr({
      b.getNamedAttr("inputs", b.getI64IntegerAttr(nIn)),
      b.getNamedAttr("outputs", b.getI64IntegerAttr(nOut)),
      b.getNamedAttr("grid", b.getDenseI64ArrayAttr({grid, 1, 1})),
      b.getNamedAttr("group_size", b.getDenseI64ArrayAttr({1, 1, 1}))}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);

  Value gid = entry->getArgument(nIn + nOut);
  Value row0 = b.create<arith::MulIOp>(loc, gid, cIdx(b, loc, rowBlock));
  rows = parallel ? b.create<arith::MinSIOp>(loc, cIdx(b, loc, rowBlock),
                                             b.create<arith::SubIOp>(loc, cIdx(b, loc, rowsTotal), row0)).getResult()
                  : cIdx(b, loc, rowsTotal);
  auto argBuf = [&](Value tensor, Value mem) {
    Buf buf;
    buf.mem = mem;
    buf.type = tensor.getType().cast<RankedTensorType>();
    buf.layout = g::getLayout(buf.type);
    buf.row = parallel && rowValues.contains(tensor);
    buf.row0 = row0;
    return buf;
  };
  for (unsigned i = 0; i < nIn; ++i) bufs[src.getArgument(i)] = argBuf(src.getArgument(i), entry->getArgument(i));
  auto ret = cast<func::ReturnOp>(src.front().getTerminator());
  SmallVector<std::pair<Value, Buf>> copies;  // returned values that are inputs or repeated
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Buf out = argBuf(v, entry->getArgument(nIn + i));
    if (bufs.count(v)) copies.push_back({v, out});
    else bufs[v] = out;
  }
  // Packing buffers, sized for the largest matmul: A blocks of MC x KC in
  // MR-row slivers, B panels of KC x NC in NR-column slivers.
  int64_t packASize = 8, packBSize = 8;
  auto sizeFor = [&](g::MatmulOp mm, int64_t mc, int64_t nc, int64_t kc, int64_t mr, int64_t nr) {
    auto at = mm.getLhs().getType().cast<RankedTensorType>();
    auto bt = mm.getRhs().getType().cast<RankedTensorType>();
    int64_t K = at.getShape().back(), N = bt.getShape().back();
    kc = std::min(kc, K);
    nc = (std::min(nc, N) + nr - 1) / nr * nr;
    packASize = std::max(packASize, (mc / mr + 1) * kc * mr);
    packBSize = std::max(packBSize, nc * kc);
  };
  src.walk([&](g::MatmulOp mm) {
    if (auto t = mm->getParentOfType<schedule::TileOp>())
      sizeFor(mm, t.getTileSizes()[0], t.getTileSizes()[1], t.getTileSizes()[2],
              t.getMicroTile()[0], t.getMicroTile()[1]);
    else
      sizeFor(mm, MC, NC, KC, MR, NR);
  });
  auto f32 = b.getF32Type();
  packA = b.create<memref::AllocOp>(loc, MemRefType::get({packASize}, f32), b.getI64IntegerAttr(64));
  packB = b.create<memref::AllocOp>(loc, MemRefType::get({packBSize}, f32), b.getI64IntegerAttr(64));
  allocs.push_back(packA);
  allocs.push_back(packB);

  for (Operation &op : src.front().without_terminator()) {
    for (Value r : op.getResults())
      if (!bufs.count(r)) bufs[r] = makeBuf(r);
    if (failed(lowerOp(&op))) return failure();
  }
  for (auto &[v, out] : copies) {
    Buf in = bufs[v];
    forNest(b, loc, extents(out), [&](ArrayRef<Value> iv) { store(out, iv, load(in, iv)); });
  }
  for (Value a : allocs) b.create<memref::DeallocOp>(loc, a);
  b.create<func::ReturnOp>(loc);
  return success();
}

struct ScheduleToCPUPass : tessera::cpu::impl::ScheduleToCPUBase<ScheduleToCPUPass> {
  using ScheduleToCPUBase::ScheduleToCPUBase;
  void runOnOperation() override {
    SmallVector<func::FuncOp> todo;
    getOperation().walk([&](func::FuncOp f) {
      if (!f.isExternal() && llvm::any_of(f.getArgumentTypes(), [](Type t) { return t.isa<RankedTensorType>(); }))
        todo.push_back(f);
    });
    for (func::FuncOp f : todo) {
      OpBuilder b(f);
      KernelBuilder kb(f, b);
      if (failed(kb.run())) return signalPassFailure();
      f.erase();
    }
    // Meshes only matter to collectives, which the kernel does not contain.
    for (auto m : llvm::make_early_inc_range(getOperation().getOps<g::MeshOp>())) m.erase();
  }
};

}  // namespace
