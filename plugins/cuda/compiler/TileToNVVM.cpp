//===- TileToNVVM.cpp - Tile IR kernels -> LLVM IR for NVPTX ---------------===//
//
// The NVVM hooks of the shared driver (tessera/Conversion/TileToGPU/
// KernelsToLLVM.h: schedule-to-tile, kernel bodies, gpu.module, bare-pointer
// entry, translation):
//
//  mesh-scope atomics        inline PTX atom.sys.<op> (global memory)
//  cp_async (sm_80+)         cp.async.{ca,cg}.shared.global + commit /
//                            wait_group (before sm_80: a synchronous copy)
//  subgroup_mma (sm_80+)     ldmatrix + mma.sync (MmaSync.h; before sm_80
//                            the shared per-lane FMAs)
//  kernel bodies             NVVM forms: warp shuffles, memref.atomic_rmw
//  math -> libdevice         math.<fn> on f32/f64 -> calls of __nv_<fn>[f]
//                            (linked from libdevice.10.bc by PTXBackend);
//                            math.fma -> llvm.intr.fma
//  convert-gpu-to-nvvm       upstream (index 64-bit): thread/block ids,
//                            barriers, shuffles, memrefs, arith, cf
//===----------------------------------------------------------------------===//
#include "TileToNVVM.h"

#include "MmaSync.h"
#include "Tma.h"
#include "Wgmma.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/ADT/StringMap.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"
#include "tessera/Conversion/TileToGPU/KernelsToLLVM.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;
namespace t = tessera::tile;

namespace tessera::cuda {
namespace {

/// Byte address of element `indices` of `m`: its aligned pointer (as i64)
/// plus the strided offset.  Identity or static-strided layouts only.
FailureOr<Value> elementAddress(OpBuilder &b, Location l, Value m, ValueRange indices, Operation *op) {
  auto mt = m.getType().cast<MemRefType>();
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (failed(getStridesAndOffset(mt, strides, offset)) || ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return op->emitOpError("needs a buffer with static strides on cuda, not ") << mt;
  auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(l, v); };
  Value linear = c(offset);
  for (auto [idx, stride] : llvm::zip(indices, strides))
    linear = b.create<arith::AddIOp>(l, linear, b.create<arith::MulIOp>(l, idx, c(stride)));
  const int64_t bytes = (mt.getElementTypeBitWidth() + 7) / 8;
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(l, m);
  Value addr = b.create<arith::AddIOp>(l, base, b.create<arith::MulIOp>(l, linear, c(bytes)));
  return b.create<arith::IndexCastOp>(l, b.getI64Type(), addr).getResult();
}

/// Mesh-scope atomics (visible to the host and peer devices) on global
/// memory -> inline PTX `atom.sys.<op>` on the element's generic address:
/// LLVM 16's NVPTX back end writes every atomicrmw as a .gpu-scope `atom`
/// whatever its syncscope.  On shared memory, which only the group sees,
/// mesh scope is the group's: left to memref.atomic_rmw.
LogicalResult lowerSystemAtomics(func::FuncOp f, bool meshAtomics) {
  SmallVector<t::AtomicRMWOp> atomics;
  f.walk([&](t::AtomicRMWOp o) {
    if (o.getScope() == t::AtomicScope::mesh &&
        !t::isSharedMemory(o.getMemref().getType().cast<MemRefType>()))
      atomics.push_back(o);
  });
  for (t::AtomicRMWOp o : atomics) {
    if (!meshAtomics)
      return o.emitOpError(
          "has scope 'mesh' (the host and peer devices), and the target device's atomics on "
          "host memory are not atomic with the host's (mesh_atomics=false: "
          "CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED is 0, e.g. PCIe without atomics). Use "
          "scope = device and combine across devices with a collective");
    OpBuilder b(o);
    Location l = o.getLoc();
    Type ty = o.getType();
    bool fl = ty.isa<FloatType>();
    unsigned w = ty.isIntOrFloat() ? ty.getIntOrFloatBitWidth() : 0;
    if (w != 32 && w != 64)
      return o.emitOpError("a mesh-scope atomic on cuda takes a 32- or 64-bit value, not ") << ty;
    std::string op;
    switch (o.getKind()) {
    case t::AtomicKind::add: op = fl ? "add.f" : "add.u"; break;
    case t::AtomicKind::max: op = "max.s"; break;
    case t::AtomicKind::min: op = "min.s"; break;
    case t::AtomicKind::xchg: op = "exch.b"; break;
    }
    if (fl && (o.getKind() == t::AtomicKind::max || o.getKind() == t::AtomicKind::min))
      return o.emitOpError("float max/min at mesh scope is not lowered on cuda (PTX has no "
                           "atom.sys.max.f32); use scope = device");
    op += std::to_string(w);
    FailureOr<Value> addr64 = elementAddress(b, l, o.getMemref(), o.getIndices(), o);
    if (failed(addr64)) return failure();
    const char *reg = fl ? (w == 32 ? "f" : "d") : (w == 32 ? "r" : "l");
    std::string constraints = std::string("=") + reg + ",l," + reg;
    auto asmOp = b.create<LLVM::InlineAsmOp>(
        l, ty, ValueRange{*addr64, o.getValue()}, "atom.sys." + op + " $0, [$1], $2;", constraints,
        /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::AsmDialectAttr(), ArrayAttr());
    o.replaceAllUsesWith(asmOp.getResult(0));
    o.erase();
  }
  return success();
}

/// Orders the generic proxy's shared-memory writes before the async
/// proxy's reads (wgmma operands).
constexpr const char *kProxyFence = "fence.proxy.async.shared::cta;";

/// sm_80 and up: cp_async -> cp.async (.cg for 16 bytes, .ca for 4 and 8)
/// from global to shared memory, cp_async_commit / cp_async_wait ->
/// cp.async.commit_group / wait_group.  Before sm_80 the shared lowering
/// copies synchronously.  The addresses must be aligned to the copy's size,
/// as Tile IR's cp_async requires.
///
/// With `wgmma`, a kernel that multiplies with warpgroup_mma fences the
/// async proxy after each wait: cp.async writes shared memory through the
/// generic proxy, which wgmma's operand reads (the async proxy) see only
/// after fence.proxy.async, issued by the writing lanes before the barrier
/// that hands the slice over.
LogicalResult lowerAsyncCopies(func::FuncOp f, bool wgmma) {
  MLIRContext *ctx = f.getContext();
  bool proxyFence = false;
  if (wgmma) f.walk([&](t::WarpgroupMmaOp) { proxyFence = true; });
  SmallVector<Operation *> ops;
  f.walk([&](Operation *op) {
    if (isa<t::CpAsyncOp, t::CpAsyncCommitOp, t::CpAsyncWaitOp>(op)) ops.push_back(op);
  });
  auto i8 = IntegerType::get(ctx, 8);
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location l = op->getLoc();
    if (isa<t::CpAsyncCommitOp>(op)) {
      b.create<NVVM::CpAsyncCommitGroupOp>(l);
    } else if (auto w = dyn_cast<t::CpAsyncWaitOp>(op)) {
      b.create<NVVM::CpAsyncWaitGroupOp>(l, static_cast<uint32_t>(w.getPending()));
      if (proxyFence)
        b.create<LLVM::InlineAsmOp>(l, TypeRange{}, ValueRange{}, kProxyFence, "",
                                    /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::AsmDialectAttr(),
                                    ArrayAttr());
    } else {
      auto cp = cast<t::CpAsyncOp>(op);
      auto src = cp.getSource().getType().cast<MemRefType>();
      if (t::isSharedMemory(src) || !t::isSharedMemory(cp.getTarget().getType().cast<MemRefType>()))
        return op->emitOpError("copies global to shared memory on cuda");
      const int64_t bytes = cp.getElements() * ((src.getElementTypeBitWidth() + 7) / 8);
      auto s = elementAddress(b, l, cp.getSource(), cp.getSrcIndices(), op);
      auto d = elementAddress(b, l, cp.getTarget(), cp.getDstIndices(), op);
      if (failed(s) || failed(d)) return failure();
      // The generic address of global memory -> the global window; the
      // shared memref's aligned pointer is already a shared-window address.
      Value generic = b.create<LLVM::IntToPtrOp>(l, LLVM::LLVMPointerType::get(i8), *s);
      Value global = b.create<LLVM::AddrSpaceCastOp>(l, LLVM::LLVMPointerType::get(i8, 1), generic);
      Value shared = b.create<LLVM::IntToPtrOp>(l, LLVM::LLVMPointerType::get(i8, 3), *d);
      b.create<NVVM::CpAsyncOp>(l, shared, global, static_cast<uint32_t>(bytes),
                                bytes == 16 ? UnitAttr::get(ctx) : UnitAttr());
    }
    op->erase();
  }
  return success();
}

/// With `wgmma`, a kernel whose lanes store to shared memory that
/// warpgroup_mma then reads (the probabilities of the attention kernel)
/// fences the async proxy before each barrier: wgmma reads its operands
/// through the async proxy, which sees the generic proxy's stores only
/// after fence.proxy.async by the storing lanes; the barrier then hands
/// them over (Tile IR's barrier makes shared stores visible to every
/// reader, warpgroup_mma included).
void fenceSharedStoresForWgmma(func::FuncOp f) {
  bool wgmma = false, sharedStores = false;
  f.walk([&](Operation *op) {
    if (isa<t::WarpgroupMmaOp>(op)) wgmma = true;
    if (auto st = dyn_cast<memref::StoreOp>(op))
      sharedStores |= t::isSharedMemory(st.getMemRef().getType().cast<MemRefType>());
  });
  if (!wgmma || !sharedStores) return;
  f.walk([&](t::BarrierOp barrier) {
    // (A cp.async wait may have fenced already: lowerAsyncCopies.)
    if (auto prev = dyn_cast_or_null<LLVM::InlineAsmOp>(barrier->getPrevNode());
        prev && prev.getAsmString() == kProxyFence)
      return;
    OpBuilder b(barrier);
    b.create<LLVM::InlineAsmOp>(barrier.getLoc(), TypeRange{}, ValueRange{}, kProxyFence, "",
                                /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::AsmDialectAttr(),
                                ArrayAttr());
  });
}

/// math.<fn> -> a call of libdevice's __nv_<fn> (f64) / __nv_<fn>f (f32):
/// the NVPTX back end has no instruction for exp, log, tanh, erf, ...; the
/// libdevice versions are the ones CUDA C++ uses.  math.fma is an LLVM
/// intrinsic the back end selects (fma.rn).
LogicalResult mathToLibdevice(gpu::GPUModuleOp gm) {
  static const llvm::StringMap<StringRef> kNames = {
      {"exp", "exp"},     {"exp2", "exp2"},   {"expm1", "expm1"}, {"log", "log"},
      {"log2", "log2"},   {"log10", "log10"}, {"log1p", "log1p"}, {"sqrt", "sqrt"},
      {"rsqrt", "rsqrt"}, {"tanh", "tanh"},   {"erf", "erf"},     {"sin", "sin"},
      {"cos", "cos"},     {"tan", "tan"},     {"atan", "atan"},   {"atan2", "atan2"},
      {"powf", "pow"},    {"absf", "fabs"},   {"floor", "floor"}, {"ceil", "ceil"},
      {"round", "round"}, {"copysign", "copysign"}, {"cbrt", "cbrt"}};
  SmallVector<Operation *> ops;
  if (failed(gpu_lowering::lowerFmaToLLVM(gm, "cuda"))) return failure();
  gm.walk([&](Operation *op) {
    if (isa_and_nonnull<math::MathDialect>(op->getDialect())) ops.push_back(op);
  });
  OpBuilder db = OpBuilder::atBlockBegin(gm.getBody());
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location l = op->getLoc();
    auto it = kNames.find(op->getName().stripDialect());
    if (it == kNames.end() || op->getNumResults() != 1) continue;  // upstream patterns, or a diagnostic
    Type ty = op->getResult(0).getType();
    if (!ty.isF32() && !ty.isF64())
      return op->emitOpError("cuda lowers math functions on f32 and f64 (widen ")
             << ty << " first)";
    std::string callee = "__nv_" + it->second.str() + (ty.isF32() ? "f" : "");
    auto fn = gm.lookupSymbol<LLVM::LLVMFuncOp>(callee);
    if (!fn) {
      SmallVector<Type> params(op->getNumOperands(), ty);
      fn = db.create<LLVM::LLVMFuncOp>(l, callee, LLVM::LLVMFunctionType::get(ty, params));
    }
    auto call = b.create<LLVM::CallOp>(l, fn, op->getOperands());
    op->getResult(0).replaceAllUsesWith(call.getResult());
    op->erase();
  }
  return success();
}

}  // namespace

LogicalResult lowerTileToNVVM(ModuleOp input, llvm::LLVMContext &llvmContext,
                              const NVVMOptions &options, std::vector<NVVMKernel> *kernels,
                              std::map<std::string, std::vector<std::string>> *tensorMaps) {
  MLIRContext *ctx = input.getContext();
  DialectRegistry registry;
  registerNVVMDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadDialect<NVVM::NVVMDialect>();
  gpu_lowering::GpuBackendHooks hooks;
  hooks.plugin = "cuda";
  hooks.kernelLowering.target = gpu_lowering::GpuTarget::NVVM;
  hooks.kernelAttrName = NVVM::NVVMDialect::getKernelFuncAttrName().str();
  if (options.tensorCores) hooks.kernelLowering.subgroupMma = lowerSubgroupMmaToMmaSync;
  // sm_80+: one cvt.rn.bf16.f32 per bf16 element stored (a NaN becomes the
  // canonical 0x7fff) instead of ten integer instructions.
  if (options.tensorCores)
    hooks.kernelLowering.roundToBF16 = [](OpBuilder &b, Location l, Value v) -> Value {
      auto asmOp = b.create<LLVM::InlineAsmOp>(l, b.getI16Type(), ValueRange{v}, "cvt.rn.bf16.f32 $0, $1;", "=h,f",
                                               /*has_side_effects=*/false, /*is_align_stack=*/false,
                                               LLVM::AsmDialectAttr(), ArrayAttr());
      return asmOp.getResult(0);
    };
  if (options.wgmma) {
    hooks.kernelLowering.warpgroupMma = lowerWarpgroupMmaToWgmma;
    hooks.kernelLowering.warpgroupMmaWait = lowerWarpgroupMmaWait;
  }
  hooks.beforeKernelLowering = [&](func::FuncOp f) -> LogicalResult {
    if (failed(lowerSystemAtomics(f, options.meshAtomics))) return failure();
    if (options.tma) {
      std::vector<std::string> maps;
      if (failed(lowerTileLoadsToTma(f, &maps))) return failure();
      if (!maps.empty()) (*tensorMaps)[f.getName().str()] = std::move(maps);
    } else if (failed(gpu_lowering::expandTileLoads(f))) {
      return failure();
    }
    if (options.asyncCopies && failed(lowerAsyncCopies(f, options.wgmma))) return failure();
    if (options.wgmma) fenceSharedStoresForWgmma(f);
    return success();
  };
  hooks.beforeConversion = mathToLibdevice;
  hooks.opaqueEntryParams = [tensorMaps](llvm::StringRef name) -> unsigned {
    auto it = tensorMaps->find(name.str());
    return it == tensorMaps->end() ? 0 : static_cast<unsigned>(it->second.size());
  };
  hooks.addConversion = [](OpPassManager &pm) { pm.addPass(createLowerGpuOpsToNVVMOpsPass(/*indexBitwidth=*/64)); };
  return gpu_lowering::lowerTileKernelsToLLVM(input, llvmContext, hooks, kernels);
}

}  // namespace tessera::cuda
