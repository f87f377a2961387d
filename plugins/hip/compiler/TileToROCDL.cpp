//===- TileToROCDL.cpp - Tile IR kernels -> LLVM IR for AMDGPU ------------===//
//
// The ROCDL hooks of the shared driver (tessera/Conversion/TileToGPU/
// KernelsToLLVM.h: schedule-to-tile, kernel bodies, gpu.module, bare-pointer
// entry, translation):
//
//  kernel bodies             ROCDL forms: wavefront shuffles (64 lanes on
//                            gfx9, 32 on gfx10+), memref.atomic_rmw (an
//                            atomicrmw's default syncscope is the
//                            system's, so mesh scope needs nothing more)
//  gpu.shuffle               ds_bpermute (LLVM 16's ROCDL conversion has
//                            no shuffle): the source lane from mbcnt, a
//                            lane outside the wavefront (or the group)
//                            keeps its own value
//  wavefront_mma             MFMA on CDNA (Mfma.h), else per-lane FMAs
//  wave32_mma                WMMA on RDNA3 (Wmma.h), else per-lane FMAs
//  math.fma                  llvm.intr.fma
//  convert-gpu-to-rocdl      upstream (index 64-bit): ids, s_barrier,
//                            memrefs, math -> __ocml_* (linked by
//                            AMDGPUBackend from ROCm's device libraries)
//===----------------------------------------------------------------------===//
#include "TileToROCDL.h"

#include "Mfma.h"
#include "Wmma.h"

#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "tessera/Conversion/TileToGPU/KernelsToLLVM.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::hip {
namespace {

/// `llvm.amdgcn.<name>` declared in `gm` (an LLVM intrinsic by its name).
LLVM::LLVMFuncOp intrinsic(gpu::GPUModuleOp gm, StringRef name, Type result, ArrayRef<Type> params) {
  if (auto f = gm.lookupSymbol<LLVM::LLVMFuncOp>(name)) return f;
  OpBuilder b = OpBuilder::atBlockBegin(gm.getBody());
  return b.create<LLVM::LLVMFuncOp>(gm.getLoc(), name, LLVM::LLVMFunctionType::get(result, params));
}

/// gpu.shuffle -> ds_bpermute.  The lane within the wavefront is
/// mbcnt_hi(~0, mbcnt_lo(~0, 0)) (mbcnt_lo alone on wave32); the source
/// lane follows the mode; a source outside [segment, segment + width)
/// (width = the shuffle's, a power of two or the whole group) keeps the
/// lane's own value, as on the other backends.
LogicalResult lowerShuffles(gpu::GPUModuleOp gm, int64_t wavefront) {
  SmallVector<gpu::ShuffleOp> shuffles;
  gm.walk([&](gpu::ShuffleOp s) { shuffles.push_back(s); });
  MLIRContext *ctx = gm.getContext();
  auto i32 = IntegerType::get(ctx, 32);
  for (gpu::ShuffleOp s : shuffles) {
    OpBuilder b(s);
    Location l = s.getLoc();
    auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIntOp>(l, v, 32); };
    auto lo = intrinsic(gm, "llvm.amdgcn.mbcnt.lo", i32, {i32, i32});
    Value lane = b.create<LLVM::CallOp>(l, lo, ValueRange{c(-1), c(0)}).getResult();
    if (wavefront == 64) {
      auto hi = intrinsic(gm, "llvm.amdgcn.mbcnt.hi", i32, {i32, i32});
      lane = b.create<LLVM::CallOp>(l, hi, ValueRange{c(-1), lane}).getResult();
    }
    Value width = s.getWidth(), off = s.getOffset();
    // The segment holding this lane: width lanes from a multiple of width.
    Value segment = b.create<arith::MulIOp>(l, b.create<arith::DivUIOp>(l, lane, width), width);
    Value src;
    switch (s.getMode()) {
    case gpu::ShuffleMode::XOR: src = b.create<arith::XOrIOp>(l, lane, off); break;
    case gpu::ShuffleMode::DOWN: src = b.create<arith::AddIOp>(l, lane, off); break;
    case gpu::ShuffleMode::UP: src = b.create<arith::SubIOp>(l, lane, off); break;
    case gpu::ShuffleMode::IDX: src = b.create<arith::AddIOp>(l, segment, off); break;
    }
    Value end = b.create<arith::AddIOp>(l, segment, width);
    Value valid = b.create<arith::AndIOp>(
        l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, src, segment),
        b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, src, end));
    Value srcOrSelf = b.create<arith::SelectOp>(l, valid, src, lane);
    Value value = s.getValue();
    Value bits = value.getType().isF32() ? b.create<arith::BitcastOp>(l, i32, value).getResult() : value;
    auto perm = intrinsic(gm, "llvm.amdgcn.ds.bpermute", i32, {i32, i32});
    Value addr = b.create<arith::ShLIOp>(l, srcOrSelf, c(2));  // byte address of the lane
    Value got = b.create<LLVM::CallOp>(l, perm, ValueRange{addr, bits}).getResult();
    Value result = value.getType().isF32() ? b.create<arith::BitcastOp>(l, value.getType(), got).getResult()
                                           : got;
    s.getShuffleResult().replaceAllUsesWith(result);
    s.getValid().replaceAllUsesWith(valid);
    s.erase();
  }
  return success();
}

}  // namespace

LogicalResult lowerTileToROCDL(ModuleOp input, llvm::LLVMContext &llvmContext,
                               const ROCDLOptions &options, std::vector<ROCDLKernel> *kernels) {
  MLIRContext *ctx = input.getContext();
  DialectRegistry registry;
  registerROCDLDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadDialect<ROCDL::ROCDLDialect>();
  gpu_lowering::GpuBackendHooks hooks;
  hooks.plugin = "hip";
  hooks.kernelLowering.target = gpu_lowering::GpuTarget::ROCDL;
  hooks.kernelLowering.subgroupSize = options.wavefront;
  if (hasMfma(options.chipset)) {
    const std::string chipset = options.chipset;
    hooks.kernelLowering.wavefrontMma = [chipset](OpBuilder &b, t::WavefrontMmaOp op, ArrayRef<Value> acc,
                                                  Value lane) {
      return lowerWavefrontMmaToMfma(b, op, acc, lane, chipset);
    };
  }
  if (hasWmma(options.chipset))
    hooks.kernelLowering.wave32Mma = [](OpBuilder &b, t::Wave32MmaOp op, ArrayRef<Value> acc, Value lane) {
      return lowerWave32MmaToWmma(b, op, acc, lane);
    };
  hooks.kernelAttrName = ROCDL::ROCDLDialect::getKernelFuncAttrName().str();
  hooks.beforeConversion = [&](gpu::GPUModuleOp gm) -> LogicalResult {
    declareIntrinsics(gm);  // what the WMMA hook calls by name
    if (failed(lowerShuffles(gm, options.wavefront))) return failure();
    return gpu_lowering::lowerFmaToLLVM(gm, "hip");
  };
  hooks.addConversion = [&](OpPassManager &pm) {
    pm.addPass(createLowerGpuOpsToROCDLOpsPass(options.chipset, /*indexBitwidth=*/64,
                                               /*useBarePtrCallConv=*/false, gpu::amd::Runtime::HIP));
  };
  return gpu_lowering::lowerTileKernelsToLLVM(input, llvmContext, hooks, kernels);
}

}  // namespace tessera::hip
