//===- ScheduleToCPU.cpp - Graph/Schedule IR -> vectorized cpu loops ------===//
//
// A function on tensors becomes one kernel on memrefs.  When every op keeps
// rows independent (matmul lhs, elementwise, softmax and reductions along
// inner dims: the MLP; batched matmuls along the leading batch dim), each
// tile group computes one block of output rows and intermediates live in
// per-group scratch; otherwise one group computes everything.  Matmuls are
// emitted in the BLIS structure by MatmulToCPU.cpp, flash_attention ops by
// FlashAttentionToCPU.cpp (row-local in their queries); the other Graph
// ops become loops here.  Every element type is stored in its storage type
// and computed in f32 or i32 (ElementTypes.h).
//
//===----------------------------------------------------------------------===//
#include "tessera/cpu/Passes.h"

#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Conversion/ShapeLimits.h"
#include "tessera/Conversion/ShapeOps.h"
#include "FlashAttentionToCPU.h"
#include "LoopBuilder.h"
#include "MatmulToCPU.h"
#include "RowOpsToCPU.h"

#include <algorithm>
#include <optional>

#include "llvm/ADT/SetVector.h"
#include <cstdlib>
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Graph/Transforms/RowLocality.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_SCHEDULETOCPU
#include "tessera/cpu/Passes.h.inc"
}  // namespace tessera::cpu

using namespace mlir;
using namespace tessera;
using namespace tessera::cpu;
namespace g = tessera::graph;

namespace {

constexpr int64_t kVec = 8;  // 32-bit lanes of an AVX2 register

/// Where a tensor value lives in the kernel.
struct Buf {
  Value mem;
  RankedTensorType type;
  bool row = false;   // a block of rows starting at `row0` of the full tensor
  Value row0;         // added to dim 0 when `row` (null: 0)
  g::LayoutAttr layout;  // non-row-major: `mem` is flat
};

class KernelBuilder {
 public:
  KernelBuilder(func::FuncOp src, OpBuilder &b, ElementOptions elements, int64_t matmulLanes)
      : src(src), b(b), loc(src.getLoc()), elements(elements), matmulLanes(matmulLanes) {}

  LogicalResult run();

 private:
  func::FuncOp src;
  OpBuilder &b;
  Location loc;
  ElementOptions elements;
  // The widest vector the matmul micro-kernel may use (8 or 16 lanes);
  // a tile whose NR is not a multiple of it uses 8.
  int64_t matmulLanes;
  DenseMap<Value, Buf> bufs;
  DenseSet<Value> rowValues;
  bool parallel = false;
  int64_t rowsTotal = 0, rowBlock = 0;
  Value rows;  // rows this group owns (index)
  Value rowStart;  // the first of them
  Value groupId;   // this group (index)
  DenseMap<Type, std::pair<Value, Value>> packs;  // accumulator type -> packed A, B
  // Matmuls whose B every group reads whole (a weight): packed once into
  // the kernel's scratch buffer and shared (MatmulAccess::SharedB).
  DenseMap<Operation *, SharedBLayout> sharedB;
  int64_t sharedSlots = 0;  // state words of all of them; one more counts finished groups
  Value sharedFlags;        // memref<(sharedSlots + 1) x i32>
  SmallVector<Type> sharedAccTypes;  // their accumulator types, in program order
  DenseMap<Type, Value> sharedData;  // accumulator type -> memref<? x acc>
  int64_t scratchBytes = 0;
  void planSharedB(int64_t grid);
  void resetSharedB(Value gridX, Value gridY, Value gridZ);
  int64_t MC = 144, NC = 4096, KC = 256, MR = 6, NR = 16;
  int64_t vectorWidth = kVec;  // V of the tile being lowered (row tiles)
  SmallVector<Value> allocs;

  LogicalResult analyzeRows();
  Buf makeBuf(Value v);
  std::optional<Buf> transposeView(g::TransposeOp t);
  bool wholeInMemory(Value v);
  Value load(const Buf &buf, ArrayRef<Value> idx);  // widened to the compute type
  void store(const Buf &buf, ArrayRef<Value> idx, Value v);  // rounded to the storage type
  Value loadRaw(const Buf &buf, ArrayRef<Value> idx);
  void copyElement(const Buf &dst, ArrayRef<Value> di, const Buf &src, ArrayRef<Value> si);
  void storeRaw(const Buf &buf, ArrayRef<Value> idx, Value v);
  TensorAccess access(const Buf &buf);
  SmallVector<Value> memIndices(const Buf &buf, ArrayRef<Value> idx);
  SmallVector<Value> extents(const Buf &buf);
  LogicalResult lowerMatmul(g::MatmulOp mm, const FusedTree &epilogue,
                            const Buf &A, const Buf &B, const Buf &C,
                            DenseMap<Value, Buf> &local);
  LogicalResult lowerGroup(const FusedTree &tree, const Buf &out, DenseMap<Value, Buf> &local);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerTile(schedule::TileOp tile);
  LogicalResult lowerFlashAttention(schedule::FlashAttentionOp fa);
  LogicalResult lowerFlashAttentionGrad(schedule::FlashAttentionGradOp fg);
};

using g::isSplatConstant;
int64_t rankOf(Value v) { return v.getType().cast<ShapedType>().getRank(); }

/// Rows are independent when every op maps row i of its row operands to row
/// i of its result; weights (matmul rhs, broadcast operands) must be inputs
/// (the rules: graph::analyzeRowLocality, shared with the program
/// compiler's cut into row stages).
LogicalResult KernelBuilder::analyzeRows() {
  auto results = src.getFunctionType().getResults();
  if (results.empty()) return src.emitError("a Graph IR program must return a tensor");
  if (!results[0].isa<RankedTensorType>()) return src.emitError("a Graph IR program must return tensors");
  g::RowLocality rl = g::analyzeRowLocality(src);
  rowsTotal = rl.rows;
  parallel = rl.local;
  rowValues = std::move(rl.rowValues);
  return success();
}

SmallVector<Value> KernelBuilder::memIndices(const Buf &buf, ArrayRef<Value> idx) {
  if (buf.layout && !buf.layout.isRowMajor()) {
    // Flat physical storage: offset of (i, j) in the innermost two dims.
    auto shape = buf.type.getShape();
    int64_t M = shape[shape.size() - 2], N = shape.back();
    auto c = [&](int64_t v) { return cIdx(b, loc, v); };
    auto mul = [&](Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y).getResult(); };
    auto add = [&](Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y).getResult(); };
    // A group's rows of a whole tensor (a transposed view, transposeView)
    // start at row0: dim 0 is i for a matrix, the batch index otherwise.
    SmallVector<Value> at(idx.begin(), idx.end());
    if (buf.row && buf.row0) at[0] = add(at[0], buf.row0);
    Value i = at[at.size() - 2], j = at.back();
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
    for (size_t d = 0; d + 2 < at.size(); ++d) lead = add(mul(lead, c(shape[d])), at[d]);
    return {add(mul(lead, c(M * N)), off)};
  }
  SmallVector<Value> out(idx.begin(), idx.end());
  if (buf.row && buf.row0) out[0] = b.create<arith::AddIOp>(loc, out[0], buf.row0);
  return out;
}

Value KernelBuilder::loadRaw(const Buf &buf, ArrayRef<Value> idx) {
  return b.create<memref::LoadOp>(loc, buf.mem, memIndices(buf, idx));
}
void KernelBuilder::storeRaw(const Buf &buf, ArrayRef<Value> idx, Value v) {
  b.create<memref::StoreOp>(loc, v, buf.mem, memIndices(buf, idx));
}
/// One stored element from `src` to `dst` unchanged. bf16 goes through
/// f32 (exact both ways): LLVM 16's x86 back end recurses without end on a
/// bare bf16 load + store (no legal bf16 type), which crashed the compiler.
void KernelBuilder::copyElement(const Buf &dst, ArrayRef<Value> di, const Buf &src, ArrayRef<Value> si) {
  if (src.type.getElementType().isBF16()) return store(dst, di, load(src, si));
  storeRaw(dst, di, loadRaw(src, si));
}

Value KernelBuilder::load(const Buf &buf, ArrayRef<Value> idx) {
  return widen(b, loc, loadRaw(buf, idx), buf.type.getElementType(), elements);
}
void KernelBuilder::store(const Buf &buf, ArrayRef<Value> idx, Value v) {
  storeRaw(buf, idx, narrow(b, loc, v, buf.type.getElementType(), elements));
}

TensorAccess KernelBuilder::access(const Buf &buf) {
  TensorAccess t;
  t.mem = buf.mem;
  t.type = buf.type;
  t.at = [this, buf](ArrayRef<Value> idx) { return memIndices(buf, idx); };
  if (buf.row) t.row0 = buf.row0;
  return t;
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
  auto mt = MemRefType::get(shape, storageType(t.getElementType()));
  buf.mem = b.create<memref::AllocOp>(loc, mt, b.getI64IntegerAttr(64));
  allocs.push_back(buf.mem);
  return buf;
}

/// Whether v's buffer holds the whole tensor: arguments do even when a group
/// reads them as rows; a computed value does unless it is a group's block
/// of rows (per-group scratch).
bool KernelBuilder::wholeInMemory(Value v) {
  return !bufs[v].row || (v.isa<BlockArgument>() && v.getParentBlock() == &src.front());
}

/// A transpose read only by matmuls (graph::isMatmulOperandTranspose) as a
/// view of its operand's memory: the col_major tensor of the swapped shape,
/// so MatmulToCPU packs it straight from its operand (the gradient's X^T
/// and W^T are never stored). None when the operand's buffer is not the
/// whole tensor (a group's scratch rows): the transpose is then copied.
std::optional<Buf> KernelBuilder::transposeView(g::TransposeOp t) {
  Value in = t.getInput();
  if (!wholeInMemory(in)) return std::nullopt;
  const Buf &operand = bufs[in];
  auto type = t.getType().cast<RankedTensorType>();
  Buf v;
  v.layout = g::LayoutAttr::get(type.getContext(), g::LayoutKind::ColMajor, {}, {}, 0);
  v.type = RankedTensorType::get(type.getShape(), type.getElementType(), v.layout);
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d) all.push_back(d);
  v.mem = b.create<memref::CollapseShapeOp>(loc, operand.mem, ArrayRef<ReassociationIndices>{all});
  v.row = parallel && rowValues.contains(t.getResult());
  v.row0 = rowStart;
  return v;
}

LogicalResult KernelBuilder::lowerMatmul(g::MatmulOp mm, const FusedTree &epilogue,
                                         const Buf &A, const Buf &B, const Buf &C,
                                         DenseMap<Value, Buf> &local) {
  MatmulAccess m;
  m.a = access(A);
  m.b = access(B);
  m.c = access(C);
  m.operand = [this, &local](Value v) { return access(local.find(v)->second); };
  // Rank 2: this group's rows of A; batched: its matrices (dim 0).
  int64_t d0 = A.type.getDimSize(0);
  m.dim0 = A.row ? rows : cIdx(b, loc, d0);
  if (A.row) {
    m.dim0Counts.push_back(std::min(rowBlock, rowsTotal));
    if (rowsTotal % rowBlock) m.dim0Counts.push_back(rowsTotal % rowBlock);
  } else {
    m.dim0Counts.push_back(d0);
  }
  std::tie(m.packA, m.packB) = packs.lookup(computeType(A.type.getElementType()));
  m.MC = MC; m.NC = NC; m.KC = KC; m.MR = MR; m.NR = NR;
  m.lanes = NR % matmulLanes == 0 ? matmulLanes : kVec;
  if (auto it = sharedB.find(mm); it != sharedB.end()) {
    m.shared = MatmulAccess::SharedB{sharedFlags, sharedData.lookup(computeType(A.type.getElementType())),
                                     it->second, groupId};
  }
  m.elements = elements;
  return cpu::lowerMatmul(b, mm, epilogue, m, allocs);
}

/// One group: the root (if any) computed by its emitter, the fused tree
/// applied before the store to `out`. Leaves are read through `local`.
LogicalResult KernelBuilder::lowerGroup(const FusedTree &tree, const Buf &out,
                                        DenseMap<Value, Buf> &local) {
  LeafAccess leaves = [this, &local](Value v) { return access(local.find(v)->second); };
  for (Value v : tree.leaves())
    if (!local.count(v)) return emitError(loc) << "cpu backend: no buffer for a fused operand";
  Operation *root = tree.root ? tree.root.getDefiningOp() : nullptr;
  if (!root)
    return lowerFusedTreeRows(b, loc, tree, access(out), leaves, extents(out), vectorWidth, elements);
  if (auto mm = dyn_cast<g::MatmulOp>(root))
    return lowerMatmul(mm, tree, local[mm.getLhs()], local[mm.getRhs()], out, local);
  if (auto sm = dyn_cast<g::SoftmaxOp>(root)) {
    Buf in = local[sm.getInput()];
    const int64_t dim = static_cast<int64_t>(sm.getDim());
    // In f32; a narrower output keeps the row's exponentials in an f32 row
    // buffer, so that the result is rounded once.
    Value rowBuf;
    if (!out.type.getElementType().isF32()) {
      rowBuf = b.create<memref::AllocOp>(
          loc, MemRefType::get({in.type.getDimSize(dim)}, b.getF32Type()), b.getI64IntegerAttr(64));
      allocs.push_back(rowBuf);
    }
    return lowerSoftmaxRows(b, loc, access(out), access(in), dim, extents(in), rowBuf, tree, leaves,
                            vectorWidth, elements);
  }
  if (isa<g::LayerNormOp, g::RmsNormOp>(root)) {
    Buf in = local[root->getOperand(0)];
    std::optional<TensorAccess> beta;
    if (root->getNumOperands() > 2) beta = access(local[root->getOperand(2)]);
    return lowerNormRows(b, root, access(out), access(in), access(local[root->getOperand(1)]), beta,
                         extents(in), tree, leaves, vectorWidth, elements);
  }
  auto red = cast<g::ReduceOp>(root);
  Buf in = local[red.getInput()];
  Value scratch;
  if (red.getOrder() == g::AssocOrder::pairwise) {
    int64_t n = 1;
    for (int64_t d : red.getDims()) n *= in.type.getDimSize(d);
    scratch = b.create<memref::AllocOp>(
        loc, MemRefType::get({n * vectorWidth}, computeType(in.type.getElementType())), b.getI64IntegerAttr(64));
    allocs.push_back(scratch);
  }
  return lowerReduceRows(b, red, access(out), access(in), extents(out), scratch, tree, leaves, vectorWidth,
                         elements);
}

LogicalResult KernelBuilder::lowerTile(schedule::TileOp tile) {
  Block &body = tile.getBody().front();
  auto yield = cast<schedule::YieldOp>(body.getTerminator());
  bool hasMatmul = !body.getOps<g::MatmulOp>().empty();
  vectorWidth = kVec;
  if (hasMatmul) {
    ArrayRef<int64_t> ts = tile.getTileSizes(), mt = tile.getMicroTile();
    MC = ts[0]; NC = ts[1]; KC = ts[2]; MR = mt[0]; NR = mt[1];
    if (NR % kVec)
      return tile.emitError() << "cpu backend: the schedule's register block is " << NR
                              << " columns wide (micro-n), not a multiple of the " << kVec
                              << " lanes of a vector: give micro-n a multiple of " << kVec;
  } else {
    vectorWidth = tile.getMicroTile()[0];
  }
  DenseMap<Value, Buf> local;
  for (auto [arg, v] : llvm::zip(tile.getBody().getArguments(), tile.getOperands()))
    local[arg] = bufs[v];
  // The values that are stored (schedule::storedValues). Each is the
  // output of one group (FusedTree) whose other values stay in registers.
  llvm::SetVector<Value> outputs;
  for (Value v : schedule::storedValues(tile)) outputs.insert(v);
  // A tree reads at most one root in registers: a second one (hand-written
  // Schedule IR, `add(matmul, matmul)`) is stored first, as a group of its
  // own. Repeat until every tree's leaves are stored.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation &op : body.without_terminator())
      for (Value r : op.getResults()) {
        if (!outputs.contains(r) && !llvm::is_contained(yield.getValues(), r)) continue;
        FusedTree tree = FusedTree::collect(r, [&](Value x) {
          return x.isa<BlockArgument>() || (outputs.contains(x) && x != r);
        });
        for (Value leaf : tree.leaves())
          if (!leaf.isa<BlockArgument>() && leaf.getParentBlock() == &body && outputs.insert(leaf))
            changed = true;
      }
  }
  auto outBuf = [&](Value v) -> Buf {
    for (auto [k, y] : llvm::enumerate(yield.getValues()))
      if (y == v) return bufs[tile.getResult(k)];
    return makeBuf(v);
  };
  auto lowerOutput = [&](Value v) -> LogicalResult {
    FusedTree tree = FusedTree::collect(v, [&](Value x) { return local.count(x) > 0; });
    Buf out = outBuf(v);
    if (failed(lowerGroup(tree, out, local))) return failure();
    local[v] = out;
    return success();
  };
  // A yielded operand is copied (a tree of one leaf).
  for (Value y : yield.getValues())
    if (y.isa<BlockArgument>() && failed(lowerOutput(y))) return failure();
  for (Operation &op : body.without_terminator())
    for (Value r : op.getResults())
      if ((outputs.contains(r) || llvm::is_contained(yield.getValues(), r)) && !local.count(r) &&
          failed(lowerOutput(r)))
        return failure();
  // Values yielded twice share the first buffer: copy it into the others.
  for (auto [k, y] : llvm::enumerate(yield.getValues())) {
    Buf dst = bufs[tile.getResult(k)];
    Buf src = local[y];
    if (src.mem != dst.mem)
      forNest(b, loc, extents(dst), [&](ArrayRef<Value> iv) { copyElement(dst, iv, src, iv); });
  }
  return success();
}

LogicalResult KernelBuilder::lowerFlashAttention(schedule::FlashAttentionOp fa) {
  Buf q = bufs[fa.getQuery()], kt = bufs[fa.getKeyT()], v = bufs[fa.getValue()];
  Buf out = bufs[fa.getResult()];
  if (out.layout && !out.layout.isRowMajor())
    return fa.emitError("cpu backend: flash_attention result must be row-major");
  const bool batched = q.type.getRank() == 3;
  if (batched && kt.layout && !kt.layout.isRowMajor())
    return fa.emitError("cpu backend: a batched flash_attention reads a row-major key_t");
  FlashAttentionAccess a;
  a.q = q.mem;
  a.kt = kt.mem;
  a.v = v.mem;
  a.out = out.mem;
  // memIndices adds the group's row offset to row buffers and applies
  // layouts; a batch element's index comes first.
  auto at = [this, batched](Buf buf) {
    return [this, buf, batched](Value h, Value i, Value j) {
      return batched ? memIndices(buf, {h, i, j}) : memIndices(buf, {i, j});
    };
  };
  a.qAt = at(q);
  a.ktAt = at(kt);
  a.vAt = at(v);
  a.outAt = at(out);
  // Single matrices are split by query rows, batches by whole matrices.
  Value dim0 = q.row ? rows : cIdx(b, loc, q.type.getDimSize(0));
  a.batch = batched ? dim0 : cIdx(b, loc, 1);
  a.rows = batched ? cIdx(b, loc, q.type.getDimSize(1)) : dim0;
  a.row0 = batched || !q.row ? cIdx(b, loc, 0) : q.row0;
  return cpu::lowerFlashAttention(b, fa, a, allocs, matmulLanes);
}

LogicalResult KernelBuilder::lowerFlashAttentionGrad(schedule::FlashAttentionGradOp fg) {
  const bool batched = rankOf(fg.getQuery()) == 3;
  SmallVector<Value> all(fg->getOperands());
  llvm::append_range(all, fg->getResults());
  for (Value v : all)
    if (Buf buf = bufs[v]; buf.layout && !buf.layout.isRowMajor())
      return fg.emitError("cpu backend: flash_attention_grad reads and writes row-major tensors");
  auto at = [this, batched](Value v) {
    Buf buf = bufs[v];
    return [this, buf, batched](Value h, Value i, Value j) {
      return batched ? memIndices(buf, {h, i, j}) : memIndices(buf, {i, j});
    };
  };
  FlashAttentionGradAccess a;
  a.q = bufs[fg.getQuery()].mem, a.qAt = at(fg.getQuery());
  a.kt = bufs[fg.getKeyT()].mem, a.ktAt = at(fg.getKeyT());
  a.v = bufs[fg.getValue()].mem, a.vAt = at(fg.getValue());
  a.out = bufs[fg.getOut()].mem, a.outAt = at(fg.getOut());
  a.dout = bufs[fg.getDout()].mem, a.doutAt = at(fg.getDout());
  a.dquery = bufs[fg.getDquery()].mem, a.dqueryAt = at(fg.getDquery());
  a.dkeyT = bufs[fg.getDkeyT()].mem, a.dkeyTAt = at(fg.getDkeyT());
  a.dvalue = bufs[fg.getDvalue()].mem, a.dvalueAt = at(fg.getDvalue());
  // Heads split over the groups; a single matrix is one group's.
  a.batch = !batched ? cIdx(b, loc, 1)
            : bufs[fg.getQuery()].row ? rows
                                      : cIdx(b, loc, fg.getQuery().getType().cast<ShapedType>().getDimSize(0));
  return cpu::lowerFlashAttentionGrad(b, fg, a, allocs, matmulLanes);
}

LogicalResult KernelBuilder::lowerOp(Operation *op) {
  if (auto tile = dyn_cast<schedule::TileOp>(op)) return lowerTile(tile);
  if (auto fa = dyn_cast<schedule::FlashAttentionOp>(op)) return lowerFlashAttention(fa);
  if (auto fg = dyn_cast<schedule::FlashAttentionGradOp>(op)) return lowerFlashAttentionGrad(fg);
  if (g::isTileRoot(op) || g::isElementwise(op)) {
    // Outside a tile: the default schedule (not the last tile's).
    vectorWidth = kVec;
    MC = 144, NC = 4096, KC = 256, MR = 6, NR = 16;
    // Outside a tile (Graph IR given to this pass directly): a group of one op.
    Value r = op->getResult(0);
    FusedTree tree = FusedTree::collect(r, [&](Value v) { return v != r; });
    return lowerGroup(tree, bufs[r], bufs);
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    // Splat tensor constants (e.g. an attention scale): fill the buffer.
    auto dense = cst.getValue().dyn_cast<DenseElementsAttr>();
    if (!dense || !dense.isSplat() || !cst.getType().isa<RankedTensorType>())
      return op->emitError("cpu backend: only splat tensor constants are supported");
    Buf out = bufs[cst.getResult()];
    Type et = out.type.getElementType();
    // The attribute holds values of the element type: exact in f32 / i32.
    Value v = splatConstant(b, loc, computeType(et),
                            et.isa<FloatType>() ? dense.getSplatValue<APFloat>().convertToDouble()
                                                : (double)dense.getSplatValue<APInt>().getSExtValue());
    v = narrow(b, loc, v, et, elements);
    forNest(b, loc, extents(out), [&](ArrayRef<Value> iv) { storeRaw(out, iv, v); });
    return success();
  }
  if (g::isShapeOp(op)) {
    // The stored bits of the element ShapeOps.h names; iota its index.
    // A group owns rows of the result: of a row-preserving op, the same
    // rows of its operands (indices relative to the block, as everywhere);
    // of an op whose operands are whole in memory (the kernel's arguments,
    // values every group computes whole: analyzeRowLocality), any of their
    // elements, found from the absolute index of the result's element.
    Buf out = bufs[op->getResult(0)];
    const bool absolute =
        out.row && llvm::all_of(op->getOperands(), [&](Value v) { return wholeInMemory(v); });
    DenseMap<Value, Buf> operands;
    for (Value v : op->getOperands()) {
      Buf buf = bufs[v];
      if (absolute) buf.row = false;  // its own indices are absolute
      operands[v] = buf;
    }
    forNest(b, loc, extents(out), [&](ArrayRef<Value> ivOut) {
      SmallVector<Value> iv(ivOut.begin(), ivOut.end());
      if (absolute) iv[0] = b.create<arith::AddIOp>(loc, iv[0], rowStart);
      auto storeOut = [&](Value v, bool widened) {
        if (widened) store(out, ivOut, v);
        else storeRaw(out, ivOut, v);
      };
      if (auto iota = dyn_cast<g::IotaOp>(op)) {
        Type elem = out.type.getElementType(), ct = computeType(elem);
        Value i = b.create<arith::IndexCastOp>(loc, b.getI32Type(), iv[iota.getDim()]);
        storeOut(ct.isa<FloatType>() ? b.create<arith::SIToFPOp>(loc, ct, i).getResult() : i, true);
        return;
      }
      // Operand k at `at`, built where `ob` builds (inside scf.if regions);
      // bf16 as f32 (copyElement says why), the rest as stored.
      auto at = [&](OpBuilder &ob, unsigned k, ArrayRef<Value> i, bool widened) -> Value {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ob.getInsertionBlock(), ob.getInsertionPoint());
        const Buf &in = operands[op->getOperand(k)];
        return widened ? load(in, i) : loadRaw(in, i);
      };
      if (isa<g::ArgmaxOp>(op)) {
        storeOut(shapes::emitArgmax(b, loc, op, iv, [&](OpBuilder &ob, unsigned k, ArrayRef<Value> i) {
                   return at(ob, k, i, true);
                 }), false);
        return;
      }
      if (isa<g::ConcatOp, g::PadOp>(op)) {
        Type elem = out.type.getElementType();
        const bool wide = elem.isBF16();
        Value v = shapes::emitShapeValue(
            b, loc, op, iv, [&](OpBuilder &ob, unsigned k, ArrayRef<Value> i) { return at(ob, k, i, wide); },
            [&](OpBuilder &ob) {
              Value c = splatConstant(ob, loc, computeType(elem), cast<g::PadOp>(op).getValue().convertToDouble());
              return wide ? c : narrow(ob, loc, c, elem, elements);
            },
            wide ? computeType(elem) : storageType(elem));
        storeOut(v, wide);
        return;
      }
      if (isa<g::GatherOp>(op)) {  // the row from the i32 index there
        const Buf &ids = operands[op->getOperand(1)];
        Value row = loadRaw(ids, ArrayRef<Value>(iv).take_front(ids.type.getRank()));
        copyElement(out, ivOut, operands[op->getOperand(0)], shapes::gatherTableIndex(b, loc, op, iv, row));
        return;
      }
      copyElement(out, ivOut, operands[op->getOperand(0)], shapes::sourceIndex(b, loc, op, iv));
    });
    return success();
  }
  if (auto cl = dyn_cast<g::ConvertLayoutOp>(op)) {
    Buf out = bufs[cl.getResult()], in = bufs[cl.getInput()];
    forNest(b, loc, extents(out), [&](ArrayRef<Value> iv) { copyElement(out, iv, in, iv); });
    return success();
  }
  if (isa<g::AllReduceOp, g::BroadcastOp, g::AllGatherOp, g::ReduceScatterOp>(op))
    return op->emitError() << "cpu backend: cannot lower '" << op->getName()
                           << "' inside a kernel (collectives run through the runtime's Communicator: "
                              "tessera-spmd-stages splits the program around them)";
  return op->emitError() << "cpu backend: cannot lower '" << op->getName()
                         << "' on tensors: a Graph IR program is written with tessera_graph ops "
                            "(e.g. tessera_graph.rsqrt for math.rsqrt; docs/ir.md lists them)";
}

LogicalResult KernelBuilder::run() {
  // Static, non-empty shapes only: the kernel's loops, row blocks and
  // buffers are sized at compile time.
  auto checkType = [&](Location at, Type type) -> LogicalResult {
    auto t = type.dyn_cast<RankedTensorType>();
    if (!t) return success();
    if (!t.hasStaticShape())
      return emitError(at) << "cpu backend: " << t << " has a dynamic shape: Graph IR programs are "
                              "compiled for static shapes";
    // Before getNumElements, which wraps (2^62+1 x 4 became 4 elements).
    if (std::string big = tessera::oversizedShapeReason(t); !big.empty())
      return emitError(at) << "cpu backend: " << t << " " << big
                           << ": no device addresses that much memory; give it a size that fits";
    if (t.getNumElements() == 0)
      return emitError(at) << "cpu backend: " << t << " has no elements: zero-sized tensors are "
                              "not supported";
    return success();
  };
  for (Type t : llvm::concat<const Type>(src.getArgumentTypes(), src.getResultTypes()))
    if (failed(checkType(src.getLoc(), t))) return failure();
  WalkResult shapes = src.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (failed(checkType(op->getLoc(), t))) return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (shapes.wasInterrupted()) return failure();
  // Every value of the function's body gets a buffer: it must be a tensor.
  // (An index constant feeding an scf.for, or a tensor.extract, was cast to
  // a tensor type unchecked and aborted the compiler.)
  for (Operation &op : src.front().without_terminator())
    for (Type t : op.getResultTypes())
      if (!t.isa<RankedTensorType>())
        return op.emitError() << "cpu backend: '" << op.getName() << "' produces a " << t
                              << ": a Graph IR function computes on tensors only (scalars, indices and loops "
                                 "belong in a Tile IR kernel)";
  if (failed(analyzeRows())) return failure();
  // Row block of a tile group.  B is packed once per group, so a group
  // should own many rows (its packing cost is K*N per group against
  // rows*K*N FMAs); the runtime runs groups on its workers (2 here), so the
  // count should be even and large enough to balance on a shared machine,
  // at most 16 groups; and a group's rows should fit one A block (<= MC),
  // so B slivers are packed into L1 once per group rather than whole
  // panels.  Rows per group: the largest multiple of 128 that is <= the
  // smallest MC of the kernel's matmuls (128 with the AVX2 schedule's
  // MC = 144, 256 with the AVX-512 schedule's 264).
  // Measured on 2 Zen 3 cores (AVX2): 2048^3 with 16 groups ~1.0x OpenBLAS,
  // with 8 groups 0.87x (noisy).  On 2 Emerald Rapids cores (AVX-512, 12x32
  // tiles), 2048^3 in 3 alternating rounds of 40 iterations: 128 rows with
  // MC = 144 67.7-108 ms, 256 rows with MC = 264 64.9-89.2 ms, faster in
  // every round (B packing was 9-11% of the kernel's samples at 128 rows).
  // With a rank > 2 result, dim 0 is a batch of matrices: count the rows
  // of all of them, and give each group whole matrices.
  rowBlock = rowsTotal;
  if (parallel) {
    auto r0 = src.getFunctionType().getResult(0).cast<RankedTensorType>();
    int64_t rowsPer = 1;
    for (int64_t d = 1; d + 1 < r0.getRank(); ++d) rowsPer *= r0.getDimSize(d);
    int64_t allRows = rowsTotal * rowsPer;
    // Without a matmul or attention (whose packing sets the heuristic
    // above), the schedule's row tiles say how many dim-0 slices a group
    // computes: the smallest R of the kernel's tiles.
    bool packs = false;
    int64_t rowTile = 0, minMC = 0;
    src.walk([&](Operation *op) {
      if (isa<g::MatmulOp, schedule::FlashAttentionOp, schedule::FlashAttentionGradOp>(op)) packs = true;
      if (auto t = dyn_cast<schedule::TileOp>(op); t && t.getTileSizes().size() == 1)
        rowTile = rowTile ? std::min(rowTile, t.getTileSizes()[0]) : t.getTileSizes()[0];
      if (auto mm = dyn_cast<g::MatmulOp>(op)) {
        auto t = mm->getParentOfType<schedule::TileOp>();
        int64_t mc = t ? t.getTileSizes()[0] : MC;
        minMC = minMC ? std::min(minMC, mc) : mc;
      }
    });
    const int64_t rowsPerGroup = std::max<int64_t>(128, minMC / 128 * 128);
    int64_t groups = std::clamp<int64_t>(allRows / rowsPerGroup, allRows >= 32 ? 2 : 1, 16);
    groups = std::min(groups, rowsTotal);
    if (groups > 1 && groups % 2) --groups;
    rowBlock = (rowsTotal + groups - 1) / groups;
    if (!packs && rowTile > 0) rowBlock = std::min(rowTile, rowsTotal);
  }
  int64_t grid = parallel ? (rowsTotal + rowBlock - 1) / rowBlock : 1;

  // Signature: inputs, outputs, group id x3, grid x3, shared memory.
  SmallVector<Type> types;
  // Memrefs hold the storage type; `dtypes` keeps the element types for
  // the launcher (an fp8 buffer is memref<..xi8>).
  SmallVector<Attribute> dtypes;
  auto memTy = [&](Type t) {
    auto tt = t.cast<RankedTensorType>();
    auto l = g::getLayout(tt);
    dtypes.push_back(TypeAttr::get(tt.getElementType()));
    Type st = storageType(tt.getElementType());
    if (l && !l.isRowMajor()) return MemRefType::get({tt.getNumElements()}, st);
    return MemRefType::get(tt.getShape(), st);
  };
  for (Type t : src.getArgumentTypes()) {
    if (!t.isa<RankedTensorType>()) return src.emitError("cpu backend: program arguments must be tensors");
    types.push_back(memTy(t));
  }
  for (Type t : src.getResultTypes()) types.push_back(memTy(t));
  unsigned nIn = src.getNumArguments(), nOut = src.getNumResults();
  if (parallel) planSharedB(grid);
  const unsigned nScratch = scratchBytes ? 1 : 0;
  if (nScratch) types.push_back(MemRefType::get({scratchBytes}, b.getI8Type()));
  for (int i = 0; i < 6; ++i) types.push_back(b.getIndexType());
  types.push_back(MemRefType::get({tile::kDefaultMaxSharedMemory}, b.getI8Type()));
  b.setInsertionPoint(src);
  auto fn = b.create<func::FuncOp>(loc, src.getName(), b.getFunctionType(types, {}));
  fn->setAttr(kKernelAttr, b.getDictionaryAttr({
      b.getNamedAttr("inputs", b.getI64IntegerAttr(nIn)),
      b.getNamedAttr("outputs", b.getI64IntegerAttr(nOut)),
      b.getNamedAttr("scratch", b.getI64IntegerAttr(nScratch)),
      b.getNamedAttr("dtypes", b.getArrayAttr(dtypes)),
      b.getNamedAttr("grid", b.getDenseI64ArrayAttr({grid, 1, 1})),
      b.getNamedAttr("group_size", b.getDenseI64ArrayAttr({1, 1, 1}))}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);

  Value gid = entry->getArgument(nIn + nOut + nScratch);
  groupId = gid;
  if (nScratch) {
    // The state words, then the packed slivers (64-byte aligned).
    Value ws = entry->getArgument(nIn + nOut);
    sharedFlags = b.create<memref::ViewOp>(loc, MemRefType::get({sharedSlots + 1}, b.getI32Type()), ws,
                                           cIdx(b, loc, 0), ValueRange{});
    const int64_t flagBytes = ((sharedSlots + 1) * 4 + 63) / 64 * 64;
    for (Type acc : sharedAccTypes)  // f32 and i32 views of the same slivers
      sharedData[acc] = b.create<memref::ViewOp>(
          loc, MemRefType::get({(scratchBytes - flagBytes) / 4}, acc), ws, cIdx(b, loc, flagBytes), ValueRange{});
  }
  Value row0 = b.create<arith::MulIOp>(loc, gid, cIdx(b, loc, rowBlock));
  rowStart = row0;
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
  // Packing buffers of each accumulator type (f32, i32), sized for the
  // largest matmul: A blocks of MC x KC in MR-row slivers, B panels of
  // KC x NC in NR-column slivers.
  DenseMap<Type, std::pair<int64_t, int64_t>> packSizes;
  src.walk([&](g::MatmulOp mm) {
    std::pair<int64_t, int64_t> sz;
    if (auto t = mm->getParentOfType<schedule::TileOp>())
      sz = packBufferSizes(mm, t.getTileSizes()[0], t.getTileSizes()[1], t.getTileSizes()[2],
                           t.getMicroTile()[0], t.getMicroTile()[1]);
    else
      sz = packBufferSizes(mm, MC, NC, KC, MR, NR);
    if (sharedB.count(mm)) sz.second = 0;  // B lives in the scratch buffer
    auto &cur = packSizes[computeType(mm.getLhs().getType().cast<RankedTensorType>().getElementType())];
    cur.first = std::max({cur.first, sz.first, int64_t(8)});
    cur.second = std::max({cur.second, sz.second, int64_t(8)});
  });
  for (auto &[acc, sz] : packSizes) {
    Value pa = b.create<memref::AllocOp>(loc, MemRefType::get({sz.first}, acc), b.getI64IntegerAttr(64));
    Value pb = b.create<memref::AllocOp>(loc, MemRefType::get({sz.second}, acc), b.getI64IntegerAttr(64));
    allocs.push_back(pa);
    allocs.push_back(pb);
    packs[acc] = {pa, pb};
  }

  for (Operation &op : src.front().without_terminator()) {
    if (g::isMatmulOperandTranspose(&op))
      if (std::optional<Buf> view = transposeView(cast<g::TransposeOp>(op))) {
        bufs[op.getResult(0)] = *view;
        continue;
      }
    for (Value r : op.getResults())
      if (!bufs.count(r)) bufs[r] = makeBuf(r);
    if (failed(lowerOp(&op))) return failure();
  }
  for (auto &[v, out] : copies) {
    Buf in = bufs[v];
    forNest(b, loc, extents(out), [&](ArrayRef<Value> iv) { copyElement(out, iv, in, iv); });
  }
  if (nScratch)
    resetSharedB(entry->getArgument(nIn + nOut + nScratch + 3), entry->getArgument(nIn + nOut + nScratch + 4),
                 entry->getArgument(nIn + nOut + nScratch + 5));
  for (Value a : allocs) b.create<memref::DeallocOp>(loc, a);
  b.create<func::ReturnOp>(loc);
  return success();
}

/// Which matmuls pack B once for all groups, and where in the scratch
/// buffer.  Per group, B costs K*N packing against rows*K*N FMAs: 3% of a
/// 2048^3 GEMM's samples with 8 groups, each packing all of B.  Shared, B
/// is packed once (each sliver by whichever group reaches it first) and
/// read from the scratch buffer by the others.  Only a B that every group
/// reads whole and that the kernel does not compute: an argument, or a
/// transposed view of one; rank 2 (batched matmuls give each group its own
/// matrices); and at most kMaxSharedBytes of packed slivers.
///
/// Only with 8 groups or more.  A shared sliver costs more to pack than one
/// packed into L1 (its stores miss: a new 32 KiB of the buffer each time,
/// and its rows are prefetched less early), so sharing pays where it saves
/// many packings.  Measured as the micro-kernel's share of the kernel's
/// samples (perf, cpu-clock; wall times on the 2-core build machine moved
/// 1.5x between runs), f32 GEMMs on 2 AVX-512 cores, shared against per
/// group: 2048^3 with 8 groups 86.0 against 84.6%, 4096^3 with 16 groups
/// 88.2 against 85.1%, 1024^3 with 4 groups 84.0 against 84.6%, the MLP of
/// examples/mlp.mlir with 2 groups 81.5 against 84.6%.
void KernelBuilder::planSharedB(int64_t grid) {
  constexpr int64_t kMaxSharedBytes = int64_t{1} << 30;
  constexpr int64_t kMinGroups = 8;
  if (grid < kMinGroups) return;
  int64_t dataElems = 0;
  src.walk([&](g::MatmulOp mm) {
    auto at = mm.getLhs().getType().cast<RankedTensorType>();
    if (at.getRank() != 2) return;
    Value rhs = mm.getRhs();
    if (auto t = rhs.getDefiningOp<g::TransposeOp>(); t && g::isMatmulOperandTranspose(t)) rhs = t.getOperand();
    // Through the tiles' region arguments to the function's.
    auto arg = rhs.dyn_cast<BlockArgument>();
    while (arg && arg.getOwner() != &src.front()) {
      auto tile = dyn_cast<schedule::TileOp>(arg.getOwner()->getParentOp());
      if (!tile || arg.getArgNumber() >= tile->getNumOperands()) return;
      rhs = tile->getOperand(arg.getArgNumber());
      arg = rhs.dyn_cast<BlockArgument>();
    }
    if (!arg || rowValues.contains(rhs) || rowValues.contains(mm.getRhs())) return;
    int64_t nc = NC, kc = KC, nr = NR;
    if (auto t = mm->getParentOfType<schedule::TileOp>()) {
      nc = t.getTileSizes()[1], kc = t.getTileSizes()[2];
      nr = t.getMicroTile()[1];
    }
    const int64_t K = at.getDimSize(1), N = mm.getRhs().getType().cast<RankedTensorType>().getDimSize(1);
    SharedBLayout l;
    l.nc = (std::min(nc, N) + nr - 1) / nr * nr;
    l.kcMax = std::min(kc, K);
    l.slivers = l.nc / nr;
    l.panelsK = (K + l.kcMax - 1) / l.kcMax;
    const int64_t slots = (N + l.nc - 1) / l.nc * l.panelsK * l.slivers;
    const int64_t elems = slots * l.kcMax * nr;
    if ((dataElems + elems) * 4 > kMaxSharedBytes) return;
    l.flagBase = sharedSlots;
    l.dataBase = dataElems;
    sharedSlots += slots;
    dataElems += elems;
    sharedB[mm] = l;
    Type acc = computeType(at.getElementType());
    if (!llvm::is_contained(sharedAccTypes, acc)) sharedAccTypes.push_back(acc);
  });
  if (sharedB.empty()) return;
  const int64_t flagBytes = ((sharedSlots + 1) * 4 + 63) / 64 * 64;
  scratchBytes = flagBytes + dataElems * 4;
}

/// The last group to finish puts every state word back to zero, so the
/// next launch (on the same buffer: TS_PARAM_SCRATCH) packs B again.
/// Groups count themselves in the last word; the launch's grid, not the
/// compiled one, says how many finish.
void KernelBuilder::resetSharedB(Value gridX, Value gridY, Value gridZ) {
  Value groups = b.create<arith::MulIOp>(loc, b.create<arith::MulIOp>(loc, gridX, gridY), gridZ);
  Value counter = cIdx(b, loc, sharedSlots);
  Value one = b.create<arith::ConstantIntOp>(loc, 1, 32);
  Value before = b.create<memref::AtomicRMWOp>(loc, arith::AtomicRMWKind::addi, one, sharedFlags, ValueRange{counter});
  Value lastGroup = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::eq, b.create<arith::IndexCastOp>(loc, b.getIndexType(), before),
      b.create<arith::SubIOp>(loc, groups, cIdx(b, loc, 1)));
  auto ifOp = b.create<scf::IfOp>(loc, lastGroup, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value zero = b.create<arith::ConstantIntOp>(loc, 0, 32);
  forLoop(b, loc, cIdx(b, loc, 0), cIdx(b, loc, sharedSlots + 1), cIdx(b, loc, 1),
          [&](Value i) { b.create<memref::StoreOp>(loc, zero, sharedFlags, ValueRange{i}); });
}

struct ScheduleToCPUPass : tessera::cpu::impl::ScheduleToCPUBase<ScheduleToCPUPass> {
  using ScheduleToCPUBase::ScheduleToCPUBase;
  void runOnOperation() override {
    SmallVector<func::FuncOp> todo;
    // Functions on tensors, arguments or results: a program with no inputs
    // (iota, constants: a part of a program cut into row stages) is one too.
    auto tensor = [](Type t) { return t.isa<RankedTensorType>(); };
    getOperation().walk([&](func::FuncOp f) {
      if (!f.isExternal() && (llvm::any_of(f.getArgumentTypes(), tensor) || llvm::any_of(f.getResultTypes(), tensor)))
        todo.push_back(f);
    });
    for (func::FuncOp f : todo) {
      OpBuilder b(f);
      ElementOptions elements;
      elements.hardwareF16 = hardwareF16;
      const int64_t lanes = matmulLanes;
      if (lanes != 8 && lanes != 16) {
        f.emitError() << "tessera-schedule-to-cpu: matmul-lanes must be 8 (AVX2) or 16 (AVX-512), not "
                      << lanes;
        return signalPassFailure();
      }
      KernelBuilder kb(f, b, elements, lanes);
      if (failed(kb.run())) return signalPassFailure();
      f.erase();
    }
    // Meshes only matter to collectives, which the kernel does not contain.
    for (auto m : llvm::make_early_inc_range(getOperation().getOps<g::MeshOp>())) m.erase();
  }
};

}  // namespace
