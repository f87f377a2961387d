//===- compile.cpp - the hip plugin's compiler part -----------------------===//
//
// libtessera_plugin_hip_compiler.so: Compiler_Compile for target
// "hip[:gfxNNN]".  Tile IR kernels -> LLVM IR (TileToROCDL) -> AMDGPU
// object (LLVM 16) -> code object (ld.lld -shared), one per kernel,
// returned as an "archive:hsaco" executable (tessera/kernel_archive.hpp).
// Emit kinds: "hsaco" (the kernel's code object, or the archive of them
// when there are several), "asm" (AMDGPU assembly of every kernel), "llvm"
// (the optimized LLVM IR).  Needs no GPU and no ROCm runtime.
//===----------------------------------------------------------------------===//
#include "AMDGPUBackend.h"
#include "TileToROCDL.h"
#include "compile_targets.hpp"
#include "compiler_part.hpp"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "plugin_support.hpp"
#include "tessera/Target/PluginCompiler.h"
#include "tessera/kernel_archive.hpp"

using namespace mlir;
using tessera::target::CompileRequest;
using tessera::target::CompileResult;
using tessera::target::KernelSpec;

namespace {

// Every AMD GPU that LLVM 16 targets gives a workgroup 64 KiB of LDS.  A
// kernel that asks for more (its tessera_tile.max_shared_memory, e.g. the
// warpgroup kernels of mma=wgmma) is refused by the Tile IR verifier
// against this limit, at its shared_alloc, instead of by the back end
// ("local memory exceeds limit", no location).
constexpr int64_t kLdsBytesPerWorkgroup = 64 * 1024;

LogicalResult FitKernelsToLds(ModuleOp module) {
  bool changed = false;
  for (auto f : module.getOps<func::FuncOp>()) {
    auto limit = f->getAttrOfType<IntegerAttr>(tessera::tile::kMaxSharedAttr);
    if (!limit || limit.getInt() <= kLdsBytesPerWorkgroup) continue;
    f->setAttr(tessera::tile::kMaxSharedAttr, IntegerAttr::get(limit.getType(), kLdsBytesPerWorkgroup));
    changed = true;
  }
  return changed ? verify(module) : success();
}

TsErrorCode Lower(ModuleOp module, const CompileRequest &request, CompileResult *result,
                  std::string *message) {
  if (failed(FitKernelsToLds(module))) return TS_ERROR_INVALID_ARGUMENT;
  const tessera::hip::AmdgpuTarget target = tessera::hip::ParseAmdgpuTarget(request.arch);
  const std::string deviceLibs = request.options.String("device_libs", "");
  tessera::hip::ROCDLOptions options;
  options.chipset = target.chipset;
  options.wavefront = target.wavefront;

  llvm::LLVMContext llvmContext;
  std::vector<tessera::hip::ROCDLKernel> kernels;
  if (failed(tessera::hip::lowerTileToROCDL(module, llvmContext, options, &kernels)))
    return TS_ERROR_UNSUPPORTED;

  std::vector<tessera::ArchiveEntry> entries;
  std::string text;
  for (tessera::hip::ROCDLKernel &k : kernels) {
    const int64_t lanes = k.group[0] * k.group[1] * k.group[2];
    tessera::hip::AmdgpuOutput out;
    std::string error;
    const std::string emit = request.emit == "hsaco" ? "" : request.emit;
    if (!tessera::hip::EmitAmdgpu(*k.module, target, k.name, lanes, deviceLibs, emit, &out, &error)) {
      *message = "kernel '" + k.name + "': " + error;
      return TS_ERROR_INTERNAL;
    }
    if (request.emit == "asm" || request.emit == "llvm") {
      text += "; kernel " + k.name + " (" + target.chipset + ")\n" +
              (request.emit == "asm" ? out.asm_ : out.llvm) + "\n";
    } else {
      tessera::ArchiveEntry e;
      e.name = k.name;
      e.data = tessera::hip::LinkCodeObject(out.object, &error);
      if (e.data.empty()) {
        *message = "kernel '" + k.name + "': " + error;
        return TS_ERROR_INTERNAL;
      }
      entries.push_back(std::move(e));
    }
    KernelSpec spec;
    spec.name = k.name;
    for (int d = 0; d < 3; ++d) {
      spec.grid[d] = static_cast<uint32_t>(k.grid[d]);
      spec.group_size[d] = static_cast<uint32_t>(k.group[d]);
    }
    if (auto fn = module.lookupSymbol<func::FuncOp>(k.name))
      spec.params = tessera::target::ParamsOfArguments(fn, "i64");  // index is 64-bit on AMDGPU
    result->kernels.push_back(std::move(spec));
  }
  if (request.emit == "asm" || request.emit == "llvm") {
    result->format = request.emit;
    result->data = std::move(text);
  } else if (request.emit == "hsaco" && entries.size() == 1) {
    result->format = "hsaco";
    result->data = std::move(entries.front().data);
  } else {
    result->format = "archive:hsaco";
    result->data = tessera::WriteKernelArchive(entries);
  }
  return static_cast<TsErrorCode>(0);
}

TsError *Compile(TsCompiler_Compile_Args *args) noexcept {
  return tessera::target::RunCompile("hip", tessera::hip::kCompileTargets, tessera::hip::kNumCompileTargets,
                                     args, Lower);
}

const TsPluginApi kApi = tessera::target::CompilerPartApi(&Compile);

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi *tessera_plugin_compiler_get_api(void) { return &kApi; }
