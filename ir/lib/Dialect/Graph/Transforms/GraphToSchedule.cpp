//===- GraphToSchedule.cpp - group Graph ops into scheduled tiles ---------===//
//
// Every Graph op that computes (matmul, softmax, reduce, elementwise) ends
// up in exactly one tessera_schedule.tile; attention chains become a
// tessera_schedule.flash_attention first (AttentionToSchedule.cpp).  The
// grouping is the fusion decision every backend then follows:
//
//   - A value is *fused* into its user when it has one use, the user is an
//     elementwise op in the same block, both are row-major and the user's
//     result has the value's shape: the user's tile computes it in
//     registers, nobody stores it.  A splat constant read by elementwise
//     ops is cloned into each tile that reads it (a scalar there).
//   - A group is the tree of fused values under one unfused value (its
//     output).  It holds at most one *root* (matmul, softmax or reduce:
//     the ops that are not elementwise); an extra root, or a root reached
//     through a broadcast, is materialized and the groups are rebuilt.
//     Softmax and reduce take elementwise epilogues only with
//     `fuse-reductions` (both backends apply them before the store).
//   - With `merge-matmul-chains`, a matmul tile whose only user is the lhs
//     of the next matmul tile (the MLP) joins it: one tile, one row block,
//     the intermediate rows never leave the group's scratch.
//
// Tile sizes are parameters of the pass, recorded on each tile:
// matmul groups get [MC, NC, KC] / [MR, NR] (cache and register tiles,
// clamped to the problem; KC is the BK of a blocked<BM, BN, BK> operand
// when there is one), the others [R] / [V] (dim-0 slices of the output
// per work item, about `row-tile` rows of its last dim; vector width).
//
//===----------------------------------------------------------------------===//
#include "GraphToSchedule.h"

#include <algorithm>

#include "llvm/ADT/SetVector.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "tessera/Dialect/Graph/Transforms/RowStages.h"

namespace tessera::graph {
#define GEN_PASS_DEF_GRAPHTOSCHEDULE
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

using namespace mlir;
using namespace tessera;

namespace {

using graph::isRowMajor;
using graph::isSplatConstant;
using graph::isTileRoot;
/// The ops a group holds: roots, and the elementwise ops around them.
bool computes(Operation *op) { return op && (isTileRoot(op) || graph::isElementwise(op)); }
ArrayRef<int64_t> shapeOf(Value v) { return v.getType().cast<ShapedType>().getShape(); }

/// `accum = T` on matmul and reduce: the kernels of every backend
/// accumulate floats in f32 and integers in i32, so only that policy is
/// honoured; any other is refused here, before anything is scheduled, rather
/// than silently run at another precision.
LogicalResult checkAccumPolicies(Operation *root) {
  LogicalResult result = success();
  root->walk([&](Operation *op) {
    std::optional<Type> accum;
    Type operand;
    if (auto m = dyn_cast<graph::MatmulOp>(op)) {
      accum = m.getAccum();
      operand = m.getLhs().getType().cast<ShapedType>().getElementType();
    } else if (auto r = dyn_cast<graph::ReduceOp>(op)) {
      accum = r.getAccum();
      operand = r.getInput().getType().cast<ShapedType>().getElementType();
    }
    if (!accum) return;
    Builder b(op->getContext());
    Type honoured = operand.isa<FloatType>() ? Type(b.getF32Type()) : Type(b.getI32Type());
    if (*accum == honoured) return;
    op->emitOpError() << "asks for accum = " << graph::typeText(*accum)
                      << ", a numerics policy no Tessera backend honours: the cpu, vulkan, cuda, "
                         "hip and level_zero kernels accumulate "
                      << (operand.isa<FloatType>() ? "floats in f32" : "integers in i32")
                      << " (unsupported; use accum = " << graph::typeText(honoured) << " or leave it out)";
    result = failure();
  });
  return result;
}

struct GraphToSchedulePass : graph::impl::GraphToScheduleBase<GraphToSchedulePass> {
  using GraphToScheduleBase::GraphToScheduleBase;

  /// Values kept out of their user's group (extra roots).
  DenseSet<Value> forced;

  void runOnOperation() override {
    if (mma != "none" && mma != "sync" && mma != "wgmma" && mma != "mfma" && mma != "wmma") {
      // On the location, not the op: a bad option is not the module's fault
      // (an op diagnostic would print the whole module after it).
      mlir::emitError(getOperation().getLoc()) << "--tessera-graph-to-schedule: mma=" << mma
                                 << " is not a matmul unit; use mma=none (lanes' FMAs), mma=sync "
                                    "(subgroup matrix multiply, bf16/f16 operands), mma=wgmma (warpgroup "
                                    "matrix multiply, bf16/f16 operands), mma=mfma (wavefront matrix multiply, "
                                    "bf16/f16 operands) or mma=wmma (wave32 matrix multiply, bf16/f16 operands)";
      return signalPassFailure();
    }
    // Every size in range before any is divided by or used as a vector
    // length (micro-m=0 divided by zero; vector-width=65536 crashed LLVM's
    // code generator): an error naming the option and its range.
    struct Bounded {
      const char *name;
      int64_t value, lo, hi;
    };
    const Bounded sizes[] = {
        {"tile-m", tileM, 1, 1 << 20},        {"tile-n", tileN, 1, 1 << 20},
        {"tile-k", tileK, 1, 1 << 20},        {"micro-m", microM, 1, 64},
        {"micro-n", microN, 1, 64},           {"row-tile", rowTile, 1, 1 << 20},
        {"vector-width", vectorWidth, 1, 64}, {"attn-block-q", attnBlockQ, 1, 4096},
        {"attn-block-kv", attnBlockKV, 1, 4096}, {"attn-shared-kib", attnSharedKiB, 0, 1 << 20},
    };
    for (const Bounded &b : sizes)
      if (b.value < b.lo || b.value > b.hi) {
        mlir::emitError(getOperation().getLoc())
            << "--tessera-graph-to-schedule: " << b.name << "=" << b.value << " is out of range; use " << b.lo
            << ".." << b.hi;
        return signalPassFailure();
      }
    if (stages != 0 && (stages < 2 || stages > 8)) {
      mlir::emitError(getOperation().getLoc()) << "--tessera-graph-to-schedule: stages=" << static_cast<int64_t>(stages)
                                 << " is not a pipeline depth; use 2..8 (or 0: the kernel's choice)";
      return signalPassFailure();
    }
    if (microLayout != "strided" && microLayout != "quads") {
      mlir::emitError(getOperation().getLoc()) << "--tessera-graph-to-schedule: micro-layout=" << microLayout
                                 << " is not a register-block layout; use micro-layout=strided or quads";
      return signalPassFailure();
    }
    if (failed(checkAccumPolicies(getOperation()))) return signalPassFailure();
    forced.clear();
    // Attention backwards first: their composed form is ordinary ops (no
    // attention chain: the probabilities have several uses).
    SmallVector<graph::AttentionGradOp> grads;
    getOperation().walk([&](graph::AttentionGradOp g) { grads.push_back(g); });
    for (graph::AttentionGradOp g : grads)
      graph::lowerAttentionGrad(g, attention && attentionBackward, attnBlockQ, attnBlockKV, attnSharedKiB * 1024);
    // f32 chains with `attention`; bf16 / f16 ones on warpgroups.
    const bool sixteenBit = mma == "wgmma" && wgmmaAttention;
    if (attention || sixteenBit) {
      SmallVector<graph::SoftmaxOp> softmaxes;
      getOperation().walk([&](graph::SoftmaxOp sm) {
        if (!sm->getParentOfType<schedule::TileOp>()) softmaxes.push_back(sm);
      });
      for (graph::SoftmaxOp sm : softmaxes)
        graph::matchAttention(sm, attnBlockQ, attnBlockKV, attnSharedKiB * 1024, attention, sixteenBit);
    }
    SmallVector<Block *> blocks;
    getOperation().walk([&](func::FuncOp f) {
      if (!f.isExternal()) blocks.push_back(&f.front());
    });
    for (Block *block : blocks) {
      if (failed(groupBlock(*block)) || badSchedule) return signalPassFailure();
      if (mergeMatmulChains) mergeChains(*block);
    }
    if (rowStages) {
      SymbolTable symbols(getOperation());
      SmallVector<func::FuncOp> fns(getOperation().getOps<func::FuncOp>());
      for (func::FuncOp f : fns)
        if (failed(graph::cutIntoRowStages(f, symbols))) return signalPassFailure();
    }
  }

  bool badSchedule = false;  // makeTile refused a tile (its error is out)

  /// Is `v` computed inside its single user's group?
  bool fused(Value v) {
    if (!fuse || forced.contains(v)) return false;
    Operation *def = v.getDefiningOp();
    if (!computes(def) || !v.hasOneUse()) return false;
    Operation *user = *v.getUsers().begin();
    if (!graph::isElementwise(user) || user->getBlock() != def->getBlock()) return false;
    if (!isRowMajor(v.getType()) || !isRowMajor(user->getResult(0).getType())) return false;
    if (shapeOf(v) != shapeOf(user->getResult(0))) return false;  // no recomputed broadcasts
    if (graph::isRowOp(def) && !fuseReductions) return false;
    // A stochastic cast in an epilogue keys its random bits by the
    // element's index in the whole tensor, which every backend's matmul and
    // row-op epilogues compute (the cpu's from its group's first row), so
    // it fuses like any elementwise op.
    return true;
  }

  /// The ops of the group whose output is `out`, in no particular order;
  /// `roots` gets its root values.
  void collect(Value out, SetVector<Operation *> &ops, SmallVectorImpl<Value> &roots) {
    Operation *def = out.getDefiningOp();
    ops.insert(def);
    if (isTileRoot(def)) {
      roots.push_back(out);
      return;
    }
    for (Value o : def->getOperands()) {
      if (fused(o)) collect(o, ops, roots);
      else if (isSplatConstant(o)) ops.insert(o.getDefiningOp());
    }
  }

  LogicalResult groupBlock(Block &block) {
    // Group outputs and their ops; an extra root is materialized and the
    // groups rebuilt (each round forces at least one more value: it ends).
    SmallVector<std::pair<Value, SetVector<Operation *>>> groups;
    for (bool again = true; again;) {
      again = false;
      groups.clear();
      for (Operation &op : block) {
        if (!computes(&op) || op.getParentOfType<schedule::TileOp>() || fused(op.getResult(0))) continue;
        SetVector<Operation *> ops;
        SmallVector<Value> roots;
        collect(op.getResult(0), ops, roots);
        for (size_t k = 1; k < roots.size(); ++k) forced.insert(roots[k]), again = true;
        groups.push_back({op.getResult(0), std::move(ops)});
      }
    }
    for (auto &[out, ops] : groups) makeTile(out, ops);
    // Constants now cloned into every tile that reads them.
    for (Operation &op : llvm::make_early_inc_range(block))
      if (isa<arith::ConstantOp>(op) && op.use_empty()) op.erase();
    return success();
  }

  /// KC: the `BK` of a `blocked<BM, BN, BK>` operand (read through the
  /// convert_layout that makes it row-major for the matmul), else tile-k.
  int64_t contractionBlock(graph::MatmulOp mm) {
    for (Value v : {mm.getLhs(), mm.getRhs()}) {
      graph::LayoutAttr l = graph::getLayout(v.getType());
      if (auto cl = v.getDefiningOp<graph::ConvertLayoutOp>(); cl && (!l || l.isRowMajor()))
        l = graph::getLayout(cl.getInput().getType());
      if (l && l.getKind() == graph::LayoutKind::Blocked && l.getBlock().size() == 3)
        return l.getBlock()[2];
    }
    return tileK;
  }

  void makeTile(Value out, const SetVector<Operation *> &group) {
    Operation *outOp = out.getDefiningOp();
    // In program order; leaves are what the ops read from outside.
    SmallVector<Operation *> ops(group.begin(), group.end());
    llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    SetVector<Value> leaves;
    graph::MatmulOp matmul;
    for (Operation *op : ops) {
      if (auto mm = dyn_cast<graph::MatmulOp>(op)) matmul = mm;
      for (Value v : op->getOperands())
        if (!group.contains(v.getDefiningOp())) leaves.insert(v);
    }
    OpBuilder b(outOp);
    SmallVector<int64_t> sizes, micro;
    auto ot = out.getType().cast<RankedTensorType>();
    if (matmul) {
      // Clamp the cache tile to the problem; keep MR | MC and NR | NC.
      auto ct = matmul.getType().cast<RankedTensorType>();
      int64_t M = ct.getDimSize(ct.getRank() - 2), N = ct.getDimSize(ct.getRank() - 1);
      int64_t tm = tileM, tn = tileN;
      if (clampTiles && M < tm) tm = std::max<int64_t>(microM, (M + microM - 1) / microM * microM);
      if (clampTiles && N < tn) tn = std::max<int64_t>(microN, (N + microN - 1) / microN * microN);
      // Named with the options (the tile op's verifier said "micro tile
      // [8, 32] does not divide the cache tile [144, 1]" and dumped it).
      if (tm % microM || tn % microN) {
        const bool onM = tm % microM != 0;
        matmul.emitError() << "--tessera-graph-to-schedule: " << (onM ? "tile-m=" : "tile-n=")
                           << (onM ? tm : tn) << " is not a multiple of " << (onM ? "micro-m=" : "micro-n=")
                           << (onM ? microM : microN) << " for this " << M << "x" << N
                           << " matmul (a tile holds whole register blocks): give "
                           << (onM ? "tile-m" : "tile-n") << " a multiple of " << (onM ? microM : microN)
                           << ", or another " << (onM ? "micro-m" : "micro-n");
        badSchedule = true;
        return;
      }
      sizes = {tm, tn, contractionBlock(matmul)};
      micro = {microM, microN};
    } else {
      // R counts dim-0 slices: row-tile rows of the last dim, each slice
      // holding the product of the dims in between.
      int64_t dim0 = ot.getRank() ? ot.getDimSize(0) : 1, perSlice = 1;
      for (int64_t d = 1; d + 1 < ot.getRank(); ++d) perSlice *= ot.getDimSize(d);
      sizes = {std::max<int64_t>(1, std::min(rowTile / std::max<int64_t>(1, perSlice), dim0))};
      micro = {vectorWidth};
    }
    auto tile = b.create<schedule::TileOp>(outOp->getLoc(), TypeRange{ot}, leaves.getArrayRef(),
                                           sizes, micro);
    if (matmul && mma != "none") tile.setMmaAttr(b.getStringAttr(mma));
    if (matmul && microLayout != "strided") tile.setMicroLayoutAttr(b.getStringAttr(microLayout));
    if (matmul && mma == "wgmma" && stages != 0) tile.setStagesAttr(b.getI64IntegerAttr(stages));
    if (matmul && mma == "wgmma" && warpSpecialize) tile.setWarpSpecialize(true);
    Block &body = tile.getBody().front();
    IRMapping map;
    for (auto [v, arg] : llvm::zip(leaves, body.getArguments())) map.map(v, arg);
    OpBuilder inner = OpBuilder::atBlockEnd(&body);
    // Splat constants are cloned: another group may read the same one.
    for (Operation *op : ops) inner.clone(*op, map);
    inner.create<schedule::YieldOp>(outOp->getLoc(), ValueRange{map.lookup(out)});
    out.replaceAllUsesWith(tile.getResult(0));
    for (Operation *op : llvm::reverse(ops))
      if (!isa<arith::ConstantOp>(op)) op->erase();
  }

  static bool hasMatmul(schedule::TileOp t) {
    return !t.getBody().front().getOps<graph::MatmulOp>().empty();
  }

  /// tile A -> (only use) lhs of a matmul of tile B  ==>  one tile.
  void mergeChains(Block &block) {
    for (bool again = true; again;) {
      again = false;
      for (auto a : llvm::make_early_inc_range(block.getOps<schedule::TileOp>())) {
        // One result each (what graph-to-schedule makes; a hand-written
        // tile with several is left as it is).
        if (a.getNumResults() != 1 || !hasMatmul(a) || !a.getResult(0).hasOneUse()) continue;
        OpOperand &use = *a.getResult(0).getUses().begin();
        auto bt = dyn_cast<schedule::TileOp>(use.getOwner());
        if (!bt || bt.getNumResults() != 1 || !hasMatmul(bt)) continue;
        BlockArgument arg = bt.getBody().getArgument(use.getOperandNumber());
        bool asLhs = arg.hasOneUse() && isa<graph::MatmulOp>(*arg.getUsers().begin()) &&
                     arg.getUses().begin()->getOperandNumber() == 0;
        if (!asLhs) continue;
        merge(a, bt, use.getOperandNumber());
        again = true;
        break;
      }
    }
  }

  void merge(schedule::TileOp a, schedule::TileOp bt, unsigned bArg) {
    SetVector<Value> operands;
    for (Value v : a.getOperands()) operands.insert(v);
    for (auto [i, v] : llvm::enumerate(bt.getOperands()))
      if (i != bArg) operands.insert(v);
    SmallVector<int64_t> sizes, micro;
    for (auto [x, y] : llvm::zip(a.getTileSizes(), bt.getTileSizes())) sizes.push_back(std::max(x, y));
    micro.assign(bt.getMicroTile().begin(), bt.getMicroTile().end());
    OpBuilder b(bt);
    auto t = b.create<schedule::TileOp>(bt.getLoc(), bt.getResultTypes(), operands.getArrayRef(),
                                        sizes, micro);
    if (auto m = bt.getMmaAttr()) t.setMmaAttr(m);
    if (auto m = bt.getMicroLayoutAttr()) t.setMicroLayoutAttr(m);
    if (auto st = bt.getStagesAttr()) t.setStagesAttr(st);
    Block &body = t.getBody().front();
    IRMapping map;
    for (auto [v, arg] : llvm::zip(operands, body.getArguments())) map.map(v, arg);
    OpBuilder inner = OpBuilder::atBlockEnd(&body);
    IRMapping am;
    for (auto [x, v] : llvm::zip(a.getBody().getArguments(), a.getOperands())) am.map(x, map.lookup(v));
    Value aOut;
    for (Operation &op : a.getBody().front()) {
      if (auto y = dyn_cast<schedule::YieldOp>(op)) { aOut = am.lookup(y.getValues()[0]); break; }
      inner.clone(op, am);
    }
    IRMapping bm;
    for (auto [i, x] : llvm::enumerate(bt.getBody().getArguments()))
      bm.map(x, i == bArg ? aOut : map.lookup(bt.getOperand(i)));
    for (Operation &op : bt.getBody().front()) inner.clone(op, bm);
    bt.getResult(0).replaceAllUsesWith(t.getResult(0));
    bt.erase();
    a.erase();
  }
};

}  // namespace
