//===- compile.cpp - the cuda plugin's compiler part ----------------------===//
//
// libtessera_plugin_cuda_compiler.so: Compiler_Compile for target
// "cuda[:sm_XY]".  Tile IR kernels -> LLVM IR (TileToNVVM) -> PTX (LLVM
// NVPTX, PTXBackend) -> one cubin per kernel (the toolkit's ptxas),
// returned as an "archive:cubin" executable (tessera/kernel_archive.hpp).
// Where no ptxas is found the archive holds the PTX, which the driver
// compiles at load (a warning in the compile log says so).  Emit kinds:
// "ptx" (the text of every kernel) and "cubin" (the kernel's cubin, or the
// archive of them when there are several).  The executable's archive
// carries each TMA kernel's tensor maps beside its cubin (".tensormaps:"
// entries, tensor_map.hpp); emitted forms list them in the compile log.
//===----------------------------------------------------------------------===//
#include "DynamicShared.h"
#include "PTXBackend.h"
#include "TileToNVVM.h"
#include "compile_targets.hpp"
#include "tensor_map.hpp"
#include "compiler_part.hpp"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "plugin_support.hpp"
#include "tessera/Target/PluginCompiler.h"
#include "tessera/kernel_archive.hpp"

using namespace mlir;
using tessera::target::CompileRequest;
using tessera::target::CompileResult;
using tessera::target::KernelSpec;

namespace {

TsErrorCode Lower(ModuleOp module, const CompileRequest &request, CompileResult *result,
                  std::string *message) {
  const int64_t level = request.options.Int("ptxas_opt_level", 3);
  if (level < 0 || level > 3) {
    *message = "ptxas_opt_level=" + std::to_string(level) + " is not a ptxas -O level (0..3)";
    return TS_ERROR_INVALID_ARGUMENT;
  }
  const std::string configured = request.options.String("ptxas", "");
  const std::string ptxas = tessera::cuda::FindPtxas(configured);
  if (!configured.empty() && ptxas.empty()) {
    *message = "ptxas='" + configured + "' is not an executable file";
    return TS_ERROR_INVALID_ARGUMENT;
  }
  if (request.emit == "cubin" && ptxas.empty()) {
    *message = "--emit cubin needs the CUDA toolkit's ptxas, and none was found ($CUDA_HOME/bin, "
               "/usr/local/cuda/bin, PATH; or the compile option ptxas=PATH); --emit ptx works "
               "without it";
    return TS_ERROR_UNAVAILABLE;
  }
  const std::string libdevice = request.options.String("libdevice", "");
  const tessera::cuda::PtxTarget target = tessera::cuda::ParsePtxTarget(request.arch);

  llvm::LLVMContext llvmContext;
  std::vector<tessera::cuda::NVVMKernel> kernels;
  tessera::cuda::NVVMOptions nvvm;
  nvvm.meshAtomics = request.options.Bool("mesh_atomics", true);
  nvvm.asyncCopies = target.smVersion >= 80;
  nvvm.tensorCores = target.smVersion >= 80;
  // wgmma is an sm_90a feature: neither sm_90 nor later architectures run it.
  nvvm.wgmma = target.arch == "sm_90a";
  nvvm.tma = target.arch == "sm_90a" && request.options.Bool("tma", true);
  std::map<std::string, std::vector<std::string>> tensorMaps;
  if (failed(tessera::cuda::lowerTileToNVVM(module, llvmContext, nvvm, &kernels, &tensorMaps)))
    return TS_ERROR_UNSUPPORTED;

  std::vector<tessera::ArchiveEntry> entries;
  std::string text;
  for (tessera::cuda::NVVMKernel &k : kernels) {
    const uint64_t dynamicShared = tessera::cuda::moveSharedToDynamic(*k.module);
    tessera::cuda::AnnotateGroupSize(*k.module, k.name, k.group);
    std::string error;
    std::string ptx = tessera::cuda::EmitPtx(*k.module, target, k.name, libdevice, &error);
    if (ptx.empty()) {
      *message = "kernel '" + k.name + "': " + error;
      return TS_ERROR_INTERNAL;
    }
    tessera::ArchiveEntry e;
    e.name = k.name;
    if (request.emit == "ptx") {
      text += "// kernel " + k.name + " (" + request.arch + ")\n" + ptx + "\n";
    } else if (!ptxas.empty()) {
      std::string log;
      e.data = tessera::cuda::RunPtxas(ptxas, ptx, request.arch, static_cast<int>(level),
                                       /*verbose=*/false, &log, &error);
      if (e.data.empty()) {
        *message = "kernel '" + k.name + "': " + error;
        return TS_ERROR_INTERNAL;
      }
      if (!log.empty()) result->log += "ptxas (" + k.name + "): " + log;
    } else {
      e.data = std::move(ptx);  // the driver compiles PTX at load
    }
    entries.push_back(std::move(e));
    // The kernel's TMA tensor maps, which the plugin encodes at each launch
    // (an emitted cubin lists them in the log instead).
    if (auto maps = tensorMaps.find(k.name); maps != tensorMaps.end() && request.emit.empty()) {
      tessera::ArchiveEntry m;
      m.name = tessera::cuda::kTensorMapEntryPrefix + k.name;
      for (const std::string &line : maps->second) m.data += line + "\n";
      entries.push_back(std::move(m));
    }

    KernelSpec spec;
    spec.name = k.name;
    spec.shared_memory_bytes = dynamicShared;
    for (int d = 0; d < 3; ++d) {
      spec.grid[d] = static_cast<uint32_t>(k.grid[d]);
      spec.group_size[d] = static_cast<uint32_t>(k.group[d]);
    }
    if (auto fn = module.lookupSymbol<func::FuncOp>(k.name))
      spec.params = tessera::target::ParamsOfArguments(fn, "i64");  // index is 64-bit on NVPTX
    result->kernels.push_back(std::move(spec));
  }
  if (request.emit.empty() && ptxas.empty())
    result->log += "no ptxas found ($CUDA_HOME/bin, /usr/local/cuda/bin, PATH): the "
                   "executable holds PTX, which the driver compiles when it is loaded\n";
  // Emitted cubins and PTX are for reading: a TMA kernel's tensor maps,
  // which they cannot carry, are said in the log.
  if (!request.emit.empty())
    for (const auto &[name, maps] : tensorMaps) {
      result->log += "kernel '" + name + "' takes " + std::to_string(maps.size()) +
                     " TMA tensor maps (128 bytes each) after its parameters, which a launch must "
                     "encode (cuTensorMapEncodeTiled); the executable (no --emit) carries them:\n";
      for (const std::string &line : maps) result->log += "  " + line + "\n";
    }
  if (request.emit == "ptx") {
    result->format = "ptx";
    result->data = std::move(text);
  } else if (request.emit == "cubin" && kernels.size() == 1) {
    // The kernel's own cubin (for cuobjdump and nvdisasm).
    result->format = "cubin";
    result->data = std::move(entries.front().data);
  } else {
    result->format = "archive:cubin";
    result->data = tessera::WriteKernelArchive(entries);
  }
  return static_cast<TsErrorCode>(0);
}

TsError *Compile(TsCompiler_Compile_Args *args) noexcept {
  return tessera::target::RunCompile("cuda", tessera::cuda::kCompileTargets,
                                     tessera::cuda::kNumCompileTargets, args, Lower);
}

const TsPluginApi kApi = tessera::target::CompilerPartApi(&Compile);

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi *tessera_plugin_compiler_get_api(void) { return &kApi; }
