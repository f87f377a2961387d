//===- PromoteBF16.cpp - bf16 arithmetic in f32, conversions as integers --===//
//
// See the pass description (Passes.td).  Runs on Tile IR kernels before a
// back end lowers them (cpu, and the GPU back ends through
// gpu_lowering::lowerTileKernelsToLLVM).  Kernels from Graph IR never hold
// bf16 arithmetic (they store bf16 through round_to_bf16); users' own do.
//
//===----------------------------------------------------------------------===//
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

namespace tessera::tile {
#define GEN_PASS_DEF_PROMOTEBF16
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
}  // namespace tessera::tile

using namespace mlir;

namespace {

bool isBF16(Type t) { return getElementTypeOrSelf(t).isBF16(); }

/// `t` with its element type replaced (scalars and vectors).
Type withElement(Type t, Type element) {
  if (auto v = t.dyn_cast<VectorType>()) return VectorType::get(v.getShape(), element);
  return element;
}

/// A constant of `type`'s element width (scalar, or a splat vector).
Value intConstant(OpBuilder &b, Location l, Type type, int64_t value) {
  Type element = getElementTypeOrSelf(type);
  if (auto v = type.dyn_cast<VectorType>())
    return b.create<arith::ConstantOp>(l, DenseElementsAttr::get(v, b.getIntegerAttr(element, value)));
  return b.create<arith::ConstantOp>(l, b.getIntegerAttr(element, value));
}

/// f32 -> bf16, rounding to nearest even; a NaN stays a quiet NaN of its sign.
Value truncToBF16(OpBuilder &b, Location l, Value f32) {
  Type i32 = withElement(f32.getType(), b.getI32Type()), i16 = withElement(f32.getType(), b.getI16Type());
  Value bits = b.create<arith::BitcastOp>(l, i32, f32);
  Value lsb = b.create<arith::AndIOp>(l, b.create<arith::ShRUIOp>(l, bits, intConstant(b, l, i32, 16)),
                                      intConstant(b, l, i32, 1));
  Value rounded = b.create<arith::AddIOp>(l, b.create<arith::AddIOp>(l, bits, intConstant(b, l, i32, 0x7FFF)), lsb);
  Value high = b.create<arith::ShRUIOp>(l, rounded, intConstant(b, l, i32, 16));
  Value quiet = b.create<arith::OrIOp>(l, b.create<arith::ShRUIOp>(l, bits, intConstant(b, l, i32, 16)),
                                       intConstant(b, l, i32, 0x40));
  Value isNaN = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, f32, f32);
  Value chosen = b.create<arith::SelectOp>(l, isNaN, quiet, high);
  Value half = b.create<arith::TruncIOp>(l, i16, chosen);
  return b.create<arith::BitcastOp>(l, withElement(f32.getType(), b.getBF16Type()), half);
}

/// bf16 -> f32: exact (the bf16 bits are the f32's high half).
Value extFromBF16(OpBuilder &b, Location l, Value bf16) {
  Type i32 = withElement(bf16.getType(), b.getI32Type()), i16 = withElement(bf16.getType(), b.getI16Type());
  Value half = b.create<arith::BitcastOp>(l, i16, bf16);
  Value wide = b.create<arith::ShLIOp>(l, b.create<arith::ExtUIOp>(l, i32, half), intConstant(b, l, i32, 16));
  return b.create<arith::BitcastOp>(l, withElement(bf16.getType(), b.getF32Type()), wide);
}

/// A float op of arith or math that computes on its operands' type.
bool isFloatArithmetic(Operation *op) {
  Dialect *d = op->getDialect();
  if (!d || (d->getNamespace() != "arith" && d->getNamespace() != "math")) return false;
  // Moves and conversions between floats need no arithmetic (the latter
  // are expanded below); int <-> bf16 conversions go through f32.
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::BitcastOp, arith::ConstantOp, arith::SelectOp>(op)) return false;
  return op->getNumRegions() == 0 &&
         (llvm::any_of(op->getOperandTypes(), isBF16) || llvm::any_of(op->getResultTypes(), isBF16));
}

struct PromoteBF16Pass : tessera::tile::impl::PromoteBF16Base<PromoteBF16Pass> {
  using PromoteBF16Base::PromoteBF16Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    OpBuilder b(fn.getContext());
    if (!bf16Atomics) {
      WalkResult atomics = fn.walk([&](tessera::tile::AtomicRMWOp op) {
        if (!isBF16(op.getValue().getType())) return WalkResult::advance();
        op.emitOpError() << "on bf16 memory is not supported by this back end (LLVM 16 has no bf16 "
                            "atomic read-modify-write for it): accumulate in an f32 buffer";
        return WalkResult::interrupt();
      });
      if (atomics.wasInterrupted()) return signalPassFailure();
    }
    // 1. Arithmetic on bf16 in f32.
    SmallVector<Operation *> arithmetic;
    fn.walk([&](Operation *op) {
      if (isFloatArithmetic(op)) arithmetic.push_back(op);
    });
    for (Operation *op : arithmetic) {
      b.setInsertionPoint(op);
      Location l = op->getLoc();
      OperationState state(l, op->getName());
      for (Value v : op->getOperands())
        state.operands.push_back(isBF16(v.getType())
                                     ? b.create<arith::ExtFOp>(l, withElement(v.getType(), b.getF32Type()), v)
                                     : v);
      for (Type t : op->getResultTypes()) state.types.push_back(isBF16(t) ? withElement(t, b.getF32Type()) : t);
      state.attributes = op->getAttrs();
      Operation *wide = b.create(state);
      for (auto [old, now] : llvm::zip(op->getResults(), wide->getResults()))
        old.replaceAllUsesWith(isBF16(old.getType()) ? b.create<arith::TruncFOp>(l, old.getType(), now).getResult()
                                                     : now);
      op->erase();
    }
    // 2. Conversions between bf16 and f32 (also those of the kernel
    // itself) as integer ops; other widths go through f32.
    SmallVector<Operation *> conversions;
    fn.walk([&](Operation *op) {
      if (auto t = dyn_cast<arith::TruncFOp>(op); t && isBF16(t.getType())) conversions.push_back(op);
      if (auto e = dyn_cast<arith::ExtFOp>(op); e && isBF16(e.getIn().getType())) conversions.push_back(op);
    });
    for (Operation *op : conversions) {
      b.setInsertionPoint(op);
      Location l = op->getLoc();
      Value result;
      if (auto t = dyn_cast<arith::TruncFOp>(op)) {
        Value in = t.getIn();
        Type f32 = withElement(in.getType(), b.getF32Type());
        if (in.getType() != f32) in = getElementTypeOrSelf(in.getType()).getIntOrFloatBitWidth() > 32
                                          ? b.create<arith::TruncFOp>(l, f32, in).getResult()
                                          : b.create<arith::ExtFOp>(l, f32, in).getResult();
        result = truncToBF16(b, l, in);
      } else {
        auto e = cast<arith::ExtFOp>(op);
        result = extFromBF16(b, l, e.getIn());
        if (result.getType() != e.getType()) result = b.create<arith::ExtFOp>(l, e.getType(), result);
      }
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }
};

}  // namespace
