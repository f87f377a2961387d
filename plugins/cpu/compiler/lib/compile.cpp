//===- compile.cpp - the cpu plugin's compiler part -----------------------===//
//
// libtessera_plugin_cpu_compiler.so: Compiler_Compile for target
// "cpu[:<LLVM cpu>]".  Schedule IR functions (the program layer ran
// graph-to-schedule with the target's schedule) and Tile IR kernels become
// one native shared object ("elf-native", tessera/cpu_kernel.h), or LLVM IR /
// assembly text on request.  Loaded by the plugin on its first compile
// (plugins/cpu/compiler.cpp).
//
//===----------------------------------------------------------------------===//
#include "compile_targets.hpp"
#include "compiler_part.hpp"
#include "plugin_support.hpp"
#include "tessera/Target/PluginCompiler.h"
#include "tessera/cpu/Compiler.h"
#include "KernelSignature.h"

using namespace mlir;
using tessera::target::CompileRequest;
using tessera::target::CompileResult;
using tessera::target::KernelParamSpec;
using tessera::target::KernelSpec;

namespace {

TsErrorCode Lower(ModuleOp module, const CompileRequest &request, CompileResult *result,
                  std::string *message) {
  tessera::cpu::CompileOptions options;
  options.cpu = request.arch == "native" ? "" : request.arch;
  int64_t level = request.options.Int("opt_level", 3);
  if (level < 0 || level > 3) {
    *message = "opt_level=" + std::to_string(level) + " is not an LLVM optimization level (0..3)";
    return TS_ERROR_INVALID_ARGUMENT;
  }
  options.opt_level = static_cast<unsigned>(level);
  options.cache_dir = request.options.String("cache_dir", "");
  options.emit = request.emit;
  bool resource_failure = false;
  options.resource_failure = &resource_failure;
  FailureOr<tessera::cpu::CompiledProgram> compiled = tessera::cpu::compileForCPU(module, options);
  // The module verified: what fails now is what this target cannot lower,
  // unless the system ran out of memory, disk or threads on the way.
  if (failed(compiled)) return resource_failure ? TS_ERROR_RESOURCE_EXHAUSTED : TS_ERROR_UNSUPPORTED;
  if (!request.emit.empty()) {
    result->format = request.emit;
    result->data = std::move(compiled->emitted);
  } else {
    result->format = "elf-native";
    result->data = std::move(compiled->image);
  }
  for (const tessera::cpu::KernelInfo &k : compiled->kernels) {
    KernelSpec spec;
    spec.name = k.name;
    spec.grid = k.grid;
    spec.group_size = k.group_size;
    spec.shared_memory_bytes = k.shared_memory;
    for (const tessera::cpu::KernelArgInfo &a : k.args) {
      KernelParamSpec p;
      p.kind = a.buffer ? TS_KERNEL_ARG_BUFFER : TS_KERNEL_ARG_SCALAR;
      p.dtype = a.dtype;
      p.shape = a.shape;
      // A buffer of any length spans what the launch gives it: 0 here.
      p.bytes = a.buffer ? tessera::cpu::bufferBytes(a) : tessera::cpu::dtypeBytes(a.dtype);
      if (!a.buffer) p.access = TS_PARAM_READ;
      else if (a.access & TS_PARAM_SCRATCH) p.access = a.access;  // the kernel's own (ScheduleToCPU)
      else if (k.graph) p.access = a.output ? TS_PARAM_WRITE : TS_PARAM_READ;
      else if (a.access) p.access = a.access;  // from the body (ArgumentAccess)
      spec.params.push_back(std::move(p));
    }
    result->kernels.push_back(std::move(spec));
  }
  if (compiled->cache_hit) result->log += "cache hit\n";
  return static_cast<TsErrorCode>(0);
}

TsError *Compile(TsCompiler_Compile_Args *args) noexcept {
  return tessera::target::RunCompile("cpu", tessera::cpu::kCompileTargets, tessera::cpu::kNumCompileTargets,
                                     args, Lower);
}

const TsPluginApi kApi = tessera::target::CompilerPartApi(&Compile);

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi *tessera_plugin_compiler_get_api(void) { return &kApi; }
