//===- KernelsToLLVM.cpp - Tile IR kernels -> one llvm::Module each --------===//
//
// See tessera/Conversion/TileToGPU/KernelsToLLVM.h.
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/TileToGPU/KernelsToLLVM.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringMap.h"
#include "tessera/Conversion/TileToGPU/BarePointerEntry.h"
#include "tessera/Dialect/Schedule/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::gpu_lowering {
namespace {

LogicalResult checkArguments(func::FuncOp f, const char *plugin) {
  for (auto [i, ty] : llvm::enumerate(f.getArgumentTypes())) {
    auto mt = ty.dyn_cast<MemRefType>();
    bool anyLength = mt && mt.getRank() == 1 && mt.isDynamicDim(0);
    bool ok = mt ? (mt.hasStaticShape() || anyLength) && mt.getLayout().isIdentity() &&
                       !t::isSharedMemory(mt) && mt.getElementType().isIntOrFloat()
                 : ty.isIndex() || (ty.isIntOrFloat() && !ty.isInteger(1));
    if (!ok)
      return f.emitError() << plugin << " kernel argument " << i << " has type " << ty
                           << ": expected a statically shaped global memref, a 1-D memref of any "
                              "length (memref<?xT>) or an integer / float scalar";
  }
  return success();
}

/// The lowered kernel body -> gpu.module @name { gpu.func @name kernel };
/// shared_alloc (memref.alloc in memory space 3 by now) -> a workgroup
/// attribution: one array per group, as the op means.  `alignments[i]`:
/// the byte alignment attribution i asks for (0: its element's).
LogicalResult moveIntoGpuModule(func::FuncOp f, const char *plugin, int64_t *sharedBytes,
                                SmallVector<int64_t> *alignments) {
  MLIRContext *ctx = f.getContext();
  Location loc = f.getLoc();
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
  *sharedBytes = 0;
  for (memref::AllocOp a : allocs) {
    MemRefType mt = a.getType();
    if (!mt.hasStaticShape()) return a.emitOpError("shared memory needs a static shape on ") << plugin;
    const int64_t align = a.getAlignment().value_or(0);
    if (align > 1) *sharedBytes = (*sharedBytes + align - 1) / align * align;
    *sharedBytes += mt.getNumElements() * ((mt.getElementTypeBitWidth() + 7) / 8);
    alignments->push_back(align);
    Value v = gf.addWorkgroupAttribution(mt, a.getLoc());
    a.getResult().replaceAllUsesWith(v);
    a.erase();
  }
  f.erase();
  return success();
}

}  // namespace

LogicalResult lowerFmaToLLVM(gpu::GPUModuleOp gm, const char *plugin) {
  SmallVector<math::FmaOp> fmas;
  gm.walk([&](math::FmaOp f) { fmas.push_back(f); });
  for (math::FmaOp f : fmas) {
    if (!f.getType().isa<FloatType>())
      return f.emitOpError() << plugin << " lowers math.fma on scalars (vectors are scalarized first)";
    OpBuilder b(f);
    f.replaceAllUsesWith(b.create<LLVM::FMAOp>(f.getLoc(), f.getA(), f.getB(), f.getC()).getResult());
    f.erase();
  }
  return success();
}

LogicalResult lowerTileKernelsToLLVM(ModuleOp input, llvm::LLVMContext &llvmContext,
                                     const GpuBackendHooks &hooks, std::vector<GpuKernel> *kernels) {
  MLIRContext *ctx = input.getContext();
  DialectRegistry registry;
  registerLLVMDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);
  // What KernelLowering and the hooks build (the input may use none of it).
  ctx->loadDialect<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect, math::MathDialect,
                   memref::MemRefDialect, scf::SCFDialect, vector::VectorDialect>();

  OwningOpRef<ModuleOp> m(input.clone());
  {
    PassManager pm(ctx);
    pm.addPass(schedule::createScheduleToTile());
    // bf16 arithmetic of users' kernels in f32 (NVPTX in LLVM 16 cannot
    // select it; the conversions as integer ops every back end has).
    tile::PromoteBF16Options promote;
    promote.bf16Atomics = hooks.plugin == "hip";  // AMDGPU expands them to CAS loops
    pm.addNestedPass<func::FuncOp>(tile::createPromoteBF16(promote));
    if (failed(pm.run(*m))) return failure();
  }
  std::vector<GpuKernel> out;
  llvm::StringMap<SmallVector<Type>> argTypes;
  llvm::StringMap<SmallVector<int64_t>> sharedAlignments;
  SmallVector<func::FuncOp> funcs;
  m->walk([&](func::FuncOp f) {
    if (!f.isExternal() && f->hasAttr(t::kGroupSizeAttr)) funcs.push_back(f);
  });
  if (funcs.empty()) return input.emitError("no Tile IR kernel (func.func with tessera_tile.group_size)");
  for (func::FuncOp f : funcs) {
    GpuKernel k;
    k.name = f.getName().str();
    auto g = t::getGroupSize(f);
    for (int d = 0; d < 3; ++d) k.group[d] = g[d];
    if (auto a = f->getAttrOfType<DenseI64ArrayAttr>(t::kGridAttr))
      for (auto [i, v] : llvm::enumerate(a.asArrayRef()))
        if (i < 3) k.grid[i] = v;
    argTypes[k.name] = SmallVector<Type>(f.getArgumentTypes());
    if (f.getNumResults()) return f.emitError("a Tile IR kernel returns nothing");
    if (failed(checkArguments(f, hooks.plugin))) return failure();
    if (hooks.beforeKernelLowering && failed(hooks.beforeKernelLowering(f))) return failure();
    if (failed(lowerTileKernelBody(f, hooks.kernelLowering))) return failure();
    if (failed(moveIntoGpuModule(f, hooks.plugin, &k.staticSharedBytes, &sharedAlignments[k.name])))
      return failure();
    out.push_back(std::move(k));
  }
  (*m)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));
  if (hooks.beforeConversion)
    for (auto gm : m->getOps<gpu::GPUModuleOp>())
      if (failed(hooks.beforeConversion(gm))) return failure();
  {
    PassManager pm(ctx);
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    OpPassManager &gpm = pm.nest<gpu::GPUModuleOp>();
    gpm.addPass(createConvertSCFToCFPass());
    gpm.addPass(memref::createExpandOpsPass());  // atomic max/min f -> CAS loop
    hooks.addConversion(gpm);
    gpm.addPass(createReconcileUnrealizedCastsPass());
    if (failed(pm.run(*m))) return failure();
  }
  for (GpuKernel &k : out) {
    auto gm = m->lookupSymbol<gpu::GPUModuleOp>(k.name);
    if (!gm) return input.emitError() << "kernel " << k.name << " was lost in the " << hooks.plugin << " lowering";
    const unsigned opaque = hooks.opaqueEntryParams ? hooks.opaqueEntryParams(k.name) : 0;
    if (failed(addBarePointerEntry(gm, argTypes[k.name], hooks.kernelAttrName, opaque))) return failure();
    // MLIR 16's gpu.func lowering makes workgroup attribution i the global
    // __wg_<kernel>_<i> with its element's alignment; raise it where the
    // shared_alloc asked for more (warpgroup_mma's swizzled operands).
    for (auto [i, align] : llvm::enumerate(sharedAlignments[k.name])) {
      if (align <= 1) continue;
      auto g = gm.lookupSymbol<LLVM::GlobalOp>(("__wg_" + k.name + "_" + std::to_string(i)));
      if (!g) return gm.emitError() << "kernel " << k.name << ": shared buffer " << i << " was lost in the "
                                    << hooks.plugin << " lowering";
      if (g.getAlignment().value_or(0) < static_cast<uint64_t>(align))
        g.setAlignmentAttr(IntegerAttr::get(IntegerType::get(ctx, 64), align));
    }
    OwningOpRef<ModuleOp> single(ModuleOp::create(gm.getLoc(), StringRef(k.name)));
    for (Operation &op : gm.getBody()->without_terminator()) single->getBody()->push_back(op.clone());
    k.module = translateModuleToLLVMIR(*single, llvmContext, k.name);
    if (!k.module) return gm.emitError() << "kernel " << k.name << ": translation to LLVM IR failed";
  }
  *kernels = std::move(out);
  return success();
}

}  // namespace tessera::gpu_lowering
