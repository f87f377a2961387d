// Plugin compilers from C++ (plugin ABI 1.2): what a plugin compiles for and
// the compile itself, with or without a device.
//
// A Compiler is the compiler part of one plugin.  It needs no device and no
// driver: tessera-compile uses it to compile ahead of time on machines
// without the vendor's hardware.  Most users do not call it directly: the
// program layer (tessera/program.hpp) lowers a Tessera program and calls it.
//
// Every answer of the plugin is checked before it is used (sizes and
// counts bounded, strings NUL-terminated within limits), then copied: a
// CompileOutput owns its data.
//
// Thread-safety: a Compiler may be used from several threads at once; the
// plugin's compiler decides how much runs in parallel.
#ifndef TESSERA_COMPILER_HPP_
#define TESSERA_COMPILER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "tessera/runtime.hpp"

namespace tessera {

namespace detail {
struct CompilerImpl;
}

// One parameter of a compiled kernel (TsKernelParam).
struct KernelParamInfo {
  TsKernelArgKind kind = TS_KERNEL_ARG_BUFFER;
  std::string dtype;           // "f32", "bf16", "i32", ...
  std::vector<int64_t> shape;  // buffers
  uint64_t bytes = 0;          // buffers: bytes spanned; scalars: size
  uint32_t access = TS_PARAM_READ | TS_PARAM_WRITE;
};

// One kernel of a compilation (TsKernelSignature).
struct KernelSignature {
  std::string name;
  TsDim3 grid{0, 0, 0};  // {0,0,0}: the launch decides
  TsDim3 group_size{1, 1, 1};
  uint64_t shared_memory_bytes = 0;
  std::vector<KernelParamInfo> params;
};

struct CompileRequest {
  // "cpu", "vulkan", "cuda:sm_90a"; with a device and empty: the first
  // target of the device's plugin.
  std::string target;
  std::string module;       // MLIR bytecode of Tessera IR
  std::string ir_version;   // of the program that wrote it
  std::string source_name;  // for messages
  std::vector<OptionValue> options;
  std::string emit;         // "" for the executable; else one of the emit kinds
};

struct CompileOutput {
  std::string plugin;
  std::string target;  // as requested (with the architecture if given)
  std::string format;  // the executable format, or the emit kind
  std::string data;    // the executable (or emitted text), bytes
  std::vector<KernelSignature> kernels;
  std::string log;     // warnings
};

class Compiler {
 public:
  Compiler() = default;

  // The compiler of the plugin that has a target named like `target` (the
  // part before ':'), searched as Runtime::Create searches (the
  // environment's TESSERA_PLUGIN_PATH unless options say otherwise); no
  // client is created.  Not found: NOT_FOUND listing every target found.
  static StatusOr<Compiler> ForTarget(const std::string& target,
                                      const RuntimeOptions& options = {});
  // The compiler of `device`'s plugin; Compile(request, &device) may then
  // specialise for the device.
  static StatusOr<Compiler> ForDevice(const Device& device);
  // Every target of every plugin found (what tessera-compile --list-targets
  // shows).
  static std::vector<CompileTargetInfo> ListTargets(const RuntimeOptions& options = {});

  bool valid() const { return impl_ != nullptr; }
  const std::string& plugin() const;
  const std::vector<CompileTargetInfo>& targets() const;
  // The target that `target` names, or nullptr.
  const CompileTargetInfo* FindTarget(const std::string& target) const;

  // Errors carry the plugin's diagnostics (file:line:col):
  // INVALID_ARGUMENT for IR or options the compiler rejects, UNSUPPORTED for
  // what the target cannot lower, ABI_MISMATCH for another IR version.
  StatusOr<CompileOutput> Compile(const CompileRequest& request,
                                  const Device* device = nullptr) const;

 private:
  std::shared_ptr<detail::CompilerImpl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_COMPILER_HPP_
