//===- BarePointerEntry.cpp - one pointer per buffer at a kernel's entry --===//
//
// See tessera/Conversion/TileToGPU/BarePointerEntry.h.
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/TileToGPU/BarePointerEntry.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

/// The converted kernel takes each memref as its descriptor (allocated and
/// aligned pointers, offset, sizes, strides).  Renames it <name>__impl
/// (internal, always inlined) and adds the entry <name> that takes one
/// pointer per buffer, as every plugin's launch passes them.
LogicalResult tessera::gpu_lowering::addBarePointerEntry(gpu::GPUModuleOp gm, ArrayRef<Type> tileArgs,
                                                       StringRef kernelAttrName, unsigned opaqueParams) {
  MLIRContext *ctx = gm.getContext();
  StringAttr kernelAttr = StringAttr::get(ctx, kernelAttrName);
  LLVM::LLVMFuncOp impl;
  gm.walk([&](LLVM::LLVMFuncOp f) {
    if (f->hasAttr(kernelAttr)) impl = f;
  });
  if (!impl) return gm.emitError("the GPU lowering produced no kernel entry");
  std::string name = impl.getName().str();
  if (failed(SymbolTable::replaceAllSymbolUses(impl, StringAttr::get(ctx, name + "__impl"), gm)))
    return failure();
  SymbolTable::setSymbolName(impl, name + "__impl");
  impl->removeAttr(kernelAttr);
  impl.setLinkage(LLVM::Linkage::Internal);
  impl->setAttr("passthrough", ArrayAttr::get(ctx, {StringAttr::get(ctx, "alwaysinline")}));

  auto implType = impl.getFunctionType();
  SmallVector<Type> params;
  unsigned p = 0;
  for (Type ty : tileArgs) {
    if (p >= implType.getNumParams()) return impl.emitError("unexpected kernel signature");
    params.push_back(implType.getParamType(p));
    auto mt = ty.dyn_cast<MemRefType>();
    p += mt ? 3 + 2 * mt.getRank() : 1;
  }
  if (p != implType.getNumParams()) return impl.emitError("unexpected kernel signature");
  for (unsigned i = 0; i < opaqueParams; ++i) params.push_back(LLVM::LLVMPointerType::get(ctx));
  OpBuilder b(impl);
  b.setInsertionPointAfter(impl);
  Location l = impl.getLoc();
  auto entry = b.create<LLVM::LLVMFuncOp>(
      l, name, LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params));
  entry->setAttr(kernelAttr, UnitAttr::get(ctx));
  for (unsigned i = 0; i < opaqueParams; ++i) {
    const unsigned arg = static_cast<unsigned>(tileArgs.size()) + i;
    entry.setArgAttr(arg, LLVM::LLVMDialect::getByValAttrName(),
                     TypeAttr::get(LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), 128)));
    entry.setArgAttr(arg, LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(64));
  }
  Block *block = entry.addEntryBlock();
  b.setInsertionPointToStart(block);
  auto i64 = b.getI64Type();
  auto c = [&](int64_t v) -> Value { return b.create<LLVM::ConstantOp>(l, i64, b.getI64IntegerAttr(v)); };
  SmallVector<Value> args;
  for (auto [i, ty] : llvm::enumerate(tileArgs)) {
    Value a = block->getArgument(i);
    auto mt = ty.dyn_cast<MemRefType>();
    if (!mt) { args.push_back(a); continue; }
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (failed(getStridesAndOffset(mt, strides, offset)))
      return impl.emitError("a buffer argument without strides");
    args.push_back(a);  // allocated
    args.push_back(a);  // aligned
    args.push_back(c(0));
    // A memref<?xT>'s length is not passed (kernels take it as a scalar);
    // no lowered op of a Tile IR kernel reads it.
    for (int64_t d : mt.getShape()) args.push_back(c(ShapedType::isDynamic(d) ? 0 : d));
    for (int64_t s : strides) args.push_back(c(s));
  }
  b.create<LLVM::CallOp>(l, impl, args);
  b.create<LLVM::ReturnOp>(l, ValueRange{});
  return success();
}

