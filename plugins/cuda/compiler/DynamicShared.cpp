//===- DynamicShared.cpp - shared memory above 48 KiB as dynamic shared ---===//
#include "DynamicShared.h"

#include <algorithm>
#include <vector>

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"

namespace tessera::cuda {

namespace {
constexpr unsigned kSharedAddressSpace = 3;
}

uint64_t moveSharedToDynamic(llvm::Module &module) {
  const llvm::DataLayout &layout = module.getDataLayout();
  std::vector<llvm::GlobalVariable *> shared;
  for (llvm::GlobalVariable &g : module.globals())
    if (g.getAddressSpace() == kSharedAddressSpace && g.hasInitializer()) shared.push_back(&g);
  // Largest alignment first: no padding between 1024-aligned stages, the
  // small arrays (mbarriers) after them.
  std::stable_sort(shared.begin(), shared.end(), [&](llvm::GlobalVariable *a, llvm::GlobalVariable *b) {
    return layout.getPreferredAlign(a).value() > layout.getPreferredAlign(b).value();
  });
  uint64_t total = 0, maxAlign = 16;
  std::vector<uint64_t> offsets;
  for (llvm::GlobalVariable *g : shared) {
    const uint64_t align = layout.getPreferredAlign(g).value();
    total = (total + align - 1) / align * align;
    offsets.push_back(total);
    total += layout.getTypeAllocSize(g->getValueType());
    maxAlign = std::max(maxAlign, align);
  }
  if (total <= kMaxStaticSharedBytes) return 0;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx);
  auto *bytes = llvm::ArrayType::get(i8, 0);
  auto *dynamic = new llvm::GlobalVariable(module, bytes, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
                                           /*Initializer=*/nullptr, "__tessera_dynamic_shared", nullptr,
                                           llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  dynamic->setAlignment(llvm::Align(maxAlign));
  for (size_t i = 0; i < shared.size(); ++i) {
    llvm::Constant *at = llvm::ConstantExpr::getInBoundsGetElementPtr(
        i8, dynamic, llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), offsets[i]));
    shared[i]->replaceAllUsesWith(llvm::ConstantExpr::getPointerCast(at, shared[i]->getType()));
    shared[i]->eraseFromParent();
  }
  return (total + 15) / 16 * 16;
}

}  // namespace tessera::cuda
