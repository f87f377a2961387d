//===- TileToSPIRV.cpp - Tile IR kernels -> SPIR-V for Vulkan -------------===//
//
// The whole Vulkan code generator in one translation unit. With
// client-api=opencl (VulkanTargetOptions::openclKernel) the same pipeline
// makes OpenCL Kernels for Level Zero instead: Kernel/Addresses/Physical64,
// buffers and scalars as entry-point parameters (CrossWorkgroup pointers),
// 64-bit indices, CrossWorkgroupMemory atomics, no push constants and no
// SignedZeroInfNanPreserve (docs/spirv-lowering.md, "OpenCL Kernels"). The
// Vulkan pipeline:
//
//  tessera-tile-to-gpu   Tile IR kernel -> gpu.func in a gpu.module with the
//                        Vulkan target environment (below)
//  map-memref-spirv-storage-class (upstream, client-api=vulkan): memory
//                        space 0 -> StorageBuffer, 3 -> Workgroup
//  tessera-gpu-to-spirv  one full conversion with the upstream GPU, SCF
//                        (structured spirv.mlir.selection / loop: MLIR 16's
//                        convert-gpu-to-spirv has no scf patterns), arith,
//                        math, memref and func patterns plus Tessera's
//                        atomics; scalar arguments -> one PushConstant block
//  spirv-lower-abi-attrs, spirv-update-vce (upstream)
//  tessera-serialize-spirv / compileForVulkan: mlir::spirv::serialize
//
// Tile IR -> SPIR-V (Shader, GLCompute, Logical GLSL450; docs/spirv-lowering.md
// has the full table, the capabilities and the plugin's device checks):
//
//  group_id d / group_count d     WorkgroupId / NumWorkgroups builtins
//  lane_id d                      LocalInvocationId builtin
//  lane_count d                   constant from the group size, which is
//                                 the entry point's LocalSize
//  tile_id                        x + y*gx + z*gx*gy of the above
//  subgroup_size                  SubgroupSize builtin (GroupNonUniform),
//                                 clamped to the group's lane count.
//                                 Subgroups are assumed made of
//                                 consecutive lane ids; the Vulkan plugin
//                                 requests full subgroups for kernels that
//                                 use them (REQUIRE_FULL_SUBGROUPS, where
//                                 the group's X is a multiple of the
//                                 subgroup size); reductions are over the
//                                 active lanes
//  shared_alloc                   a Workgroup variable (swizzle: ignored)
//  barrier                        spirv.ControlBarrier Workgroup, Workgroup,
//                                 AcquireRelease|WorkgroupMemory
//  cp_async                       synchronous element copy; commit/wait
//                                 vanish
//  load / store (vector<N>)       N scalar loads / stores (SPIR-V vectors
//                                 have at most 4 components, so every
//                                 vector value is scalarized; then
//                                 VectorizeBufferAccess.cpp regroups
//                                 aligned quads of a buffer's accesses
//                                 into vec4 loads / stores: elementwise
//                                 arith/math ops, broadcasts, vector.insert/
//                                 extract, constants, scf.for iter_args)
//  mma (MxK * KxN + MxN)          per lane (each lane owns its fragments,
//                                 as on the cpu): M*N*K GL Fma, k outermost
//                                 (integers: IMul + IAdd); f16 widens to
//                                 f32, i8 to i32 first (bf16/fp8: no SPIR-V
//                                 type in MLIR 16, a diagnostic).  No
//                                 cooperative matrices (lavapipe has none)
//  dot                            scalar multiply-add chain
//  subgroup_reduce add|max|min    GroupNonUniform{F,I}Add/{F,S}Max/{F,S}Min
//                                 Reduce, Subgroup scope
//  shuffle xor|idx                GroupNonUniformShuffleXor / Shuffle
//  shuffle down|up                GroupNonUniformShuffleDown / Up
//                                 (GroupNonUniformShuffleRelative) + a
//                                 select of the lane's own value where the
//                                 source lane is outside its subgroup
//  atomic_rmw                     OpAtomic{IAdd,SMax,SMin,Exchange} (i32;
//                                 i64 with Int64Atomics), OpAtomicFAddEXT
//                                 for f32 add (float-atomic-add=cas: the
//                                 loop below instead); f32 max/min: relaxed
//                                 compare-exchange loop between release /
//                                 acquire fences, on the bits of a buffer
//                                 retyped to i32 (NaN propagates; no
//                                 VK_EXT_shader_atomic_float2 needed).
//                                 Scope tile/group -> Workgroup,
//                                 device -> Device (Workgroup on shared
//                                 memory), mesh -> a diagnostic (Vulkan has
//                                 no system scope); semantics
//                                 AcquireRelease|Uniform- or WorkgroupMemory
//  math                           GLSL.std.450 ops
//  scalar types                   i8/i16/i32/i64, f16/f32/f64 (Int8, Int16,
//                                 Int64, Float16, Float64, 8/16-bit storage
//                                 capabilities: allowed by the target env,
//                                 recorded by spirv-update-vce when used)
//  kernel arguments               memrefs: StorageBuffer variables, set 0,
//                                 bindings 0..n-1 in argument order;
//                                 scalars: members of one PushConstant
//                                 block, in argument order at naturally
//                                 aligned offsets (the Vulkan plugin reads
//                                 the offsets from the binary)
//
// Not lowered (a diagnostic): bf16/fp8 buffers, scalars and mma fragments,
// i1 scalars, 16/64-bit float atomics,
// float atomic max/min on a buffer view, vectors of rank > 2 or carried by
// anything but scf.for (ir/test/Target/SPIRV/invalid.mlir).
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/TileToSPIRV/Passes.h"
#include "NarrowIntegerLiterals.h"

#include <cmath>
#include <fstream>

#include "mlir/Conversion/ArithToSPIRV/ArithToSPIRV.h"
#include "mlir/Conversion/FuncToSPIRV/FuncToSPIRV.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRV.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRV.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRVPass.h"
#include "mlir/Conversion/SCFToSPIRV/SCFToSPIRV.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/Passes.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"
#include "tessera/Dialect/Schedule/Transforms/Passes.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::spv {
#define GEN_PASS_DEF_TILETOGPU
#define GEN_PASS_DEF_GPUTOSPIRV
#define GEN_PASS_DEF_SERIALIZESPIRV
#include "tessera/Conversion/TileToSPIRV/Passes.h.inc"
}  // namespace tessera::spv

using namespace mlir;
namespace t = tessera::tile;
using tessera::gpu_lowering::kFloatCasAttr;

namespace {

/// Vulkan 1.1+ Shader target: SPIR-V up to 1.3 with subgroup operations
/// (shuffles, relative shuffles, arithmetic), float atomic add, and the
/// non-32-bit scalar types (Int8/16/64, Float16/64) in arithmetic, storage
/// buffers and push constants.  The environment only says what a kernel MAY
/// use: spirv-update-vce then records exactly what the module does use, and
/// the Vulkan plugin checks each recorded capability against the device's
/// features when the module is loaded (plugins/vulkan/executable.cpp).
constexpr const char kTargetEnv[] =
    "#spirv.target_env<#spirv.vce<v1.3, [Shader, GroupNonUniform, "
    "GroupNonUniformArithmetic, GroupNonUniformShuffle, GroupNonUniformShuffleRelative, "
    "AtomicFloat32AddEXT, Int8, Int16, Int64, Int64Atomics, Float16, Float64, "
    "StorageBuffer16BitAccess, StoragePushConstant16, StorageBuffer8BitAccess, "
    "StoragePushConstant8], "
    "[SPV_KHR_storage_buffer_storage_class, SPV_EXT_shader_atomic_float_add, "
    "SPV_KHR_16bit_storage, SPV_KHR_8bit_storage]>, "
    "api=Vulkan, #spirv.resource_limits<max_compute_workgroup_invocations = 1024, "
    "max_compute_workgroup_size = [1024, 1024, 64]>>";

/// OpenCL Kernel target (Level Zero): SPIR-V 1.2 with physical 64-bit
/// addressing, subgroups (SPV_KHR subgroup ops are core GroupNonUniform in
/// 1.3: OpenCL 3.0 drivers take 1.3 modules? no: Level Zero takes up to
/// SPIR-V 1.2 everywhere, and cl_khr_subgroup_* ops need 1.3), so 1.3 only
/// where a kernel uses subgroups is left to spirv-update-vce.
constexpr const char kKernelTargetEnv[] =
    "#spirv.target_env<#spirv.vce<v1.3, [Kernel, Addresses, GroupNonUniform, "
    "GroupNonUniformArithmetic, GroupNonUniformShuffle, GroupNonUniformShuffleRelative, "
    "AtomicFloat32AddEXT, Int8, Int16, Int64, Int64Atomics, Float16, Float16Buffer, Float64], "
    "[SPV_EXT_shader_atomic_float_add]>, "
    "api=OpenCL, #spirv.resource_limits<max_compute_workgroup_invocations = 1024, "
    "max_compute_workgroup_size = [1024, 1024, 64]>>";

/// bf16 and the fp8 types: no SPIR-V type in MLIR 16 (no SPV_KHR_bfloat16).
bool noSPIRVType(Type t) {
  return t.isBF16() || t.isFloat8E5M2() || t.isFloat8E4M3FN();
}


struct TileToGPUPass : tessera::spv::impl::TileToGPUBase<TileToGPUPass> {
  using TileToGPUBase::TileToGPUBase;
  void runOnOperation() override {
    ModuleOp m = getOperation();
    MLIRContext *ctx = m.getContext();
    if (clientApi != "vulkan" && clientApi != "opencl") {
      m.emitError() << "tessera-tile-to-gpu: client-api must be 'vulkan' or 'opencl', not '" << clientApi << "'";
      return signalPassFailure();
    }
    auto env = parseAttribute(clientApi == "opencl" ? kKernelTargetEnv : kTargetEnv, ctx);
    if (!env) return signalPassFailure();
    SmallVector<func::FuncOp> kernels;
    m.walk([&](func::FuncOp f) {
      if (!f.isExternal() && f->hasAttr(t::kGroupSizeAttr)) kernels.push_back(f);
    });
    for (func::FuncOp f : kernels)
      if (failed(lower(f, env))) return signalPassFailure();
    WalkResult r = m.walk([&](Operation *op) {
      if (isa_and_nonnull<t::TileDialect>(op->getDialect()) && !op->getParentOfType<gpu::GPUModuleOp>()) {
        op->emitOpError("is outside a Tile IR kernel (a func.func with tessera_tile.group_size)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted()) signalPassFailure();
  }

  LogicalResult lower(func::FuncOp f, Attribute env) {
    MLIRContext *ctx = f.getContext();
    Location loc = f.getLoc();
    if (f.getNumResults()) return f.emitError("a Tile IR kernel returns nothing");
    for (auto [i, ty] : llvm::enumerate(f.getArgumentTypes())) {
      auto mt = ty.dyn_cast<MemRefType>();
      if (mt && noSPIRVType(mt.getElementType()))
        return f.emitError() << "SPIR-V kernel argument " << i << " has type " << ty << ": "
                             << mt.getElementType()
                             << " has no SPIR-V type for Vulkan (MLIR 16 has no bf16/fp8 "
                                "storage); widen it to f16 or f32 first";
      // A 1-D buffer of any length (memref<?xT>) becomes a runtime array.
      bool anyLength = mt && mt.getRank() == 1 && mt.isDynamicDim(0);
      bool ok = mt ? (mt.hasStaticShape() || anyLength) && mt.getLayout().isIdentity() &&
                         !t::isSharedMemory(mt)
                   : (ty.isIntOrIndexOrFloat() && !ty.isInteger(1) && !ty.isBF16() &&
                      (ty.isIndex() || llvm::is_contained({8u, 16u, 32u, 64u},
                                                          ty.getIntOrFloatBitWidth())));
      if (!ok)
        return f.emitError() << "SPIR-V kernel argument " << i << " has type " << ty
                             << ": expected a statically shaped global memref, a 1-D memref of any "
                                "length (memref<?xT>) or an 8/16/32/64-bit "
                                "integer or f16/f32/f64 scalar";
    }
    if (floatAtomicAdd != "native" && floatAtomicAdd != "cas")
      return f.emitError() << "tessera-tile-to-gpu: float-atomic-add must be 'native' or 'cas', not '"
                           << floatAtomicAdd << "'";
    tessera::gpu_lowering::KernelLoweringOptions klo;
    klo.casFloatAdd = floatAtomicAdd == "cas";
    if (failed(tessera::gpu_lowering::lowerTileKernelBody(f, klo))) return failure();
    SmallVector<int64_t, 3> group = t::getGroupSize(f);

    OpBuilder mb(f);
    auto gm = mb.create<gpu::GPUModuleOp>(loc, f.getName());
    gm->setAttr(spirv::getTargetEnvAttrName(), env);
    OpBuilder gb = OpBuilder::atBlockBegin(gm.getBody());
    auto gf = gb.create<gpu::GPUFuncOp>(loc, f.getName(), f.getFunctionType());
    gf->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
    SmallVector<int32_t, 3> ls(group.begin(), group.end());
    gf->setAttr(spirv::getEntryPointABIAttrName(), spirv::getEntryPointABIAttr(ctx, ls));
    unsigned binding = 0;
    // A Kernel's arguments stay parameters (no interface variables).
    if (clientApi == "vulkan")
    for (auto [i, ty] : llvm::enumerate(f.getArgumentTypes())) {
      // Scalars get a placeholder; tessera-gpu-to-spirv moves them into the
      // push-constant block before spirv-lower-abi-attrs.
      unsigned bnd = ty.isa<MemRefType>() ? binding++ : 1000 + i;
      gf.setArgAttr(i, spirv::getInterfaceVarABIAttrName(),
                    spirv::getInterfaceVarABIAttr(0, bnd, std::nullopt, ctx));
    }
    gf.getBody().getBlocks().clear();
    gf.getBody().takeBody(f.getBody());
    SmallVector<func::ReturnOp> rets;
    gf.walk([&](func::ReturnOp r) { rets.push_back(r); });
    for (func::ReturnOp r : rets) {
      OpBuilder rb(r);
      rb.create<gpu::ReturnOp>(r.getLoc());
      r.erase();
    }
    f.erase();
    return success();
  }
};

Value floatCasLoop(t::AtomicKind kind, Type ft, Value ptr, Value value, spirv::Scope scope,
                   spirv::MemorySemantics sem, Location l, ConversionPatternRewriter &rw);

/// tessera_tile.atomic_rmw on a converted memref -> SPIR-V atomics.
struct AtomicPattern : OpConversionPattern<t::AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::AtomicRMWOp o, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location l = o.getLoc();
    auto &tc = *getTypeConverter<SPIRVTypeConverter>();
    auto mt = o.getMemref().getType().cast<MemRefType>();
    Value ptr = spirv::getElementPtr(tc, mt, a.getMemref(), a.getIndices(), l, rw);
    if (!ptr) return rw.notifyMatchFailure(o, "no element pointer");
    auto sc = mt.getMemorySpace().dyn_cast_or_null<spirv::StorageClassAttr>();
    bool shared = sc && sc.getValue() == spirv::StorageClass::Workgroup;
    bool narrow = o.getScope() == t::AtomicScope::tile || o.getScope() == t::AtomicScope::group;
    spirv::Scope scope = shared || narrow ? spirv::Scope::Workgroup : spirv::Scope::Device;
    spirv::MemorySemantics sem =
        spirv::MemorySemantics::AcquireRelease |
        (shared ? spirv::MemorySemantics::WorkgroupMemory
         : tc.allows(spirv::Capability::Kernel)
             ? spirv::MemorySemantics::CrossWorkgroupMemory  // global memory of a Kernel
             : spirv::MemorySemantics::UniformMemory);        // StorageBuffer of a shader
    Value v = a.getValue();
    Type ty = v.getType();
    bool fl = ty.isa<FloatType>();
    if (auto fa = o->getAttrOfType<TypeAttr>(kFloatCasAttr)) {
      rw.replaceOp(o, floatCasLoop(o.getKind(), fa.getValue(), ptr, v, scope, sem, l, rw));
      return success();
    }
    // Float max/min were all moved onto integer bits by retypeFloatAtomics.
    if (fl && (o.getKind() == t::AtomicKind::max || o.getKind() == t::AtomicKind::min))
      return rw.notifyMatchFailure(o, "float max/min not retyped to integer bits");
    Value r;
    switch (o.getKind()) {
    case t::AtomicKind::add:
      r = fl ? rw.create<spirv::EXTAtomicFAddOp>(l, ty, ptr, scope, sem, v).getResult()
             : rw.create<spirv::AtomicIAddOp>(l, ty, ptr, scope, sem, v).getResult();
      break;
    case t::AtomicKind::max:
      r = rw.create<spirv::AtomicSMaxOp>(l, ty, ptr, scope, sem, v);
      break;
    case t::AtomicKind::min:
      r = rw.create<spirv::AtomicSMinOp>(l, ty, ptr, scope, sem, v);
      break;
    case t::AtomicKind::xchg:
      r = rw.create<spirv::AtomicExchangeOp>(l, ty, ptr, scope, sem, v);
      break;
    }
    rw.replaceOp(o, r);
    return success();
  }
};

/// old = *ptr; *ptr = kind(old, value), atomically, on a float stored as
/// the integer bits `ptr` points to: a compare-exchange loop.
///
///   expected = bits(value)          // a guess: no racy plain load
///   loop: new = bits(kind(float(expected), value))
///         prev = AtomicCompareExchange(ptr, new, expected)
///         if prev != expected: expected = prev, retry
///   result: prev (the value replaced, as a float)
///
/// Correct for every float, on any device (no VK_EXT_shader_atomic_float2
/// needed).  NaN semantics, those of the cpu path's arith.maxf / minf: a
/// NaN value stores NaN, a NaN in memory stays (no number compares above
/// or below it), so NaN propagates.  +0 and -0 compare equal: memory keeps
/// the zero it has.  The loop terminates: a compare-exchange only fails
/// when another lane changed the word, and each failure hands back the new
/// word (lock-free, not wait-free, like every CAS loop).
Value floatCasLoop(t::AtomicKind kind, Type ft, Value ptr, Value value, spirv::Scope scope,
                   spirv::MemorySemantics sem, Location l, ConversionPatternRewriter &rw) {
  Type it = value.getType();
  Type i1 = rw.getI1Type();
  // Ordering: the other atomics are AcquireRelease; here that becomes a
  // release fence before the loop and an acquire fence after it around
  // relaxed exchanges, which orders the same accesses (the fences cover
  // the exchange that succeeds).  Fences in the loop itself, one per
  // retry, broke lavapipe: its shared-memory results lost updates when
  // lanes retried different numbers of times (VulkanTileIr.FloatAtomicMaxMin),
  // while relaxed exchanges with the fences outside pass.
  auto storage = sem & (spirv::MemorySemantics::UniformMemory | spirv::MemorySemantics::WorkgroupMemory |
                        spirv::MemorySemantics::CrossWorkgroupMemory);
  rw.create<spirv::MemoryBarrierOp>(l, scope, spirv::MemorySemantics::Release | storage);
  // The loop is built as spirv.mlir.loop directly, in the shape glslang
  // gives a `while (true) { ...; if (done) break; }`: the header holds only
  // the phi and branches to a body block that does the exchange and breaks
  // to the merge block.  scf.while's lowering puts the exchange and the
  // exit branch in the header block itself; valid SPIR-V, but Mesa's
  // lavapipe then loses updates of shared-memory exchanges (seen with
  // VulkanTileIr.FloatAtomicMaxMin), so that shape is avoided.  The result
  // leaves the loop through a Function variable (the merge block of a
  // structured loop takes no arguments), as MLIR's own scf lowering does.
  auto varTy = spirv::PointerType::get(it, spirv::StorageClass::Function);
  Value var = rw.create<spirv::VariableOp>(l, varTy, spirv::StorageClass::Function, Value());
  auto loop = rw.create<spirv::LoopOp>(l, spirv::LoopControl::None);
  Region &r = loop.getBody();
  Block *entry = rw.createBlock(&r, r.end());
  Block *header = rw.createBlock(&r, r.end(), {it}, {l});
  Block *body = rw.createBlock(&r, r.end());
  Block *cont = rw.createBlock(&r, r.end(), {it}, {l});
  Block *merge = rw.createBlock(&r, r.end());
  rw.create<spirv::MergeOp>(l);
  rw.setInsertionPointToEnd(entry);
  rw.create<spirv::BranchOp>(l, header, ValueRange{value});
  rw.setInsertionPointToEnd(header);
  rw.create<spirv::BranchOp>(l, body, ValueRange{});
  rw.setInsertionPointToEnd(body);
  Value expected = header->getArgument(0);
  Value old = rw.create<spirv::BitcastOp>(l, ft, expected);
  Value x = rw.create<spirv::BitcastOp>(l, ft, value);
  Value nf;
  switch (kind) {
  case t::AtomicKind::add: nf = rw.create<spirv::FAddOp>(l, old, x); break;
  case t::AtomicKind::max:
  case t::AtomicKind::min: {
    Value better = kind == t::AtomicKind::max
                       ? rw.create<spirv::FOrdGreaterThanOp>(l, i1, x, old).getResult()
                       : rw.create<spirv::FOrdLessThanOp>(l, i1, x, old).getResult();
    Value take = rw.create<spirv::LogicalOrOp>(l, better, rw.create<spirv::IsNanOp>(l, i1, x));
    nf = rw.create<spirv::SelectOp>(l, take, x, old);
    break;
  }
  case t::AtomicKind::xchg: nf = x; break;
  }
  Value nb = rw.create<spirv::BitcastOp>(l, it, nf);
  Value prev = rw.create<spirv::AtomicCompareExchangeOp>(l, it, ptr, scope, spirv::MemorySemantics::None,
                                                         spirv::MemorySemantics::None, nb, expected);
  rw.create<spirv::StoreOp>(l, var, prev);
  Value retry = rw.create<spirv::INotEqualOp>(l, prev, expected);
  rw.create<spirv::BranchConditionalOp>(l, retry, cont, ValueRange{prev}, merge, ValueRange{});
  rw.setInsertionPointToEnd(cont);
  rw.create<spirv::BranchOp>(l, header, ValueRange{cont->getArgument(0)});
  rw.setInsertionPointAfter(loop);
  rw.create<spirv::MemoryBarrierOp>(l, scope, spirv::MemorySemantics::Acquire | storage);
  return rw.create<spirv::LoadOp>(l, var);
}

/// The i32 value of builtin `bi`, declared (once) in the module being
/// converted under the name upstream uses (`__builtin_var_<Name>__`), so
/// upstream's patterns and this one share the variable.  MLIR 16's
/// spirv::getBuiltinVariableValue does not know SubgroupLocalInvocationId.
Value builtinI32(Operation *op, spirv::BuiltIn bi, OpBuilder &b) {
  Location l = op->getLoc();
  Operation *table = SymbolTable::getNearestSymbolTable(op->getParentOp());
  std::string name = ("__builtin_var_" + spirv::stringifyBuiltIn(bi) + "__").str();
  auto var = dyn_cast_or_null<spirv::GlobalVariableOp>(SymbolTable::lookupSymbolIn(table, name));
  if (!var) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&table->getRegion(0).front());
    auto ptr = spirv::PointerType::get(b.getI32Type(), spirv::StorageClass::Input);
    var = b.create<spirv::GlobalVariableOp>(l, ptr, name, bi);
  }
  return b.create<spirv::LoadOp>(l, b.create<spirv::AddressOfOp>(l, var));
}

/// shuffle up|down -> OpGroupNonUniformShuffleUp/Down (SPIR-V 1.3,
/// GroupNonUniformShuffleRelative).  SPIR-V leaves a read from outside the
/// subgroup undefined; Tile IR says such lanes read their own value, so
/// the result is selected by whether the source lane exists:
/// down: id + delta < lanes, up: id >= delta, where `lanes` is the lane
/// count of this subgroup (the SubgroupSize builtin, less for the last
/// subgroup of a group whose lane count is not a multiple of it).
struct ShuffleRelativePattern : OpConversionPattern<t::ShuffleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(t::ShuffleOp o, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    bool down = o.getMode() == t::ShuffleMode::down;
    if (!down && o.getMode() != t::ShuffleMode::up) return failure();
    auto lanesAttr = o->getAttrOfType<IntegerAttr>("tessera.group_lanes");
    if (!lanesAttr) return failure();
    Location l = o.getLoc();
    Type i32 = rw.getI32Type(), i1 = rw.getI1Type();
    Value x = a.getValue(), d = a.getOffset();
    // A Kernel's index is i64; the lane arithmetic below is on the 32-bit
    // builtins (a delta is below the subgroup size).
    if (d.getType().isInteger(64)) d = rw.create<spirv::UConvertOp>(l, i32, d);
    if (!d.getType().isInteger(32)) return rw.notifyMatchFailure(o, "offset is not i32");
    auto sc = spirv::Scope::Subgroup;
    Value r = down ? rw.create<spirv::GroupNonUniformShuffleDownOp>(l, x.getType(), sc, x, d).getResult()
                   : rw.create<spirv::GroupNonUniformShuffleUpOp>(l, x.getType(), sc, x, d).getResult();
    Value id = builtinI32(o, spirv::BuiltIn::SubgroupLocalInvocationId, rw);
    Value inRange;
    if (down) {
      Value size = builtinI32(o, spirv::BuiltIn::SubgroupSize, rw);
      Value sgid = builtinI32(o, spirv::BuiltIn::SubgroupId, rw);
      Value total = rw.create<spirv::ConstantOp>(l, i32, rw.getI32IntegerAttr(lanesAttr.getInt()));
      Value left = rw.create<spirv::ISubOp>(l, total, rw.create<spirv::IMulOp>(l, sgid, size));
      // umin(size, left) without GLSL.std.450 (not in OpenCL Kernels).
      Value lanes = rw.create<spirv::SelectOp>(l, rw.create<spirv::ULessThanOp>(l, i1, size, left), size, left);
      inRange = rw.create<spirv::ULessThanOp>(l, i1, rw.create<spirv::IAddOp>(l, id, d), lanes);
    } else {
      inRange = rw.create<spirv::UGreaterThanEqualOp>(l, i1, id, d);
    }
    rw.replaceOpWithNewOp<spirv::SelectOp>(o, inRange, r, x);
    return success();
  }
};

/// Scalar arguments of an entry function -> one PushConstant block.
void lowerScalarArgs(spirv::ModuleOp sm, spirv::FuncOp fn) {
  SmallVector<unsigned> idx;
  SmallVector<Type> tys;
  SmallVector<spirv::StructType::OffsetInfo> offs;
  uint32_t off = 0;
  for (auto [i, ty] : llvm::enumerate(fn.getArgumentTypes())) {
    if (ty.isa<spirv::PointerType>()) continue;
    uint32_t sz = ty.getIntOrFloatBitWidth() / 8;
    off = (off + sz - 1) / sz * sz;
    idx.push_back(i);
    tys.push_back(ty);
    offs.push_back(off);
    off += sz;
  }
  if (idx.empty()) return;
  Location l = fn.getLoc();
  auto ptrTy = spirv::PointerType::get(spirv::StructType::get(tys, offs),
                                       spirv::StorageClass::PushConstant);
  OpBuilder b = OpBuilder::atBlockBegin(sm.getBody());
  auto var = b.create<spirv::GlobalVariableOp>(l, ptrTy, "__tessera_push_constants", FlatSymbolRefAttr());
  b.setInsertionPointToStart(&fn.front());
  Value base = b.create<spirv::AddressOfOp>(l, var);
  llvm::BitVector erase(fn.getNumArguments());
  for (auto [m, i] : llvm::enumerate(idx)) {
    Value c = b.create<spirv::ConstantOp>(l, b.getI32Type(), b.getI32IntegerAttr(m));
    Value p = b.create<spirv::AccessChainOp>(l, base, ValueRange{c});
    Value v = b.create<spirv::LoadOp>(l, p);
    fn.getArgument(i).replaceAllUsesWith(v);
    erase.set(i);
  }
  fn.eraseArguments(erase);
}

/// math.exp2(x) -> math.exp(x * ln 2): MLIR 16 converts no exp2 to SPIR-V
/// (neither GLSL's Exp2 nor OpenCL's exp2 is among its ops).
void expandExp2(gpu::GPUModuleOp gm) {
  gm.walk([](math::Exp2Op op) {
    OpBuilder b(op);
    Type t = op.getType();
    Attribute ln2 = b.getFloatAttr(getElementTypeOrSelf(t), 0.69314718055994530942);
    if (auto vt = t.dyn_cast<VectorType>()) ln2 = DenseElementsAttr::get(vt, ln2);
    Value c = b.create<arith::ConstantOp>(op.getLoc(), t, ln2.cast<TypedAttr>());
    Value x = b.create<arith::MulFOp>(op.getLoc(), op.getOperand(), c);
    op.replaceAllUsesWith(b.create<math::ExpOp>(op.getLoc(), x).getResult());
    op.erase();
  });
}

/// math.powf(x, y) -> C's pow on GLSL (Vulkan): GLSL's Pow is undefined for
/// x < 0 and for x = 0 with y <= 0, and lavapipe gave pow(0, 0) = 0,
/// pow(-20, -20) < 0 and pow(NaN, NaN) = 0.  The expansion takes Pow of |x|
/// and then C99's Annex F cases: the sign of an odd integer exponent, NaN
/// for a finite negative base with a fractional exponent, the zero base
/// (+-0 and +-inf by the sign of x for odd y), pow(-1, +-inf) = 1, NaN
/// operands, pow(x, 0) = 1 and pow(1, y) = 1, as the cpu (libm) and the
/// reference do.  OpenCL's pow has these semantics already: Kernel modules
/// keep math.powf.
void expandPowF(gpu::GPUModuleOp gm) {
  gm.walk([](math::PowFOp op) {
    OpBuilder b(op);
    Location l = op.getLoc();
    Type t = op.getType();
    auto c = [&](double v) -> Value {
      Attribute a = b.getFloatAttr(getElementTypeOrSelf(t), v);
      if (auto vt = t.dyn_cast<VectorType>()) a = DenseElementsAttr::get(vt, a);
      return b.create<arith::ConstantOp>(l, t, a.cast<TypedAttr>());
    };
    auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
      return b.create<arith::CmpFOp>(l, p, x, y);
    };
    auto sel = [&](Value cond, Value x, Value y) -> Value { return b.create<arith::SelectOp>(l, cond, x, y); };
    using P = arith::CmpFPredicate;
    Value x = op.getLhs(), y = op.getRhs();
    Value ax = b.create<math::AbsFOp>(l, x), ay = b.create<math::AbsFOp>(l, y);
    Value r = b.create<math::PowFOp>(l, ax, y);
    // A negative base: an odd integer exponent gives the negative of
    // |x|^y; a finite base with a fractional exponent gives NaN (-inf with
    // one gives |x|^y: +inf or +0).
    Value yInt = cmp(P::OEQ, b.create<math::FloorOp>(l, y), y);
    Value half = b.create<arith::MulFOp>(l, y, c(0.5));
    Value yOdd = b.create<arith::AndIOp>(l, yInt, cmp(P::ONE, b.create<math::FloorOp>(l, half), half));
    Value negR = sel(yOdd, b.create<arith::NegFOp>(l, r), r);
    Value xInf = cmp(P::OEQ, ax, c(INFINITY));
    Value real = b.create<arith::OrIOp>(l, yInt, xInf);
    r = sel(cmp(P::OLT, x, c(0)), sel(real, negR, c(std::nan(""))), r);
    // A zero base (Pow is undefined there): +-0 for y > 0 and +-inf for
    // y < 0, negative only for -0 and an odd y (x itself, 1 / x).
    Value zeroR = sel(cmp(P::OGT, y, c(0)), sel(yOdd, x, c(0)),
                      sel(yOdd, b.create<arith::DivFOp>(l, c(1), x), c(INFINITY)));
    r = sel(cmp(P::OEQ, x, c(0)), zeroR, r);
    // pow(-1, +-inf) = 1 (Pow(1, inf) may be exp2(inf * 0), NaN).
    r = sel(b.create<arith::AndIOp>(l, cmp(P::OEQ, x, c(-1)), cmp(P::OEQ, ay, c(INFINITY))), c(1), r);
    // NaN in, NaN out, but for the two cases C defines as 1.
    r = sel(cmp(P::UNO, x, y), b.create<arith::AddFOp>(l, x, y), r);
    r = sel(b.create<arith::OrIOp>(l, cmp(P::OEQ, y, c(0)), cmp(P::OEQ, x, c(1))), c(1), r);
    op.replaceAllUsesWith(r);
    op.erase();
  });
}

/// scf.while -> spirv.mlir.loop: the `before` block becomes the loop
/// header (it computes the condition and branches to the body or the
/// merge block), the `after` block the body (it branches back).  MLIR 16's
/// own pattern converts the signature of neither region and rewrites the
/// terminators before the ops that feed them are converted, so a carried
/// index (i32 or i64 in SPIR-V) used in the body failed with "failed to
/// legalize unresolved materialization".  Here WhilePattern converts both
/// signatures and moves the blocks; the terminators are rewritten by their
/// own patterns once the driver reaches them (their operands converted by
/// then).  These are preferred to MLIR's (benefit 2).  The results leave
/// the loop through Function variables, stored each time the header runs
/// (the merge block of a structured loop takes no arguments).
struct WhileLoops {
  struct Loop {
    Block *header, *body;
    SmallVector<Value> results;  // the Function variables
  };
  DenseMap<Operation *, Loop> loops;  // by spirv.mlir.loop

  /// The loop lowered from an scf.while that `terminator` ends a block of,
  /// or null (a terminator of a lowered scf.for or scf.if).
  const Loop *enclosing(Operation *terminator) const {
    auto it = loops.find(terminator->getParentOp());
    return it == loops.end() ? nullptr : &it->second;
  }
};

/// The three patterns share the loops they lowered; each is preferred to
/// MLIR's pattern for its op (benefit 2).
template <class Op>
struct WhileLoweringPattern : OpConversionPattern<Op> {
  WhileLoweringPattern(TypeConverter &tc, MLIRContext *ctx, std::shared_ptr<WhileLoops> state)
      : OpConversionPattern<Op>(tc, ctx, /*benefit=*/2), state(std::move(state)) {}
  std::shared_ptr<WhileLoops> state;
};

struct WhilePattern : WhileLoweringPattern<scf::WhileOp> {
  using WhileLoweringPattern::WhileLoweringPattern;
  LogicalResult matchAndRewrite(scf::WhileOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location l = op.getLoc();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), resultTypes))) return failure();
    Block *header = rw.convertRegionTypes(&op.getBefore(), *getTypeConverter()).value_or(nullptr);
    Block *body = rw.convertRegionTypes(&op.getAfter(), *getTypeConverter()).value_or(nullptr);
    if (!header || !body) return failure();
    WhileLoops::Loop loop{header, body, {}};
    for (Type t : resultTypes) {
      auto ptr = spirv::PointerType::get(t, spirv::StorageClass::Function);
      loop.results.push_back(rw.create<spirv::VariableOp>(l, ptr, spirv::StorageClass::Function, Value()));
    }
    auto lp = rw.create<spirv::LoopOp>(l, spirv::LoopControl::None);
    lp.addEntryAndMergeBlock();
    Region &r = lp.getBody();
    rw.inlineRegionBefore(op.getBefore(), r, std::next(r.begin()));
    rw.inlineRegionBefore(op.getAfter(), r, std::next(r.begin(), 2));
    rw.setInsertionPointToEnd(lp.getEntryBlock());
    rw.create<spirv::BranchOp>(l, header, a.getInits());
    rw.setInsertionPointAfter(lp);
    SmallVector<Value> results;
    for (Value v : loop.results) results.push_back(rw.create<spirv::LoadOp>(l, v));
    state->loops[lp] = std::move(loop);
    rw.replaceOp(op, results);
    return success();
  }
};

/// The header's scf.condition: store the values that would leave the loop,
/// then branch to the body or out.
struct WhileConditionPattern : WhileLoweringPattern<scf::ConditionOp> {
  using WhileLoweringPattern::WhileLoweringPattern;
  LogicalResult matchAndRewrite(scf::ConditionOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    const WhileLoops::Loop *loop = state->enclosing(op);
    if (!loop || loop->results.size() != a.getArgs().size()) return failure();
    for (auto [var, value] : llvm::zip(loop->results, a.getArgs()))
      rw.create<spirv::StoreOp>(op.getLoc(), var, value);
    rw.replaceOpWithNewOp<spirv::BranchConditionalOp>(op, a.getCondition(), loop->body, a.getArgs(),
                                                      cast<spirv::LoopOp>(op->getParentOp()).getMergeBlock(),
                                                      ValueRange{});
    return success();
  }
};

/// The body's scf.yield: back to the header.  (An scf.yield of a lowered
/// scf.for or scf.if is left to MLIR's pattern.)
struct WhileYieldPattern : WhileLoweringPattern<scf::YieldOp> {
  using WhileLoweringPattern::WhileLoweringPattern;
  LogicalResult matchAndRewrite(scf::YieldOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    const WhileLoops::Loop *loop = state->enclosing(op);
    if (!loop || op->getBlock() != loop->body) return failure();
    rw.replaceOpWithNewOp<spirv::BranchOp>(op, loop->header, a.getOperands());
    return success();
  }
};

/// gpu.subgroup_size -> the SubgroupSize builtin, a 32-bit integer in every
/// client API (SPIR-V's "BuiltIn" rules; OpenCL's get_sub_group_size is a
/// uint), widened to the index type.  MLIR 16's pattern declares the builtin
/// with the index type, 64-bit in a Physical64 kernel: a module that reads a
/// u64 where the driver provides a u32 (found by running level_zero kernels
/// on PoCL, whose link then failed on get_sub_group_size returning i64).
struct SubgroupSizeBuiltinPattern : OpConversionPattern<gpu::SubgroupSizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(gpu::SubgroupSizeOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    Type index = getTypeConverter()->convertType(op.getType());
    if (!index) return failure();
    Value size = builtinI32(op, spirv::BuiltIn::SubgroupSize, rw);
    if (index != size.getType()) size = rw.create<spirv::UConvertOp>(op.getLoc(), index, size);
    rw.replaceOp(op, size);
    return success();
  }
};

struct GPUToSPIRVPass : tessera::spv::impl::GPUToSPIRVBase<GPUToSPIRVPass> {
  void runOnOperation() override {
    ModuleOp m = getOperation();
    MLIRContext *ctx = m.getContext();
    SmallVector<gpu::GPUModuleOp> gms(m.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gm : gms) {
      expandExp2(gm);
      spirv::TargetEnvAttr env = spirv::lookupTargetEnvOrDefault(gm);
      if (!spirv::TargetEnv(env).allows(spirv::Capability::Kernel)) expandPowF(gm);
      std::unique_ptr<ConversionTarget> target = SPIRVConversionTarget::get(env);
      SPIRVConversionOptions co;
      // Physical64 kernels index with 64-bit integers (size_t).
      co.use64bitIndex = spirv::TargetEnv(env).allows(spirv::Capability::Kernel);
      SPIRVTypeConverter tc(env, co);
      ScfToSPIRVContext scfCtx;
      RewritePatternSet patterns(ctx);
      populateGPUToSPIRVPatterns(tc, patterns);
      arith::populateArithToSPIRVPatterns(tc, patterns);
      populateMathToSPIRVPatterns(tc, patterns);
      populateMemRefToSPIRVPatterns(tc, patterns);
      populateFuncToSPIRVPatterns(tc, patterns);
      populateSCFToSPIRVPatterns(tc, scfCtx, patterns);
      patterns.add<AtomicPattern, ShuffleRelativePattern>(tc, ctx);
      patterns.add<SubgroupSizeBuiltinPattern>(tc, ctx, /*benefit=*/2);  // before MLIR's
      auto whileLoops = std::make_shared<WhileLoops>();
      patterns.add<WhilePattern, WhileConditionPattern, WhileYieldPattern>(tc, ctx, whileLoops);
      if (failed(applyFullConversion(gm, *target, std::move(patterns)))) return signalPassFailure();
    }
    for (auto sm : m.getOps<spirv::ModuleOp>()) {
      // Kernels take scalars as parameters; shaders through push constants.
      if (sm.getAddressingModel() != spirv::AddressingModel::Logical) continue;
      for (auto fn : llvm::make_early_inc_range(sm.getOps<spirv::FuncOp>()))
        if (fn->hasAttr(spirv::getEntryPointABIAttrName())) lowerScalarArgs(sm, fn);
    }
  }
};

/// spirv-update-vce (MLIR 16) derives capabilities from types and ops but
/// not Int64Atomics, which a 64-bit atomic needs (spirv-val checks it):
/// add it where the module has one.
struct Int64AtomicsVCEPass
    : PassWrapper<Int64AtomicsVCEPass, OperationPass<spirv::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(Int64AtomicsVCEPass)
  StringRef getArgument() const final { return "tessera-spirv-int64-atomics-vce"; }
  void runOnOperation() override {
    spirv::ModuleOp m = getOperation();
    auto vce = m.getVceTriple();
    if (!vce) return;
    bool wide = false;
    m.walk([&](Operation *op) {
      if (op->getName().getStringRef().starts_with("spirv.Atomic") && op->getNumResults() == 1 &&
          op->getResult(0).getType().isInteger(64))
        wide = true;
    });
    if (!wide) return;
    SmallVector<spirv::Capability> caps(vce->getCapabilities());
    if (llvm::is_contained(caps, spirv::Capability::Int64Atomics)) return;
    caps.push_back(spirv::Capability::Int64Atomics);
    SmallVector<spirv::Extension> exts(vce->getExtensions());
    m.setVceTripleAttr(spirv::VerCapExtAttr::get(vce->getVersion(), caps, exts, m.getContext()));
  }
};

/// IEEE infinities, NaNs and signed zeros for f32 (SignedZeroInfNanPreserve
/// 32 on every entry point, SPV_KHR_float_controls): without it a Vulkan
/// compiler may assume neither occurs and fold x - x to 0, x * 0 to 0, or
/// reorder min/max (Mesa's NIR does), and Tessera's arithmetic (x / 0 =
/// inf, inf - inf = NaN, NaN -> 0 in float -> int casts, fp8 saturation of
/// inf) would differ from the cpu backend and the reference. Needs
/// VkPhysicalDeviceFloatControlsProperties::shaderSignedZeroInfNanPreserveFloat32
/// (Vulkan 1.2; every desktop driver and lavapipe have it); the plugin
/// checks it when the module is loaded.
struct PreserveInfNanPass
    : PassWrapper<PreserveInfNanPass, OperationPass<spirv::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PreserveInfNanPass)
  StringRef getArgument() const final { return "tessera-spirv-preserve-inf-nan"; }
  void runOnOperation() override {
    spirv::ModuleOp m = getOperation();
    auto vce = m.getVceTriple();
    if (!vce) return;
    bool usesF32 = false;
    m.walk([&](Operation *op) {
      for (Type t : op->getResultTypes()) usesF32 |= getElementTypeOrSelf(t).isF32();
    });
    if (!usesF32) return;
    SmallVector<spirv::EntryPointOp> entries(m.getOps<spirv::EntryPointOp>());
    OpBuilder b = OpBuilder::atBlockEnd(m.getBody());
    for (spirv::EntryPointOp e : entries) {
      auto fn = m.lookupSymbol<spirv::FuncOp>(e.getFn());
      if (!fn) continue;
      b.setInsertionPointAfter(e);
      b.create<spirv::ExecutionModeOp>(e.getLoc(), fn, spirv::ExecutionMode::SignedZeroInfNanPreserve,
                                       ArrayRef<int32_t>{32});
    }
    SmallVector<spirv::Capability> caps(vce->getCapabilities());
    SmallVector<spirv::Extension> exts(vce->getExtensions());
    if (!llvm::is_contained(caps, spirv::Capability::SignedZeroInfNanPreserve))
      caps.push_back(spirv::Capability::SignedZeroInfNanPreserve);
    if (vce->getVersion() < spirv::Version::V_1_4 && !llvm::is_contained(exts, spirv::Extension::SPV_KHR_float_controls))
      exts.push_back(spirv::Extension::SPV_KHR_float_controls);
    m.setVceTripleAttr(spirv::VerCapExtAttr::get(vce->getVersion(), caps, exts, m.getContext()));
  }
};

/// Memory spaces -> OpenCL storage classes (0 -> CrossWorkgroup, 3 ->
/// Workgroup): upstream's map-memref-spirv-storage-class with
/// client-api=opencl, which a plugin (no pass registry) cannot name.
struct OpenCLStorageClassPass : PassWrapper<OpenCLStorageClassPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OpenCLStorageClassPass)
  StringRef getArgument() const final { return "tessera-opencl-storage-class"; }
  void runOnOperation() override {
    spirv::MemorySpaceToStorageClassConverter converter(spirv::mapMemorySpaceToOpenCLStorageClass);
    std::unique_ptr<ConversionTarget> target = spirv::getMemorySpaceToStorageClassTarget(getContext());
    RewritePatternSet patterns(&getContext());
    spirv::populateMemorySpaceToStorageClassPatterns(converter, patterns);
    if (failed(applyFullConversion(getOperation(), *target, std::move(patterns)))) signalPassFailure();
  }
};

struct SerializeSPIRVPass : tessera::spv::impl::SerializeSPIRVBase<SerializeSPIRVPass> {
  using SerializeSPIRVBase::SerializeSPIRVBase;
  void runOnOperation() override {
    ModuleOp m = getOperation();
    auto sms = llvm::to_vector(m.getOps<spirv::ModuleOp>());
    if (sms.size() != 1) {
      m.emitError() << "tessera-serialize-spirv: expected one spirv.module, found " << sms.size();
      return signalPassFailure();
    }
    if (output.empty()) {
      m.emitError("tessera-serialize-spirv: no output= path");
      return signalPassFailure();
    }
    SmallVector<uint32_t, 0> words;
    if (failed(spirv::serialize(sms.front(), words))) return signalPassFailure();
    tessera::spv::fixNarrowIntegerLiterals(words);
    std::ofstream os(output, std::ios::binary);
    os.write(reinterpret_cast<const char *>(words.data()), words.size() * 4);
    if (!os) {
      m.emitError() << "tessera-serialize-spirv: cannot write " << output;
      signalPassFailure();
    }
  }
};

}  // namespace

void tessera::spv::buildTileToSPIRVPipeline(OpPassManager &pm, const VulkanTargetOptions &options) {
  pm.addPass(schedule::createScheduleToTile());
  TileToGPUOptions tg;
  tg.floatAtomicAdd = options.nativeFloatAtomicAdd ? "native" : "cas";
  tg.clientApi = options.openclKernel ? "opencl" : "vulkan";
  pm.addPass(createTileToGPU(tg));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Memory space 0 -> StorageBuffer (vulkan) or CrossWorkgroup (opencl).
  if (options.openclKernel)
    pm.addPass(std::make_unique<OpenCLStorageClassPass>());
  else
    pm.addPass(createMapMemRefStorageClassPass());
  pm.addPass(createGPUToSPIRV());
  OpPassManager &spm = pm.nest<spirv::ModuleOp>();
  spm.addPass(spirv::createSPIRVLowerABIAttributesPass());
  // No canonicalizer here: it merges the stores of an if/else on two
  // buffers into a store through a pointer select/phi (VariablePointers).
  spm.addPass(createCSEPass());
  // Vulkan: vec4 loads/stores where a buffer allows them (OpenCL Kernels
  // take buffers as pointer parameters, not variables).
  if (!options.openclKernel) {
    spm.addPass(createVectorizeBufferAccessPass());
    spm.addPass(createCSEPass());
  }
  spm.addPass(spirv::createSPIRVUpdateVCEPass());
  spm.addPass(std::make_unique<Int64AtomicsVCEPass>());
  // OpenCL keeps IEEE infinities, NaNs and signed zeros unless built with
  // fast-math flags: the execution mode is a Vulkan need.
  if (!options.openclKernel) spm.addPass(std::make_unique<PreserveInfNanPass>());
}

namespace {
struct TileToSPIRVPipelineOptions : PassPipelineOptions<TileToSPIRVPipelineOptions> {
  Option<std::string> floatAtomicAdd{
      *this, "float-atomic-add",
      llvm::cl::desc("f32 atomic add: native (OpAtomicFAddEXT) or cas (any device)"),
      llvm::cl::init("native")};
  Option<std::string> clientApi{*this, "client-api",
                                llvm::cl::desc("vulkan (GLCompute shaders) or opencl (Kernels)"),
                                llvm::cl::init("vulkan")};
};
}  // namespace

void tessera::spv::registerSPIRVPipelines() {
  PassPipelineRegistration<TileToSPIRVPipelineOptions>(
      "tessera-tile-to-spirv",
      "Schedule/Tile IR kernels -> one spirv.module per kernel (Vulkan Shader, GLCompute; "
      "client-api=opencl: OpenCL Kernels)",
      [](OpPassManager &pm, const TileToSPIRVPipelineOptions &o) {
        VulkanTargetOptions vo;
        if (o.clientApi != "vulkan" && o.clientApi != "opencl") {
          // tessera-tile-to-gpu names the bad value and fails.
          TileToGPUOptions tg;
          tg.clientApi = o.clientApi;
          pm.addPass(createTileToGPU(tg));
          return;
        }
        vo.nativeFloatAtomicAdd = o.floatAtomicAdd != "cas";
        vo.openclKernel = o.clientApi == "opencl";
        buildTileToSPIRVPipeline(pm, vo);
      });
}

LogicalResult tessera::spv::compileForVulkan(ModuleOp module, std::vector<VulkanKernel> *kernels,
                                             const VulkanTargetOptions &options) {
  OwningOpRef<ModuleOp> m(module.clone());
  std::vector<VulkanKernel> infos;
  m->walk([&](func::FuncOp f) {
    if (f.isExternal() || !f->hasAttr(t::kGroupSizeAttr)) return;
    VulkanKernel k;
    k.name = f.getName().str();
    auto g = t::getGroupSize(f);
    for (int d = 0; d < 3; ++d) k.groupSize[d] = g[d];
    if (auto a = f->getAttrOfType<DenseI64ArrayAttr>(t::kGridAttr))
      for (auto [i, v] : llvm::enumerate(a.asArrayRef())) k.grid[i] = v;
    infos.push_back(std::move(k));
  });
  if (infos.empty()) return module.emitError("no Tile IR kernel (func.func with tessera_tile.group_size)");
  PassManager pm(module.getContext());
  buildTileToSPIRVPipeline(pm, options);
  if (failed(pm.run(*m))) return failure();
  for (auto sm : m->getOps<spirv::ModuleOp>()) {
    std::string entry;
    sm.walk([&](spirv::EntryPointOp e) { entry = e.getFn().str(); });
    for (VulkanKernel &k : infos) {
      if (k.name != entry) continue;
      SmallVector<uint32_t, 0> words;
      if (failed(spirv::serialize(sm, words))) return failure();
      tessera::spv::fixNarrowIntegerLiterals(words);
      k.spirv.assign(words.begin(), words.end());
    }
  }
  for (VulkanKernel &k : infos) {
    if (k.spirv.empty()) return module.emitError() << "kernel " << k.name << " produced no SPIR-V";
    kernels->push_back(std::move(k));
  }
  return success();
}
