//===- TileToROCDL.cpp - Tile IR kernels -> LLVM IR for AMDGPU ------------===//
//
//  schedule-to-tile          Schedule IR stages -> Tile IR (shared)
//  kernel bodies             tessera::gpu_lowering (ROCDL forms: wavefront
//                            shuffles, memref.atomic_rmw; an atomicrmw's
//                            default syncscope is the system's, so mesh
//                            scope needs nothing more); one gpu.module +
//                            gpu.func per kernel; shared_alloc buffers
//                            become workgroup attributions (LDS)
//  math.fma                  llvm.intr.fma
//  gpu.shuffle               ds_bpermute (LLVM 16's ROCDL conversion has
//                            no shuffle): the source lane from mbcnt, a
//                            lane outside the wavefront (or the group)
//                            keeps its own value
//  convert-gpu-to-rocdl      upstream (index 64-bit): ids, s_barrier,
//                            memrefs, math -> __ocml_* (linked by
//                            AMDGPUBackend from ROCm's device libraries)
//  bare-pointer entry        tessera::gpu_lowering::addBarePointerEntry
//  translation               one llvm::Module per gpu.module
//===----------------------------------------------------------------------===//
#include "TileToROCDL.h"

#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringMap.h"
#include "tessera/Conversion/TileToGPU/BarePointerEntry.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"
#include "tessera/Dialect/Schedule/Transforms/Passes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::hip {
namespace {

/// A kernel argument the launch ABI can pass: a global buffer (identity
/// layout, static shape or 1-D of any length) or an integer / float scalar.
LogicalResult checkArguments(func::FuncOp f) {
  for (auto [i, ty] : llvm::enumerate(f.getArgumentTypes())) {
    auto mt = ty.dyn_cast<MemRefType>();
    bool anyLength = mt && mt.getRank() == 1 && mt.isDynamicDim(0);
    bool ok = mt ? (mt.hasStaticShape() || anyLength) && mt.getLayout().isIdentity() &&
                       !t::isSharedMemory(mt) && mt.getElementType().isIntOrFloat()
                 : ty.isIndex() || (ty.isIntOrFloat() && !ty.isInteger(1));
    if (!ok)
      return f.emitError() << "hip kernel argument " << i << " has type " << ty
                           << ": expected a statically shaped global memref, a 1-D memref of any "
                              "length (memref<?xT>) or an integer / float scalar";
  }
  return success();
}

LogicalResult moveIntoGpuModule(func::FuncOp f, const ROCDLOptions &options) {
  MLIRContext *ctx = f.getContext();
  Location loc = f.getLoc();
  if (f.getNumResults()) return f.emitError("a Tile IR kernel returns nothing");
  if (failed(checkArguments(f))) return failure();
  gpu_lowering::KernelLoweringOptions klo;
  klo.target = gpu_lowering::GpuTarget::ROCDL;
  klo.subgroupSize = options.wavefront;
  if (failed(gpu_lowering::lowerTileKernelBody(f, klo))) return failure();

  OpBuilder mb(f);
  auto gm = mb.create<gpu::GPUModuleOp>(loc, f.getName());
  OpBuilder gb = OpBuilder::atBlockBegin(gm.getBody());
  auto gf = gb.create<gpu::GPUFuncOp>(loc, f.getName(), f.getFunctionType());
  gf->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  gf.getBody().getBlocks().clear();
  gf.getBody().takeBody(f.getBody());
  SmallVector<func::ReturnOp> rets;
  gf.walk([&](func::ReturnOp r) { rets.push_back(r); });
  for (func::ReturnOp r : rets) {
    OpBuilder rb(r);
    rb.create<gpu::ReturnOp>(r.getLoc());
    r.erase();
  }
  SmallVector<memref::AllocOp> allocs;
  gf.walk([&](memref::AllocOp a) {
    if (t::isSharedMemory(a.getType())) allocs.push_back(a);
  });
  for (memref::AllocOp a : allocs) {
    if (!a.getType().hasStaticShape()) return a.emitOpError("shared memory needs a static shape on hip");
    Value v = gf.addWorkgroupAttribution(a.getType(), a.getLoc());
    a.getResult().replaceAllUsesWith(v);
    a.erase();
  }
  f.erase();
  return success();
}

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

/// math.fma -> llvm.intr.fma (v_fma_f32): the ROCDL conversion of MLIR 16
/// lowers the other math functions to __ocml_* calls but not fma.
LogicalResult lowerFma(gpu::GPUModuleOp gm) {
  SmallVector<math::FmaOp> fmas;
  gm.walk([&](math::FmaOp f) { fmas.push_back(f); });
  for (math::FmaOp f : fmas) {
    if (!f.getType().isa<FloatType>())
      return f.emitOpError("hip lowers math.fma on scalars (vectors are scalarized first)");
    OpBuilder b(f);
    f.replaceAllUsesWith(b.create<LLVM::FMAOp>(f.getLoc(), f.getA(), f.getB(), f.getC()).getResult());
    f.erase();
  }
  return success();
}

}  // namespace

LogicalResult lowerTileToROCDL(ModuleOp input, llvm::LLVMContext &llvmContext,
                               const ROCDLOptions &options, std::vector<ROCDLKernel> *kernels) {
  MLIRContext *ctx = input.getContext();
  DialectRegistry registry;
  registerLLVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadDialect<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect, math::MathDialect,
                   memref::MemRefDialect, ROCDL::ROCDLDialect, scf::SCFDialect,
                   vector::VectorDialect>();

  OwningOpRef<ModuleOp> m(input.clone());
  {
    PassManager pm(ctx);
    pm.addPass(schedule::createScheduleToTile());
    if (failed(pm.run(*m))) return failure();
  }
  std::vector<ROCDLKernel> out;
  llvm::StringMap<SmallVector<Type>> argTypes;
  SmallVector<func::FuncOp> funcs;
  m->walk([&](func::FuncOp f) {
    if (!f.isExternal() && f->hasAttr(t::kGroupSizeAttr)) funcs.push_back(f);
  });
  if (funcs.empty()) return input.emitError("no Tile IR kernel (func.func with tessera_tile.group_size)");
  for (func::FuncOp f : funcs) {
    ROCDLKernel k;
    k.name = f.getName().str();
    auto g = t::getGroupSize(f);
    for (int d = 0; d < 3; ++d) k.group[d] = g[d];
    if (auto a = f->getAttrOfType<DenseI64ArrayAttr>(t::kGridAttr))
      for (auto [i, v] : llvm::enumerate(a.asArrayRef()))
        if (i < 3) k.grid[i] = v;
    argTypes[k.name] = SmallVector<Type>(f.getArgumentTypes());
    if (failed(moveIntoGpuModule(f, options))) return failure();
    out.push_back(std::move(k));
  }
  (*m)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));
  for (auto gm : m->getOps<gpu::GPUModuleOp>())
    if (failed(lowerShuffles(gm, options.wavefront)) || failed(lowerFma(gm))) return failure();
  {
    PassManager pm(ctx);
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    OpPassManager &gpm = pm.nest<gpu::GPUModuleOp>();
    gpm.addPass(createConvertSCFToCFPass());
    gpm.addPass(memref::createExpandOpsPass());  // atomic max/min f -> CAS loop
    gpm.addPass(createLowerGpuOpsToROCDLOpsPass(options.chipset, /*indexBitwidth=*/64,
                                                /*useBarePtrCallConv=*/false, gpu::amd::Runtime::HIP));
    gpm.addPass(createReconcileUnrealizedCastsPass());
    if (failed(pm.run(*m))) return failure();
  }
  for (ROCDLKernel &k : out) {
    auto gm = m->lookupSymbol<gpu::GPUModuleOp>(k.name);
    if (!gm) return input.emitError() << "kernel " << k.name << " was lost in the ROCDL lowering";
    if (failed(gpu_lowering::addBarePointerEntry(gm, argTypes[k.name],
                                                 ROCDL::ROCDLDialect::getKernelFuncAttrName())))
      return failure();
    OwningOpRef<ModuleOp> single(ModuleOp::create(gm.getLoc(), StringRef(k.name)));
    for (Operation &op : gm.getBody()->without_terminator()) single->getBody()->push_back(op.clone());
    k.module = translateModuleToLLVMIR(*single, llvmContext, k.name);
    if (!k.module) return gm.emitError() << "kernel " << k.name << ": translation to LLVM IR failed";
  }
  *kernels = std::move(out);
  return success();
}

}  // namespace tessera::hip
