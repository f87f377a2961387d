//===- MatmulToCPU.cpp - matmul + epilogue -> BLIS loop nest --------------===//
//
// The BLIS structure (Goto, van Zee), per matrix of a batch:
//
//   for jc in N step NC:            B panel KC x NC packed once per (jc, pc)
//     for pc in K step KC:          (L3 / L2)
//       pack B[pc:pc+kc, jc:jc+nc] into NR-column slivers, k-major
//       for ic in rows step MC:     A block MC x KC packed (L2)
//         pack A[ic:ic+mc, pc:pc+kc] into MR-row slivers, k-major
//         for jr in nc step NR:     B sliver KC x NR stays in L1
//           for ir in mc step MR:   MR x NR register tile, k loop unrolled
//
// Each tile group owns a block of rows (or of batch matrices), so B is packed
// once per group and A never twice.  The fused epilogue is applied in
// registers after the last K slice, before the store.
//
// Element types: the packed buffers hold the accumulator type, f32 for
// float matmuls (f16/bf16/fp8 operands are widened while packing, in
// vector code) and i32 for integer ones (i8 sign-extended), so the
// micro-kernel is the same for every storage type: vector.fma on
// vector<Vxf32>, or muli + addi on vector<Vxi32>, where V is 8 (AVX2's
// ymm) or 16 (AVX-512's zmm: MatmulAccess::lanes).  The result is the sum
// over all of K in the accumulator type, rounded once to the result type.
//
// Column remainders (N % NR != 0): the last sliver has a static width
// N % NR, packed with zeros past it, and its register tile is
// ceil(width / 8) vectors wide; the partial vector is read and written with
// vector.maskedload / maskedstore (vmaskmovps on AVX2) for 32-bit storage,
// lane by lane for 8/16-bit storage (AVX2 has no masked byte/word moves).
// Measured against padding the remainder tile to 16 columns (masked stores
// only), f32 2048 x 2048 x N on 2 cores, 4 alternating runs of 30
// iterations: no difference beyond the shared machine's noise, at N = 2040
// (1 sliver in 128) or N = 24 (where packing A dominates).  The narrower
// tile is kept: it does no FMAs on zero columns and never loads them.
//
//===----------------------------------------------------------------------===//
#include "MatmulToCPU.h"

#include <algorithm>

#include "LoopBuilder.h"
#include "RegisterTranspose.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
namespace g = tessera::graph;

namespace tessera::cpu {
namespace {

constexpr int64_t kUnroll = 8;  // k iterations per trip of the micro-kernel loop
// Added to a shared sliver's state word once it is packed (claimSharedSliver):
// far above any number of visits.
constexpr int64_t kPacked = int64_t{1} << 30;

class MatmulEmitter {
 public:
  MatmulEmitter(OpBuilder &b, g::MatmulOp mm, const FusedTree &epilogue,
                const MatmulAccess &x, SmallVectorImpl<Value> &allocs)
      : b(b), loc(mm.getLoc()), mm(mm), epilogue(epilogue), x(x), allocs(allocs), V(x.lanes) {}

  LogicalResult emit();

 private:
  OpBuilder &b;
  Location loc;
  g::MatmulOp mm;
  const FusedTree &epilogue;
  const MatmulAccess &x;
  SmallVectorImpl<Value> &allocs;
  const int64_t V;  // lanes of the micro-kernel's vectors (MatmulAccess::lanes)

  int64_t rank = 2, M = 0, K = 0, N = 0, MC = 0, NC = 0, KC = 0, MR = 0, NR = 0;
  int64_t nv = 0, nc = 0, kcMax = 0, maxRows = 0, nrem = 0, prefetchRows = 1;
  Type accElem;
  VectorType accVec;
  bool panel = false, accInC = true, singleSlice = true;
  SmallVector<int64_t> remainders;
  Value cAcc;  // partial sums when C does not hold the accumulator type
  Value packB;  // where the micro-kernels read B: x.packB, or the shared slivers
  Value nextPacked;  // shared: whether the next sliver was packed (i1), for the prefetches

  // Loop state of the current position in the nest.
  SmallVector<Value> prefix;  // batch indices
  Value mRows, jc, ncv, ncvFull, pc, kc, first, last, ic, mc;

  Value c(int64_t v) { return cIdx(b, loc, v); }
  Value add(Value p, Value q) { return b.create<arith::AddIOp>(loc, p, q); }
  Value mul(Value p, int64_t q) { return b.create<arith::MulIOp>(loc, p, c(q)); }
  Value addc(Value p, int64_t q) { return q ? add(p, c(q)) : p; }
  Value divc(Value p, int64_t q) { return b.create<arith::DivUIOp>(loc, p, c(q)); }
  Value minI(int64_t cap, Value ub, Value iv) {
    return b.create<arith::MinSIOp>(loc, c(cap), b.create<arith::SubIOp>(loc, ub, iv));
  }
  SmallVector<Value> at(Value i, Value j) {
    SmallVector<Value> v(prefix.begin(), prefix.end());
    v.push_back(i);
    v.push_back(j);
    return v;
  }

  Value loadVec(const TensorAccess &t, ArrayRef<Value> idx, int64_t lanes);
  void storeVec(const TensorAccess &t, ArrayRef<Value> idx, Value v, int64_t lanes);
  void packPanel();
  void packBTransposed(Value dstBase, Value col0, int64_t width);
  void packA();
  void sliver(Value jr, int64_t width);
  Value claimSharedSliver(Value jr, int64_t width);
  void packSliver(Value bBase, Value jcol, int64_t width);
  void tile(Value jr, Value bBase, Value ir, int64_t mr, int64_t width);
  FailureOr<Value> applyEpilogue(Value v, Value row, Value col, int64_t lanes);
};

/// `lanes` (<= 8) consecutive elements of `t` from logical index `idx`,
/// widened to the compute type; lanes past `lanes` are zero. Lane by lane
/// when they are not contiguous in memory (a tensor in another layout: t.at
/// applies it to each index).
Value MatmulEmitter::loadVec(const TensorAccess &t, ArrayRef<Value> idx, int64_t lanes) {
  Type elem = t.type.getElementType(), st = storageType(elem);
  auto svt = VectorType::get({V}, st);
  const bool contiguous = g::isRowMajor(t.type);
  if (contiguous && lanes == V)
    return widen(b, loc, b.create<vector::LoadOp>(loc, svt, t.mem, t.at(idx)), elem, x.elements);
  if (contiguous && st.getIntOrFloatBitWidth() == 32) {  // f32 / i32: storage is the compute type
    auto mask = b.create<vector::ConstantMaskOp>(loc, VectorType::get({V}, b.getI1Type()),
                                                 b.getI64ArrayAttr({lanes}));
    return b.create<vector::MaskedLoadOp>(loc, svt, t.mem, t.at(idx), mask,
                                          splatConstant(b, loc, svt, 0));
  }
  Value v = splatConstant(b, loc, VectorType::get({V}, computeType(elem)), 0);
  for (int64_t l = 0; l < lanes; ++l) {
    SmallVector<Value> li(idx.begin(), idx.end());
    li.back() = addc(li.back(), l);
    Value s = widen(b, loc, b.create<memref::LoadOp>(loc, t.mem, t.at(li)), elem, x.elements);
    v = b.create<vector::InsertOp>(loc, s, v, ArrayRef<int64_t>{l});
  }
  return v;
}

/// Rounds the compute-type vector `v` to `t`'s type and stores its first
/// `lanes` lanes at logical index `idx`.
void MatmulEmitter::storeVec(const TensorAccess &t, ArrayRef<Value> idx, Value v, int64_t lanes) {
  Type elem = t.type.getElementType(), st = storageType(elem);
  if (lanes == V) {
    b.create<vector::StoreOp>(loc, narrow(b, loc, v, elem, x.elements), t.mem, t.at(idx));
    return;
  }
  if (st.getIntOrFloatBitWidth() == 32) {
    auto mask = b.create<vector::ConstantMaskOp>(loc, VectorType::get({V}, b.getI1Type()),
                                                 b.getI64ArrayAttr({lanes}));
    b.create<vector::MaskedStoreOp>(loc, t.mem, t.at(idx), mask, v);
    return;
  }
  for (int64_t l = 0; l < lanes; ++l) {
    SmallVector<Value> li(idx.begin(), idx.end());
    li.back() = addc(li.back(), l);
    Value s = b.create<vector::ExtractOp>(loc, v, ArrayRef<int64_t>{l});
    b.create<memref::StoreOp>(loc, narrow(b, loc, s, elem, x.elements), t.mem, t.at(li));
  }
}

/// A transposed B (a col_major view of X, B[k][n] = X[n][k]: the
/// gradient's W^T) into the sliver at `dstBase`: dst[k*NR + n] =
/// B[pc+k][col0+n] for k < kc, n < width.  Read element by element it cost
/// as much as the FMAs when a group has few rows (a 256-token dX = dY . W^T:
/// each B element feeds 128 rows).  Here by V x V blocks: V vector loads
/// along X's rows (V consecutive k each), a transpose in registers
/// (RegisterTranspose.h), V vector stores of V consecutive n; the K
/// remainder and columns past the last whole vector element by element.
void MatmulEmitter::packBTransposed(Value dstBase, Value col0, int64_t width) {
  Type elem = x.b.type.getElementType();
  auto svt = VectorType::get({V}, storageType(elem));
  const int64_t wFull = width / V * V;
  Value kMain = b.create<arith::SubIOp>(loc, kc, b.create<arith::RemUIOp>(loc, kc, c(V)));
  auto dstAt = [&](Value k, int64_t n) { return addc(add(dstBase, mul(k, NR)), n); };
  if (wFull) {
    forLoop(b, loc, c(0), kMain, c(V), [&](Value k0) {
      Value krow = add(pc, k0);
      for (int64_t n0 = 0; n0 < wFull; n0 += V) {
        SmallVector<Value> r;
        for (int64_t l = 0; l < V; ++l)  // X row col0+n0+l, k from krow: contiguous
          r.push_back(widen(b, loc, b.create<vector::LoadOp>(loc, svt, x.b.mem, x.b.at(at(krow, addc(col0, n0 + l)))),
                            elem, x.elements));
        transposeVectors(b, loc, r);
        for (int64_t l = 0; l < V; ++l)
          b.create<vector::StoreOp>(loc, r[l], packB, ValueRange{dstAt(addc(k0, l), n0)});
      }
    });
  }
  // Element by element: the K remainder of the whole vectors, then the
  // columns past them for every k.
  auto lanes = [&](Value k, int64_t n0, int64_t w) {
    b.create<vector::StoreOp>(loc, loadVec(x.b, at(add(pc, k), addc(col0, n0)), w), packB,
                              ValueRange{dstAt(k, n0)});
  };
  forLoop(b, loc, kMain, kc, c(1), [&](Value k) {
    for (int64_t n0 = 0; n0 < wFull; n0 += V) lanes(k, n0, V);
  });
  if (wFull < width)
    forLoop(b, loc, c(0), kc, c(1), [&](Value k) { lanes(k, wFull, width - wFull); });
}

/// The whole KC x NC panel (when a group has several A blocks): sliver t
/// holds B[pc+k, jc+t*NR : +NR] at t*KC*NR + k*NR.  Rows of B are read
/// contiguously (k outer); the remainder sliver is zero-padded.
void MatmulEmitter::packPanel() {
  if (!g::isRowMajor(x.b.type)) {
    auto packT = [&](Value t, int64_t width) { packBTransposed(mul(divc(t, NR), kcMax * NR), add(jc, t), width); };
    forLoop(b, loc, c(0), ncvFull, c(NR), [&](Value t) { packT(t, NR); });
    if (nrem) {
      auto has = b.create<scf::IfOp>(loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, ncv, ncvFull), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&has.getThenRegion().front());
      packT(ncvFull, nrem);
    }
    return;
  }
  forLoop(b, loc, c(0), kc, c(1), [&](Value k) {
    Value krow = add(pc, k), dk = mul(k, NR);
    auto packCols = [&](Value t, int64_t width) {
      Value dst = add(mul(divc(t, NR), kcMax * NR), dk);
      for (int64_t j = 0; j * V < width; ++j) {
        Value v = loadVec(x.b, at(krow, addc(add(jc, t), j * V)), std::min(V, width - j * V));
        b.create<vector::StoreOp>(loc, v, packB, ValueRange{addc(dst, j * V)});
      }
    };
    forLoop(b, loc, c(0), ncvFull, c(NR), [&](Value t) { packCols(t, NR); });
    if (nrem) {
      auto has = b.create<scf::IfOp>(loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, ncv, ncvFull), false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&has.getThenRegion().front());
      packCols(ncvFull, nrem);
    }
  });
}

/// Sliver s of the A block holds rows ic+s*MR .. +MR at s*KC*MR + k*MR + r,
/// widened to the accumulator type; rows past the end read as zero.
///
/// A row-major A is moved by V x V blocks through registers: V consecutive
/// k of up to V rows of the sliver (the rest zero), transposed
/// (RegisterTranspose.h), then for each k its rows stored with one masked
/// store.  Element by element LLVM turned this loop into a scatter per row
/// vector (vscatterqps, ~11 cycles per 8 lanes): 3% of a 2048^3 GEMM's
/// samples on AVX-512, as much as packing B eight times over.  The K
/// remainder, and A in other layouts, stay element by element.
void MatmulEmitter::packA() {
  Type elem = x.a.type.getElementType();
  Value zero = splatConstant(b, loc, accElem, 0);
  Value zeroVec = splatConstant(b, loc, accVec, 0);
  Value lastRow = b.create<arith::SubIOp>(loc, mRows, c(1));
  Value nSlivers = divc(addc(mc, MR - 1), MR);
  const bool blocks = g::isRowMajor(x.a.type);
  auto svt = VectorType::get({V}, storageType(elem));
  forLoop(b, loc, c(0), nSlivers, c(1), [&](Value s) {
    Value sBase = mul(s, kcMax * MR);
    SmallVector<Value> valid, clamped;
    for (int64_t r = 0; r < MR; ++r) {
      Value row = add(ic, addc(mul(s, MR), r));
      valid.push_back(b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, row, mRows));
      clamped.push_back(b.create<arith::MinSIOp>(loc, row, lastRow));
    }
    Value kMain = c(0);
    if (blocks) {
      kMain = b.create<arith::SubIOp>(loc, kc, b.create<arith::RemUIOp>(loc, kc, c(V)));
      forLoop(b, loc, c(0), kMain, c(V), [&](Value k0) {
        Value col = add(pc, k0);
        for (int64_t r0 = 0; r0 < MR; r0 += V) {
          const int64_t w = std::min(V, MR - r0);
          SmallVector<Value> rows;
          for (int64_t r = r0; r < r0 + V; ++r) {
            if (r >= r0 + w) {
              rows.push_back(zeroVec);
              continue;
            }
            Value v = widen(b, loc, b.create<vector::LoadOp>(loc, svt, x.a.mem, x.a.at(at(clamped[r], col))),
                            elem, x.elements);
            rows.push_back(b.create<arith::SelectOp>(loc, valid[r], v, zeroVec));
          }
          transposeVectors(b, loc, rows);
          auto mask = b.create<vector::ConstantMaskOp>(loc, VectorType::get({V}, b.getI1Type()),
                                                       b.getI64ArrayAttr({w}));
          for (int64_t l = 0; l < V; ++l) {
            Value dst = addc(add(sBase, mul(addc(k0, l), MR)), r0);
            if (w == V)
              b.create<vector::StoreOp>(loc, rows[l], x.packA, ValueRange{dst});
            else
              b.create<vector::MaskedStoreOp>(loc, x.packA, ValueRange{dst}, mask, rows[l]);
          }
        }
      });
    }
    // k outer: each k writes MR contiguous values.
    forLoop(b, loc, kMain, kc, c(1), [&](Value k) {
      Value dst = add(sBase, mul(k, MR)), col = add(pc, k);
      for (int64_t r = 0; r < MR; ++r) {
        Value v = b.create<memref::LoadOp>(loc, x.a.mem, x.a.at(at(clamped[r], col)));
        v = widen(b, loc, v, elem, x.elements);
        v = b.create<arith::SelectOp>(loc, valid[r], v, zero);
        b.create<memref::StoreOp>(loc, v, x.packA, ValueRange{addc(dst, r)});
      }
    });
  });
}

/// B[pc.., jcol..] (kc x width) into the sliver at bBase of packB.
void MatmulEmitter::packSliver(Value bBase, Value jcol, int64_t width) {
  if (!g::isRowMajor(x.b.type)) {
    packBTransposed(bBase, jcol, width);
    return;
  }
  // A shared sliver's rows were prefetched by the micro-kernel only if it
  // guessed right that this group packs it (tile(): the next sliver's
  // state word), and only with many tiles per sliver: each row fetches the
  // lines of the row kPackAhead below.
  constexpr int64_t kPackAhead = 32;
  const int64_t bytes = storageType(x.b.type.getElementType()).getIntOrFloatBitWidth() / 8;
  const int64_t lineCols = std::max<int64_t>(1, 64 / bytes);
  forLoop(b, loc, c(0), kc, c(1), [&](Value k) {
    Value krow = add(pc, k);
    if (x.shared) {
      Value ahead = b.create<arith::MinSIOp>(loc, addc(krow, kPackAhead), c(K - 1));
      for (int64_t col = 0; col < width; col += lineCols)
        b.create<memref::PrefetchOp>(loc, x.b.mem, x.b.at(at(ahead, addc(jcol, col))),
                                     /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
    }
    for (int64_t j = 0; j * V < width; ++j) {
      Value v = loadVec(x.b, at(krow, addc(jcol, j * V)), std::min(V, width - j * V));
      b.create<vector::StoreOp>(loc, v, packB, ValueRange{add(bBase, addc(mul(k, NR), j * V))});
    }
  });
}

/// The shared sliver at jr of this panel, packed.  Each group adds 1 to
/// the sliver's state word: the one that found 0 packs it and then adds
/// kPacked; the others wait until the word reaches kPacked (the packer is
/// running: one group runs on one thread from start to end, and packing
/// waits for nothing).  The atomics are acq_rel, so the packed values are
/// visible to whoever reads kPacked.  (Adds only: memref.atomic_rmw; LLVM
/// 16's memref.generic_atomic_rmw lowering leaves the op behind.)  Returns
/// the sliver's offset in the shared buffer.
Value MatmulEmitter::claimSharedSliver(Value jr, int64_t width) {
  const SharedBLayout &l = x.shared->layout;
  Value s = add(mul(add(mul(divc(jc, l.nc), l.panelsK), divc(pc, l.kcMax)), l.slivers), divc(jr, NR));
  Value slot = addc(s, l.flagBase);
  Value bBase = addc(mul(s, l.kcMax * NR), l.dataBase);
  auto i32 = [&](int64_t v) { return b.create<arith::ConstantIntOp>(loc, v, 32).getResult(); };
  Value before =
      b.create<memref::AtomicRMWOp>(loc, arith::AtomicRMWKind::addi, i32(1), x.shared->flags, ValueRange{slot});
  Value mine = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, before, i32(0));
  auto ifOp = b.create<scf::IfOp>(loc, mine, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    packSliver(bBase, add(jc, jr), width);
    b.create<memref::AtomicRMWOp>(loc, arith::AtomicRMWKind::addi, i32(kPacked), x.shared->flags, ValueRange{slot});
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    auto wait = b.create<scf::WhileOp>(loc, TypeRange{}, ValueRange{});
    b.createBlock(&wait.getBefore());
    Value now = b.create<memref::AtomicRMWOp>(loc, arith::AtomicRMWKind::ori, i32(0), x.shared->flags, ValueRange{slot});
    b.create<scf::ConditionOp>(loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, now, i32(kPacked)),
                               ValueRange{});
    b.createBlock(&wait.getAfter());
    b.create<scf::YieldOp>(loc);
  }
  // The next sliver in the buffer (what this group most likely reads next;
  // the last word counts finished groups, so slot + 1 is always a word).
  Value next = b.create<memref::AtomicRMWOp>(loc, arith::AtomicRMWKind::ori, i32(0), x.shared->flags,
                                             ValueRange{addc(slot, 1)});
  nextPacked = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, next, i32(kPacked));
  return bBase;
}

/// One NR-column sliver at jr (`width` = NR, or the static remainder).
void MatmulEmitter::sliver(Value jr, int64_t width) {
  Value jcol = add(jc, jr);
  Value bBase = c(0);
  if (x.shared) {
    bBase = claimSharedSliver(jr, width);
  } else if (panel) {
    bBase = mul(divc(jr, NR), kcMax * NR);
  } else {
    // Pack this KC x NR sliver of B right before its micro-kernels: it
    // stays in L1 for all of them.
    packSliver(bBase, jcol, width);
  }
  // Full tiles, then the remainder rows (mc % MR) with a smaller register
  // tile: one variant per remainder this kernel can see.
  Value mcFull = b.create<arith::SubIOp>(loc, mc, b.create<arith::RemUIOp>(loc, mc, c(MR)));
  forLoop(b, loc, c(0), mcFull, c(MR), [&](Value ir) { tile(jr, bBase, ir, MR, width); });
  for (int64_t rem : remainders) {
    Value is = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                       b.create<arith::SubIOp>(loc, mc, mcFull), c(rem));
    auto ifOp = b.create<scf::IfOp>(loc, is, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    tile(jr, bBase, mcFull, rem, width);
  }
}

/// The epilogue on one accumulator vector at logical (row, col): each op
/// computes in its compute type and rounds to its result type, as the
/// unfused program would (the last rounding is the store's).
FailureOr<Value> MatmulEmitter::applyEpilogue(Value v, Value row, Value col, int64_t lanes) {
  if (epilogue.ops.empty()) return v;
  LeafLoader load = [&](Value leaf, ArrayRef<Value> idx, int64_t w) -> Value {
    TensorAccess t = x.operand(leaf);
    if (t.type.getRank() == 0 || w == 1)  // a scalar, splat by the caller
      return widen(b, loc, b.create<memref::LoadOp>(loc, t.mem, t.at(t.type.getRank() ? idx : ArrayRef<Value>{})),
                   t.type.getElementType(), x.elements);
    return loadVec(t, idx, lanes);
  };
  // The group's first row (dim 0 of C), for what keys on the element's
  // index in the whole tensor (a stochastic cast's random bits).
  return emitFusedTree(b, loc, epilogue, at(row, col), V, v, load, x.elements, x.c.row0);
}

/// One mr x width register tile at rows ic+ir.., columns jc+jr...
void MatmulEmitter::tile(Value jr, Value bBase, Value ir, int64_t mr, int64_t width) {
  int64_t nvT = (width + V - 1) / V;
  auto lanesOf = [&](int64_t j) { return std::min(V, width - j * V); };
  Value jcol = add(jc, jr);
  Value aBase = mul(divc(ir, MR), kcMax * MR);
  bool isFloat = accElem.isa<FloatType>();
  auto kStep = [&](Value k, SmallVector<Value> &acc) {
    Value bo = add(bBase, mul(k, NR)), ao = add(aBase, mul(k, MR));
    SmallVector<Value> bv;
    for (int64_t j = 0; j < nvT; ++j)
      bv.push_back(b.create<vector::LoadOp>(loc, accVec, packB, ValueRange{addc(bo, j * V)}));
    for (int64_t r = 0; r < mr; ++r) {
      Value a = b.create<memref::LoadOp>(loc, x.packA, ValueRange{addc(ao, r)});
      Value ab = b.create<vector::BroadcastOp>(loc, accVec, a);
      for (int64_t j = 0; j < nvT; ++j) {
        Value &s = acc[r * nvT + j];
        s = isFloat ? b.create<vector::FMAOp>(loc, ab, bv[j], s).getResult()
                    : b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, ab, bv[j]), s).getResult();
      }
    }
  };
  // Prefetches are issued from the k loop, a few per trip, never in a
  // burst: 26 back-to-back prefetches (a 12 x 32 tile's B rows) filled the
  // line fill buffers and stalled, 8% of a 2048^3 GEMM's kernel samples;
  // the C tile's 24 line prefetches before the loop cost another 4%.
  // Every cache line of a row segment is prefetched (a 32-column f32
  // sliver's rows are two lines).
  auto lineStarts = [&](const TensorAccess &t) {
    int64_t bytes = storageType(t.type.getElementType()).getIntOrFloatBitWidth() / 8;
    SmallVector<int64_t> cols;
    for (int64_t col = 0; col < width; col += std::max<int64_t>(1, 64 / bytes)) cols.push_back(col);
    return cols;
  };
  // B: the rows that are packed next, prefetchRows per tile, spread over
  // the sliver's tiles, so they come from L2 when packed.  With a panel
  // that is the next K slice of this sliver's columns (packPanel reads
  // them at the slice's start).  Packed sliver by sliver, it is the next
  // sliver (after the block's last sliver: the first of the next K slice):
  // 32 KiB a sliver's tiles later, not 2 MiB of other slivers later (the
  // next K slice of the same columns did not survive in L2: packing was 6%
  // of a 2048^3 GEMM's kernel samples, the load of every row a miss).
  // (A transposed B's next rows are not row segments: not prefetched.)
  // Shared (x.shared): the next sliver in the buffer, whose state word
  // claimSharedSliver read.  Packed already (by another group: in L3 or
  // memory), the same rows of it are prefetched; else its rows of B, which
  // this group will most likely pack.  Either, read cold, made the shared
  // GEMM slower than packing per group.  A sliver row of NR accumulator
  // values is NR / 16 lines.
  const SmallVector<int64_t> bCols = lineStarts(x.b);
  const int64_t nLines = static_cast<int64_t>(bCols.size());
  const int64_t packedLines = std::max<int64_t>(1, NR * 4 / 64);
  const int64_t slots = g::isRowMajor(x.b.type) ? prefetchRows * nLines
                        : x.shared               ? prefetchRows * packedLines
                                                 : 0;
  const int64_t trips = std::max<int64_t>(1, kcMax / kUnroll);
  const int64_t perTrip = (slots + trips - 1) / trips;
  Value rowBase = addc(pc, kcMax), colBase = jcol;
  if (!panel || x.shared) {
    Value nextCol = addc(jcol, width);
    Value nextSlice = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, nextCol, add(jc, ncv));
    rowBase = b.create<arith::SelectOp>(loc, nextSlice, rowBase, pc);
    colBase = b.create<arith::SelectOp>(loc, nextSlice, jc, nextCol);
  }
  Value nextRow = add(rowBase, mul(divc(ir, MR), prefetchRows));
  // Slot `slot` (dynamic) of this tile: row nextRow + slot / nLines (the
  // last of its rows for slots past the end, and never past K), line
  // slot % nLines (never past N: the last sliver may be narrower).
  Value sharedEnd = x.shared ? c(x.shared->data.getType().cast<MemRefType>().getNumElements() - 1) : Value();
  auto prefetchPacked = [&](Value slot) {
    Value rowInTile = b.create<arith::MinSIOp>(loc, divc(slot, packedLines), c(prefetchRows - 1));
    Value row = b.create<arith::MinSIOp>(loc, add(mul(divc(ir, MR), prefetchRows), rowInTile), c(kcMax - 1));
    Value line = b.create<arith::RemUIOp>(loc, slot, c(packedLines));
    Value at = add(addc(bBase, kcMax * NR), add(mul(row, NR), mul(line, 16)));
    b.create<memref::PrefetchOp>(loc, packB, ValueRange{b.create<arith::MinSIOp>(loc, at, sharedEnd)},
                                 /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
  };
  auto prefetchSlot = [&](Value slot) {
    if (x.shared && !g::isRowMajor(x.b.type)) return prefetchPacked(slot);
    std::optional<OpBuilder::InsertionGuard> guard;
    if (x.shared) {
      auto ifOp = b.create<scf::IfOp>(loc, nextPacked, /*withElseRegion=*/true);
      guard.emplace(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      // Row-major B: slots counts its lines per row; the packed sliver's
      // rows have as many or fewer (clamped to the last row).
      prefetchPacked(slot);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    }
    Value rowInTile = b.create<arith::MinSIOp>(loc, divc(slot, nLines), c(prefetchRows - 1));
    Value krow = b.create<arith::MinSIOp>(loc, add(nextRow, rowInTile), c(K - 1));
    Value line = b.create<arith::RemUIOp>(loc, slot, c(nLines));
    Value col = b.create<arith::MinSIOp>(loc, add(colBase, mul(line, nLines > 1 ? bCols[1] : 0)), c(N - 1));
    b.create<memref::PrefetchOp>(loc, x.b.mem, x.b.at(at(krow, col)),
                                 /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
  };
  // C: the tile is read (earlier K slices' sums) and written after the k
  // loop; its rows are prefetched one per trip over the loop's last mr
  // trips (earlier trips repeat the first row, an L1 hit), so the lines
  // are still in L1 when the loop ends.
  Value lastRowC = b.create<arith::SubIOp>(loc, mRows, c(1));
  const SmallVector<int64_t> cCols = lineStarts(x.c);
  auto prefetchC = [&](Value trip) {
    Value r = b.create<arith::MinSIOp>(loc, trip, c(mr - 1));
    Value prow = b.create<arith::MinSIOp>(loc, add(addc(add(ic, ir), mr), r), lastRowC);
    for (int64_t col : cCols)
      b.create<memref::PrefetchOp>(loc, x.c.mem, x.c.at(at(prow, addc(jcol, col))),
                                   /*isWrite=*/true, /*localityHint=*/3, /*isDataCache=*/true);
  };
  // k loop: kUnroll steps per trip, then the remainder.
  Value kMain = b.create<arith::SubIOp>(loc, kc, b.create<arith::RemUIOp>(loc, kc, c(kUnroll)));
  SmallVector<Value> init(mr * nvT, splatConstant(b, loc, accVec, 0));
  auto main = b.create<scf::ForOp>(loc, c(0), kMain, c(kUnroll), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(main.getBody());
    SmallVector<Value> acc(main.getRegionIterArgs());
    Value trip = divc(main.getInductionVar(), kUnroll);
    for (int64_t u = 0; u < kUnroll; ++u) {
      if (u == 0) prefetchC(trip);
      if (u < perTrip) prefetchSlot(addc(mul(trip, perTrip), u));
      kStep(addc(main.getInductionVar(), u), acc);
    }
    for (int64_t q = kUnroll; q < perTrip; ++q) prefetchSlot(addc(mul(trip, perTrip), q));
    b.create<scf::YieldOp>(loc, acc);
  }
  auto rest = b.create<scf::ForOp>(loc, kMain, kc, c(1), main.getResults());
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
    for (int64_t j = 0; j < nvT; ++j) {
      Value col = addc(jcol, j * V);
      int64_t lanes = lanesOf(j);
      Value v = rest.getResult(r * nvT + j);
      SmallVector<Value> scratchIdx{lrow, addc(jr, j * V)};
      if (!singleSlice) {
        // Accumulate the earlier K slices (not on the first).
        auto accIf = b.create<scf::IfOp>(loc, TypeRange{accVec}, first, true);
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&accIf.getThenRegion().front());
        b.create<scf::YieldOp>(loc, v);
        b.setInsertionPointToStart(&accIf.getElseRegion().front());
        Value old = accInC ? loadVec(x.c, at(lrow, col), lanes)
                           : b.create<vector::LoadOp>(loc, accVec, cAcc, scratchIdx).getResult();
        Value sum = isFloat ? b.create<arith::AddFOp>(loc, v, old).getResult()
                            : b.create<arith::AddIOp>(loc, v, old).getResult();
        b.create<scf::YieldOp>(loc, sum);
        b.setInsertionPointAfter(accIf);
        v = accIf.getResult(0);
      }
      FailureOr<Value> e = applyEpilogue(v, lrow, col, lanes);
      assert(succeeded(e) && "emit() checked the epilogue ops");
      if (singleSlice) {
        storeVec(x.c, at(lrow, col), *e, lanes);
      } else if (accInC) {
        // C holds the accumulator type: partial sums go through it, the
        // epilogue applies after the last slice.
        Value out = epilogue.ops.empty() ? v : b.create<arith::SelectOp>(loc, last, *e, v).getResult();
        storeVec(x.c, at(lrow, col), out, lanes);
      } else {
        // A narrower (or other) result type: partial sums stay in the
        // accumulator scratch and C is written once, from the full sum;
        // rounding every K slice to, say, bf16 would lose the low bits of
        // the sum KC by KC.
        auto lastIf = b.create<scf::IfOp>(loc, last, true);
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&lastIf.getThenRegion().front());
        storeVec(x.c, at(lrow, col), *e, lanes);
        b.setInsertionPointToStart(&lastIf.getElseRegion().front());
        b.create<vector::StoreOp>(loc, v, cAcc, scratchIdx);
      }
    }
  }
}

LogicalResult MatmulEmitter::emit() {
  auto at_ = x.a.type, bt = x.b.type, ct = x.c.type;
  // A and B in any layout are read element by element while packing (the
  // transposed views of ScheduleToCPU are col_major); C is stored in vectors.
  if (!g::isRowMajor(ct))
    return mm.emitError("cpu backend: a matmul result must be row-major (insert convert_layout)");
  if (epilogue.root != mm.getResult())
    return mm.emitError("cpu backend: the fused epilogue does not consume this matmul");

  rank = at_.getRank();
  M = at_.getDimSize(rank - 2);
  K = at_.getDimSize(rank - 1);
  N = bt.getDimSize(rank - 1);
  MC = x.MC; NC = x.NC; KC = x.KC; MR = x.MR; NR = x.NR;
  accElem = computeType(at_.getElementType());
  accVec = VectorType::get({V}, accElem);
  nv = NR / V;
  nc = (std::min(NC, N) + NR - 1) / NR * NR;
  nrem = N % NR;
  kcMax = std::min(KC, K);
  singleSlice = K <= kcMax;
  accInC = ct.getElementType() == accElem;
  packB = x.shared ? x.shared->data : x.packB;
  if (x.shared && (x.shared->layout.nc != nc || x.shared->layout.kcMax != kcMax ||
                   x.shared->layout.slivers * NR != nc))
    return mm.emitError("cpu backend: internal: the shared B layout does not match the matmul's tiles");

  SmallVector<int64_t> rowCounts{M};
  if (rank == 2) rowCounts.assign(x.dim0Counts.begin(), x.dim0Counts.end());
  maxRows = *std::max_element(rowCounts.begin(), rowCounts.end());
  // One A block per group (the usual case: groups own <= MC rows): B is
  // packed sliver by sliver into L1; else the KC x NC panel is packed once
  // per K slice and shared by the A blocks.
  panel = maxRows > MC;
  int64_t tilesPerSliver = std::max<int64_t>(1, std::min(MC, maxRows) / MR);
  prefetchRows = (kcMax + std::max<int64_t>(1, tilesPerSliver - 1) - 1) /
                 std::max<int64_t>(1, tilesPerSliver - 1);
  // Row counts mc of an A block this kernel can see -> remainders mod MR.
  for (int64_t m : rowCounts)
    for (int64_t mcv : {m >= MC ? MC : int64_t(0), m % MC})
      if (mcv % MR && !llvm::is_contained(remainders, mcv % MR)) remainders.push_back(mcv % MR);

  if (!accInC && !singleSlice) {
    cAcc = b.create<memref::AllocOp>(loc, MemRefType::get({maxRows, nc}, accElem), b.getI64IntegerAttr(64));
    allocs.push_back(cAcc);
  }
  SmallVector<Value> batchExtents;
  for (int64_t d = 0; d + 2 < rank; ++d) batchExtents.push_back(d == 0 ? x.dim0 : c(at_.getDimSize(d)));
  forNest(b, loc, batchExtents, [&](ArrayRef<Value> batch) {
    prefix.assign(batch.begin(), batch.end());
    mRows = rank == 2 ? x.dim0 : c(M);
    forLoop(b, loc, c(0), c(N), c(nc), [&](Value jcv) {
      jc = jcv;
      ncv = minI(nc, c(N), jc);
      ncvFull = nrem ? b.create<arith::SubIOp>(loc, ncv, b.create<arith::RemUIOp>(loc, ncv, c(NR))).getResult() : ncv;
      forLoop(b, loc, c(0), c(K), c(kcMax), [&](Value pcv) {
        pc = pcv;
        kc = minI(kcMax, c(K), pc);
        first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, pc, c(0));
        last = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, add(pc, kc), c(K));
        if (panel && !x.shared) packPanel();
        forLoop(b, loc, c(0), mRows, c(MC), [&](Value icv) {
          ic = icv;
          mc = minI(MC, mRows, ic);
          packA();
          if (x.shared) {
            // Group g starts at sliver bitreverse3(g) / 8 of the panel, so
            // groups that run at once (the first 2 on 2 workers: halves;
            // 4: quarters) pack different slivers and meet only where the
            // other has already packed.
            Value g = x.shared->groupId;
            auto bit = [&](int64_t mask) { return b.create<arith::AndIOp>(loc, g, c(mask)).getResult(); };
            Value rev = add(add(mul(bit(1), 4), bit(2)), divc(bit(4), 4));
            Value n = divc(ncvFull, NR);
            Value start = divc(b.create<arith::MulIOp>(loc, rev, n), 8);
            Value nz = b.create<arith::MaxUIOp>(loc, n, c(1));
            forLoop(b, loc, c(0), n, c(1), [&](Value i) {
              sliver(mul(b.create<arith::RemUIOp>(loc, add(i, start), nz), NR), NR);
            });
          } else {
            forLoop(b, loc, c(0), ncvFull, c(NR), [&](Value jr) { sliver(jr, NR); });
          }
          if (nrem) {
            auto has = b.create<scf::IfOp>(loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, ncv, ncvFull), false);
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(&has.getThenRegion().front());
            sliver(ncvFull, nrem);
          }
        });
      });
    });
  });
  return success();
}

}  // namespace

std::pair<int64_t, int64_t> packBufferSizes(g::MatmulOp mm, int64_t MC, int64_t NC, int64_t KC,
                                            int64_t MR, int64_t NR) {
  auto at = mm.getLhs().getType().cast<RankedTensorType>();
  auto bt = mm.getRhs().getType().cast<RankedTensorType>();
  int64_t K = at.getShape().back(), N = bt.getShape().back();
  int64_t kc = std::min(KC, K);
  int64_t nc = (std::min(NC, N) + NR - 1) / NR * NR;
  return {(MC / MR + 1) * kc * MR, nc * kc};
}

LogicalResult lowerMatmul(OpBuilder &b, g::MatmulOp mm, const FusedTree &epilogue,
                          const MatmulAccess &access, SmallVectorImpl<Value> &allocs) {
  return MatmulEmitter(b, mm, epilogue, access, allocs).emit();
}

}  // namespace tessera::cpu
