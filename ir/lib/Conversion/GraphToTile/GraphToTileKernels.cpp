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
//
// Where: the plan of steps 1-2 is an analysis (FusionPlan.h: every op is
// checked before any IR changes); step 3 is a dialect conversion
// (LaunchPlanPatterns.h: a conversion target and one pattern per kernel
// kind, fused ops erased) whose patterns fill each kernel with its body
// (KernelBodies.h). This file: the pass, and reading a plan back.
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Conversion/ShapeLimits.h"

#include "LaunchPlanPatterns.h"

#include <limits>

#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
namespace gt = tessera::conversion::graph_to_tile;

namespace {

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
        if (std::string big = tessera::oversizedShapeReason(ty); !big.empty()) {
          // Before getNumElements, which wraps (2^62+1 x 4 became 4).
          op->emitOpError() << "has a tensor " << ty << " that " << big
                            << ": no device addresses that much memory; give it a size that fits";
          return WalkResult::interrupt();
        } else if (auto t = ty.dyn_cast<RankedTensorType>(); t && t.hasStaticShape() && t.getNumElements() == 0) {
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
      if (std::string big = tessera::oversizedShapeReason(a.getType()); !big.empty())
        return f.emitError() << "argument " << a.getArgNumber() << " " << a.getType() << " " << big
                             << ": no device addresses that much memory; give it a size that fits";
      else if (auto t = a.getType().dyn_cast<RankedTensorType>(); t && t.getNumElements() == 0)
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
    gt::Lowerings all;
    SmallVector<Operation *> roots;
    for (func::FuncOp f : fns) {
      if (failed(checkFunction(f)) || failed(all.plan(f, backend))) return signalPassFailure();
      roots.push_back(f);
    }
    if (roots.empty()) return;
    ConversionTarget target(*ctx);
    gt::configureLaunchPlanTarget(target, all);
    RewritePatternSet patterns(ctx);
    gt::populateLaunchPlanPatterns(patterns, all);
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
