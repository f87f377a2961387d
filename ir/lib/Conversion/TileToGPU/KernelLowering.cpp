//===- KernelLowering.cpp - Tile IR kernel bodies -> gpu/memref ops --------===//
//
// See tessera/Conversion/TileToGPU/KernelLowering.h. One dialect conversion
// per kernel: Tile IR and the vectors it computes on are illegal, every op
// has its pattern (KernelPatterns.h lists the files), and the target's
// limits are checked first so that an error names the op and the reason.
// What follows the conversion on SPIR-V works around SPIR-V's own limits
// (index compares, selects of buffers, float atomic max/min).
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/TileToGPU/KernelLowering.h"

#include "KernelPatterns.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"
#include "tessera/Conversion/ConversionDriver.h"
#include "tessera/Conversion/ElementTypes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;
using tessera::gpu_lowering::kFloatCasAttr;

namespace {

/// MLIR 16's arith -> SPIR-V rejects unsigned compares of index (its
/// bitwidth emulation check); index is i32 in SPIR-V, so compare i32.
void compareIndexAsI32(func::FuncOp f) {
  SmallVector<arith::CmpIOp> cmps;
  f.walk([&](arith::CmpIOp c) {
    if (c.getLhs().getType().isIndex() && c.getPredicate() >= arith::CmpIPredicate::ult) cmps.push_back(c);
  });
  for (arith::CmpIOp c : cmps) {
    OpBuilder cb(c);
    Value x = cb.create<arith::IndexCastOp>(c.getLoc(), cb.getI32Type(), c.getLhs());
    Value y = cb.create<arith::IndexCastOp>(c.getLoc(), cb.getI32Type(), c.getRhs());
    c.replaceAllUsesWith(cb.create<arith::CmpIOp>(c.getLoc(), c.getPredicate(), x, y).getResult());
    c.erase();
  }
}

/// A select of buffers (double buffering) would be an OpSelect of
/// pointers, which needs VariablePointers: select the loaded values and
/// branch around stores instead.
LogicalResult selectValuesNotBuffers(func::FuncOp f) {
  SmallVector<arith::SelectOp> sels;
  f.walk([&](arith::SelectOp s) {
    if (s.getType().isa<MemRefType>()) sels.push_back(s);
  });
  for (arith::SelectOp s : sels) {
    for (Operation *u : llvm::make_early_inc_range(s->getUsers())) {
      OpBuilder ub(u);
      Location l = u->getLoc();
      if (auto ld = dyn_cast<memref::LoadOp>(u)) {
        Value a = ub.create<memref::LoadOp>(l, s.getTrueValue(), ld.getIndices());
        Value c = ub.create<memref::LoadOp>(l, s.getFalseValue(), ld.getIndices());
        ld.replaceAllUsesWith(ub.create<arith::SelectOp>(l, s.getCondition(), a, c).getResult());
        ld.erase();
      } else if (auto st = dyn_cast<memref::StoreOp>(u)) {
        auto ifOp = ub.create<scf::IfOp>(l, s.getCondition(), /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        tb.create<memref::StoreOp>(l, st.getValue(), s.getTrueValue(), st.getIndices());
        OpBuilder eb = ifOp.getElseBodyBuilder();
        eb.create<memref::StoreOp>(l, st.getValue(), s.getFalseValue(), st.getIndices());
        st.erase();
      } else {
        return u->emitOpError("uses a select of buffers, which SPIR-V (without VariablePointers) "
                              "cannot express here");
      }
    }
    s.erase();
  }
  return success();
}

/// Float atomic max/min have no SPIR-V op that MLIR 16 can emit
/// (OpAtomicFMaxEXT/FMinEXT of SPV_EXT_shader_atomic_float_min_max are
/// not in its SPIR-V dialect), and Vulkan's compare-exchange only takes
/// integers while logical addressing forbids a float* -> int* cast.  So a
/// buffer (kernel argument or shared_alloc) that such an atomic targets
/// is retyped to integers of the same width: its loads and stores bitcast,
/// and every atomic on it works on the bits (float ones carry
/// kFloatCasAttr and become a compare-exchange loop in AtomicPattern).
/// The bytes in memory are unchanged, so the host's view of the buffer is
/// too.
LogicalResult retypeFloatAtomics(func::FuncOp f, bool casFloatAdd) {
  llvm::SetVector<Value> bufs;
  f.walk([&](t::AtomicRMWOp o) {
    if (o.getType().isa<FloatType>() &&
        (o.getKind() == t::AtomicKind::max || o.getKind() == t::AtomicKind::min ||
         (casFloatAdd && o.getKind() == t::AtomicKind::add)))
      bufs.insert(o.getMemref());
  });
  if (bufs.empty()) return success();
  MLIRContext *ctx = f.getContext();
  for (Value v : bufs) {
    auto mt = v.getType().cast<MemRefType>();
    auto ft = mt.getElementType().cast<FloatType>();
    auto it = IntegerType::get(ctx, ft.getWidth());
    auto nt = MemRefType::get(mt.getShape(), it, mt.getLayout(), mt.getMemorySpace());
    Value nv;
    auto ba = v.dyn_cast<BlockArgument>();
    if (ba && ba.getOwner() == &f.front()) {
      ba.setType(nt);
      nv = ba;
    } else if (auto al = v.getDefiningOp<memref::AllocOp>()) {
      OpBuilder ab(al);
      nv = ab.create<memref::AllocOp>(al.getLoc(), nt, al.getAlignmentAttr());
    } else {
      return mlir::emitError(v.getLoc(), "float atomic max/min on a buffer that is neither a "
                                         "kernel argument nor a shared_alloc: the SPIR-V "
                                         "lowering cannot retype it to integers");
    }
    for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
      Operation *u = use.getOwner();
      OpBuilder ub(u);
      Location l = u->getLoc();
      if (auto ld = dyn_cast<memref::LoadOp>(u)) {
        Value x = ub.create<memref::LoadOp>(l, nv, ld.getIndices());
        ld.replaceAllUsesWith(ub.create<arith::BitcastOp>(l, ft, x).getResult());
        ld.erase();
      } else if (auto st = dyn_cast<memref::StoreOp>(u)) {
        if (use.getOperandNumber() != 1)
          return u->emitOpError("stores a buffer that float atomics retype to integers");
        Value x = ub.create<arith::BitcastOp>(l, it, st.getValue());
        ub.create<memref::StoreOp>(l, x, nv, st.getIndices());
        st.erase();
      } else if (auto at = dyn_cast<t::AtomicRMWOp>(u)) {
        Value x = ub.create<arith::BitcastOp>(l, it, at.getValue());
        auto na = ub.create<t::AtomicRMWOp>(l, it, at.getKind(), x, nv, at.getIndices(),
                                            at.getScope());
        if (at.getKind() != t::AtomicKind::xchg)  // exchange moves bits as they are
          na->setAttr(kFloatCasAttr, TypeAttr::get(ft));
        at.replaceAllUsesWith(ub.create<arith::BitcastOp>(l, ft, na.getResult()).getResult());
        at.erase();
      } else {
        return u->emitOpError("uses a buffer that float atomic max/min retype to integers; "
                              "the SPIR-V lowering handles only loads, stores and atomics there");
      }
    }
    if (!ba) v.getDefiningOp()->erase();
  }
  f.setType(FunctionType::get(ctx, f.front().getArgumentTypes(), {}));
  return success();
}


}  // namespace

LogicalResult tessera::gpu_lowering::lowerTileKernelBody(func::FuncOp f, const KernelLoweringOptions &options) {
  if (failed(expandTileLoads(f))) return failure();
  // bf16 rounding before the types are converted (no target here has a
  // bf16 type): the target's instruction, else integer code.
  SmallVector<t::RoundToBF16Op> roundings;
  f.walk([&](t::RoundToBF16Op op) { roundings.push_back(op); });
  for (t::RoundToBF16Op op : roundings) {
    OpBuilder b(op);
    op.replaceAllUsesWith(options.roundToBF16 ? options.roundToBF16(b, op.getLoc(), op.getValue())
                                              : elements::roundToBF16Bits(b, op.getLoc(), op.getValue()));
    op.erase();
  }
  KernelContext kernel;
  kernel.f = f;
  kernel.group = t::getGroupSize(f);
  kernel.options = &options;
  // What the target cannot express: named before anything is rewritten.
  if (failed(checkTargetOps(f, kernel)) || failed(checkMmaOps(f, kernel)) || failed(checkVectorOps(f)))
    return failure();
  MLIRContext *ctx = f.getContext();
  RewritePatternSet patterns(ctx);
  populateVectorScalarizationPatterns(patterns);
  populateKernelPatterns(patterns, kernel);
  populateTargetPatterns(patterns, kernel);
  populateMmaPatterns(patterns, kernel);
  ConversionTarget target(*ctx);
  target.addIllegalDialect<t::TileDialect>();
  addVectorScalarizationLegality(target);
  addTargetLegality(target, kernel);
  if (failed(tessera::conversion::applyTilePatterns(f, target, std::move(patterns), "has no SPIR-V lowering")) ||
      failed(finishScalarization(f)))
    return failure();
  if (kernel.nvvm()) return success();  // the rest works around SPIR-V limits
  compareIndexAsI32(f);
  if (failed(selectValuesNotBuffers(f))) return failure();
  return retypeFloatAtomics(f, options.casFloatAdd);
}
