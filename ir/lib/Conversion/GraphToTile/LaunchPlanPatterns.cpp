//===- LaunchPlanPatterns.cpp - Graph functions -> launch plans -----------===//
#include "LaunchPlanPatterns.h"

#include <optional>

#include "AttentionGradKernel.h"
#include "KernelBodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace g = tessera::graph;
namespace t = tessera::tile;
namespace conv = tessera::conversion;
namespace gt = tessera::conversion::graph_to_tile;
using namespace gt;

gt::PlannedFunction *gt::Lowerings::of(Operation *op) {
  auto fn = isa<func::FuncOp>(op) ? cast<func::FuncOp>(op) : op->getParentOfType<func::FuncOp>();
  auto it = fn ? functions.find(fn) : functions.end();
  return it == functions.end() ? nullptr : it->second.get();
}

LogicalResult gt::Lowerings::plan(func::FuncOp f, StringRef backend) {
  auto pf = std::make_unique<PlannedFunction>();
  if (failed(planFusion(f, backend, pf->plan))) return failure();
  for (const KernelSpec &s : pf->plan.specs) {
    pf->specOf[s.root] = &s;
    // flash_attention_grad's other results are its kernels' too.
    if (s.kind == KernelSpec::kAttentionGrad)
      for (Value r : s.rowOp->getResults().drop_front()) pf->specOf[r] = &s;
  }
  // A result gets its output buffer directly when a kernel computes it;
  // arguments and values returned twice are copied (PlanReturn).
  pf->numInputs = f.getNumArguments();
  auto ret = cast<func::ReturnOp>(f.front().getTerminator());
  for (auto [i, r] : llvm::enumerate(ret.getOperands()))
    if (!r.isa<BlockArgument>() && !pf->outOf.count(r)) pf->outOf[r] = pf->numInputs + i;
  pf->lastKernel = f;
  functions[f] = std::move(pf);
  return success();
}

namespace {

/// Creates kernels and their launches in a planned function at the
/// rewriter's insertion point.
struct Launcher {
  ConversionPatternRewriter &rw;
  PlannedFunction &pf;
  Lowerings &all;
  Location loc;

  std::string nextName(StringRef kind) {
    return pf.plan.fn.getName().str() + "_k" + std::to_string(pf.nextKernel++) + "_" + kind.str();
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
    return it != pf.outOf.end() ? pf.plan.fn.getArgument(it->second) : scratch(flatType(root));
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
    buildKernelBody(k, s);
    call(k, operands, s.grid);
  }
};

/// Replaces `op`, whose one result the plan gives a kernel of kind `kind`
/// (any kind if none), with that kernel's launch; fails otherwise.
LogicalResult launchKernelOf(Operation *op, Lowerings &all, ConversionPatternRewriter &rw,
                             std::optional<KernelSpec::Kind> kind = std::nullopt) {
  PlannedFunction *pf = all.of(op);
  if (!pf || op->getNumResults() != 1) return failure();
  const KernelSpec *s = pf->specOf.lookup(op->getResult(0));
  if (!s || (kind && s->kind != *kind)) return failure();
  static const char *kKind[] = {"gemm", "elementwise", "rows", "layout", "attention", "shape", "attention_grad"};
  Launcher l{rw, *pf, all, op->getLoc()};
  Value out = l.bufferFor(s->root);
  l.launch(*s, s->kind == KernelSpec::kRows || s->kind == KernelSpec::kShape ? s->rowOp->getName().stripDialect()
                                                                             : StringRef(kKind[s->kind]),
           out);
  rw.replaceOp(op, out);
  return success();
}

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
    return launchKernelOf(op, all, rw, Kind);
  }
};

/// An op with a kernel of its own: convert_layout (a copy between the two
/// layouts' offsets), flash_attention (AttentionKernel.h).
template <typename OpTy>
struct OwnKernel : OpConversionPattern<OpTy> {
  Lowerings &all;
  OwnKernel(Lowerings &all, MLIRContext *ctx) : OpConversionPattern<OpTy>(ctx), all(all) {}
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor, ConversionPatternRewriter &rw) const override {
    return launchKernelOf(op, all, rw);
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
    func::FuncOp fn = pf->plan.fn;
    Launcher l{rw, *pf, all, ret.getLoc()};
    for (auto [i, r] : llvm::enumerate(ret.getOperands())) {
      Value o = fn.getArgument(pf->numInputs + i);
      if (rw.getRemappedValue(r) == o) continue;
      KernelSpec c{KernelSpec::kElementwise, r, {}, nullptr, {}, true, {r}, {}, 0};
      (void)sizeLaunch(pf->plan.backend, c);
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

}  // namespace

void gt::configureLaunchPlanTarget(ConversionTarget &target, Lowerings &all) {
  target.addLegalDialect<t::TileDialect, arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
                         scf::SCFDialect, vector::VectorDialect>();
  target.addIllegalDialect<g::GraphDialect>();
  target.addIllegalOp<tessera::schedule::FlashAttentionOp, tessera::schedule::FlashAttentionGradOp>();
  target.addDynamicallyLegalOp<arith::ConstantOp>([](arith::ConstantOp c) { return !c.getType().isa<TensorType>(); });
  target.addDynamicallyLegalOp<func::FuncOp>(
      [&all](func::FuncOp f) { return !all.of(f) || f->hasAttr(conv::kLaunchPlanAttr); });
  target.addDynamicallyLegalOp<func::ReturnOp>([&all](func::ReturnOp r) {
    PlannedFunction *pf = all.of(r);
    return !pf || pf->returned;
  });
  target.addLegalOp<func::CallOp>();
}

void gt::populateLaunchPlanPatterns(RewritePatternSet &patterns, Lowerings &all) {
  patterns.add<PlanSignature, PlanReturn, FusedOp, OwnKernel<g::ConvertLayoutOp>,
               OwnKernel<tessera::schedule::FlashAttentionOp>, FlashAttentionGradKernels,
               FusedTreeKernel<KernelSpec::kGemm>, FusedTreeKernel<KernelSpec::kElementwise>,
               FusedTreeKernel<KernelSpec::kRows>, FusedTreeKernel<KernelSpec::kShape>>(all, patterns.getContext());
}
