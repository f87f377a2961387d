//===- KernelABI.cpp - export kernels in the cpu plugin's format ----------===//
//
// For each lowered kernel `@name(args..., gid x3, grid x3, smem)` adds
// `@tessera_kernel_name(const TsCpuLaunchContext*)` (tessera/cpu_kernel.h)
// that unpacks the launch context and calls it.
//
//===----------------------------------------------------------------------===//
#include "tessera/cpu/Passes.h"

#include <cstddef>

#include "mlir/IR/BuiltinOps.h"
#include "tessera/cpu_kernel.h"

namespace tessera::cpu {
#define GEN_PASS_DEF_CPUKERNELABI
#include "tessera/cpu/Passes.h.inc"
}  // namespace tessera::cpu

using namespace mlir;

namespace {

struct CPUKernelABIPass : tessera::cpu::impl::CPUKernelABIBase<CPUKernelABIPass> {
  using CPUKernelABIBase::CPUKernelABIBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    module.walk([&](LLVM::LLVMFuncOp f) {
      if (f->hasAttr(tessera::cpu::kKernelAttr) && !f.isExternal()) kernels.push_back(f);
    });
    for (LLVM::LLVMFuncOp k : kernels)
      if (failed(wrap(k))) return signalPassFailure();
  }

  LogicalResult wrap(LLVM::LLVMFuncOp kernel) {
    MLIRContext *ctx = kernel.getContext();
    OpBuilder b(kernel);
    Location loc = kernel.getLoc();
    auto i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32),
         i64 = IntegerType::get(ctx, 64);
    auto ptr = [](Type t) { return LLVM::LLVMPointerType::get(t); };
    auto fnTy = kernel.getFunctionType();
    unsigned n = fnTy.getNumParams();
    if (n < 7) return kernel.emitError("kernel lacks the id/grid/shared-memory arguments");
    unsigned nUser = n - 7;

    auto wrapTy = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr(i8)});
    auto wrapper = b.create<LLVM::LLVMFuncOp>(
        loc, (TESSERA_CPU_KERNEL_PREFIX + kernel.getName()).str(), wrapTy);
    Block *entry = wrapper.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value c = entry->getArgument(0);
    auto field = [&](size_t offset, Type t) -> Value {
      Value p = b.create<LLVM::GEPOp>(loc, ptr(i8), c,
                                      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)});
      return b.create<LLVM::LoadOp>(loc, b.create<LLVM::BitcastOp>(loc, ptr(t), p));
    };
    Value args = field(offsetof(TsCpuLaunchContext, args), ptr(ptr(i8)));
    SmallVector<Value> operands;
    for (unsigned i = 0; i < nUser; ++i) {
      Value slot = b.create<LLVM::GEPOp>(loc, ptr(ptr(i8)), args,
                                         ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      Value p = b.create<LLVM::LoadOp>(loc, slot);
      Type t = fnTy.getParamType(i);
      if (t.isa<LLVM::LLVMPointerType>()) {
        operands.push_back(b.create<LLVM::BitcastOp>(loc, t, p));
      } else {  // scalar: a pointer to a copy of its bytes
        operands.push_back(b.create<LLVM::LoadOp>(loc, b.create<LLVM::BitcastOp>(loc, ptr(t), p)));
      }
    }
    for (size_t base : {offsetof(TsCpuLaunchContext, group_id), offsetof(TsCpuLaunchContext, grid)})
      for (int d = 0; d < 3; ++d)
        operands.push_back(b.create<LLVM::ZExtOp>(loc, i64, field(base + 4 * d, i32)));
    Value smem = field(offsetof(TsCpuLaunchContext, shared_memory), ptr(i8));
    operands.push_back(b.create<LLVM::BitcastOp>(loc, fnTy.getParamType(n - 1), smem));
    b.create<LLVM::CallOp>(loc, kernel, operands);
    b.create<LLVM::ReturnOp>(loc, ValueRange{});
    kernel.setLinkage(LLVM::Linkage::Internal);
    return success();
  }
};

}  // namespace
