//===- PluginCompiler.h - what a plugin's compiler part shares ------------===//
//
// A plugin's compiler part implements Compiler_Compile (tessera/plugin.h)
// with RunCompile: it checks the request (the target and its architecture,
// the IR version, the options, the emit kind), reads the MLIR bytecode into
// a fresh context with every Tessera dialect, and collects the diagnostics
// (file:line:col) into the error it returns; the plugin's own lowering is
// the callback.  What the callback produces becomes the TsCompilation the
// caller owns (every string and array of it lives until
// Compilation_Destroy, i.e. DestroyCompilation).
//
// Thread-safety: each call has its own MLIRContext; callbacks must be
// reentrant or lock what they share.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_TARGET_PLUGINCOMPILER_H
#define TESSERA_TARGET_PLUGINCOMPILER_H

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/FunctionInterfaces.h"
#include "options.hpp"
#include "tessera/plugin.h"

namespace tessera::target {

struct KernelParamSpec {
  TsKernelArgKind kind = TS_KERNEL_ARG_BUFFER;
  std::string dtype;           // as MLIR prints it: "f32", "bf16", "i32"
  std::vector<int64_t> shape;  // buffers
  uint64_t bytes = 0;          // buffers: bytes spanned; scalars: size
  uint32_t access = TS_PARAM_READ | TS_PARAM_WRITE;
};

struct KernelSpec {
  std::string name;
  std::array<uint32_t, 3> grid{0, 0, 0};  // {0,0,0}: the launch decides
  std::array<uint32_t, 3> group_size{1, 1, 1};
  uint64_t shared_memory_bytes = 0;       // dynamic, at launch
  std::vector<KernelParamSpec> params;
};

/// What the plugin's lowering is asked for.
struct CompileRequest {
  std::string target;       // "cpu"
  std::string arch;         // after ':' or the target's default
  std::string emit;         // "" for the executable
  std::string source_name;  // for messages
  plugin_support::OptionValues options;
};

/// What it produces.
struct CompileResult {
  std::string format;       // executable format, or the emit kind
  std::string data;         // bytes
  std::vector<KernelSpec> kernels;
  std::string log;          // warnings
};

/// The lowering: returns 0 on success, else the TsErrorCode to report
/// (with diagnostics emitted on the module's context, or `*message`).
using CompileCallback = std::function<TsErrorCode(mlir::ModuleOp module, const CompileRequest &request,
                                                  CompileResult *result, std::string *message)>;

/// Compiler_Compile for a compiler part whose targets are `targets`.
TsError *RunCompile(const char *plugin, const TsCompilerTarget *targets, size_t num_targets,
                    TsCompiler_Compile_Args *args, const CompileCallback &lower) noexcept;

/// Compilation_Destroy for compilations RunCompile made.
TsError *DestroyCompilation(TsCompilation_Destroy_Args *args) noexcept;

/// The table a compiler part exports (tessera_plugin_compiler_get_api):
/// this ABI version, the error entries, `compile` (which calls RunCompile
/// with the part's targets) and DestroyCompilation.
TsPluginApi CompilerPartApi(TsError *(*compile)(TsCompiler_Compile_Args *args));

/// The kernel parameters of a function's arguments as the generic launcher
/// passes them: memrefs as buffers (static shapes), everything else as
/// scalars (index as `indexType`).
std::vector<KernelParamSpec> ParamsOfArguments(mlir::FunctionOpInterface fn,
                                               const std::string &indexType);

/// "f32", "bf16", "i32", "index": as MLIR prints the type.
std::string TypeName(mlir::Type type);

}  // namespace tessera::target

#endif
