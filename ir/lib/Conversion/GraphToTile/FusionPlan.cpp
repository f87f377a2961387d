//===- FusionPlan.cpp - which Graph values get a kernel, and which kernel ===//
#include "FusionPlan.h"

#include "AttentionKernel.h"
#include "MmaGemmKernel.h"
#include "RowKernels.h"
#include "WgmmaAttentionKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "tessera/Conversion/ShapeOps.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"

using namespace mlir;
namespace g = tessera::graph;
namespace conv = tessera::conversion;
namespace gt = tessera::conversion::graph_to_tile;
using gt::KernelSpec;
using gt::elemOf;
using gt::numElements;
using gt::kMaxLanes;
using g::isSplatConstant;

namespace {

/// The element types the GPU kernels store and compute (ElementTypes.h).
bool supportedElement(Type t) {
  return t.isF32() || t.isF16() || t.isBF16() || t.isFloat8E4M3FN() || t.isFloat8E5M2() || t.isInteger(32) ||
         t.isInteger(8) || t.isInteger(1);
}

/// The fusion plan of one function while it is decided.
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
      // mma = "wgmma": the warpgroup kernel, whose shapes the op's verifier
      // checked (WgmmaAttentionKernel.h).
      if (fa.getMma()) return success();
      for (Value v : {fa.getQuery(), fa.getKeyT(), fa.getValue(), fa.getResult()})
        if (!elemOf(v).isF32())
          return unsupported(op, "flash_attention runs on f32 tensors (bf16 and f16 with mma = \"wgmma\"), got ")
                 << v.getType();
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
            // Each lane keeps RM x RN accumulators in registers, and the
            // lowerings unroll the block: 64 x 64 made the Vulkan, CUDA and
            // HIP compiles run for minutes and gigabytes.
            if (t.rm * t.rn > gt::kMaxLaneAccumulators)
              return unsupported(s.matmul, "the schedule's GEMM register block ")
                     << t.rm << "x" << t.rn << " is " << t.rm * t.rn
                     << " accumulators per lane; a GPU kernel keeps at most " << gt::kMaxLaneAccumulators
                     << " in registers (micro-m x micro-n <= " << gt::kMaxLaneAccumulators << ", e.g. 8x8 or 16x16)";
          }
        }
        specs.push_back(std::move(s));
      }
      if (!again) break;
    }
    return success();
  }
};

}  // namespace

LogicalResult gt::planFusion(func::FuncOp fn, StringRef backend, FusionPlan &plan) {
  FunctionLowering fl{fn, backend.str(), conv::inlineScheduleGroups(fn), {}, {}};
  if (failed(fl.plan())) return failure();
  for (KernelSpec &s : fl.specs)
    if (failed(sizeLaunch(backend, s))) return failure();
  plan.fn = fn;
  plan.backend = backend.str();
  plan.specs = std::move(fl.specs);
  return success();
}

LogicalResult gt::sizeLaunch(StringRef backend, KernelSpec &s) {
  switch (s.kind) {
  case KernelSpec::kGemm: {
    auto at = s.matmul.getLhs().getType().cast<ShapedType>();
    auto ct = s.matmul.getType().cast<ShapedType>();
    int64_t M = at.getShape()[at.getRank() - 2], N = ct.getShape().back();
    int64_t batch = ct.getNumElements() / (M * N);
    s.grid = {(N + s.tile.tn - 1) / s.tile.tn, (M + s.tile.tm - 1) / s.tile.tm, batch};
    if (s.grid[0] > kMaxGroups || s.grid[1] > kMaxGroups || s.grid[2] > kMaxGroups)
      return s.matmul.emitOpError() << "is too large for one " << backend << " launch (grid " << s.grid[0] << "x"
                                    << s.grid[1] << "x" << s.grid[2] << ")";
    s.lanes = conv::mma::eligible(s.matmul, s.tile) ? conv::mma::lanes(s.tile) : s.tile.lanes();
    return success();
  }
  case KernelSpec::kRows: s.grid = conv::rows::grid(s.rowOp, kLanes, kMaxGroups); break;
  case KernelSpec::kAttention: {
    auto fa = cast<tessera::schedule::FlashAttentionOp>(s.rowOp);
    if (fa.getMma()) {
      s.grid = conv::wgmma_attention::grid(fa);
      if (s.grid[0] > kMaxGroups || s.grid[1] > kMaxGroups)
        return fa.emitOpError() << "is too large for one " << backend << " launch (grid " << s.grid[0] << "x"
                                << s.grid[1] << ")";
      s.lanes = conv::wgmma_attention::lanes(fa);
      return success();
    }
    s.grid = conv::attention::grid(fa, kMaxGroups);
    s.lanes = kAttentionLanes;
    return success();
  }
  case KernelSpec::kAttentionGrad: s.lanes = kAttentionLanes; return success();
  case KernelSpec::kLayout: s.grid = grid1D(numElements(s.leaves[0].getType())); break;
  case KernelSpec::kElementwise:
  case KernelSpec::kShape: s.grid = grid1D(numElements(s.root.getType())); break;
  }
  s.lanes = kLanes;
  return success();
}
