// A plugin's compiler part: a second shared object
// (libtessera_plugin_<name>_compiler.so, which links LLVM/MLIR), loaded on
// the first Compiler_Compile so that loading the plugin and creating a client
// stay cheap (no libMLIR in a process that only runs precompiled programs or
// copies data).
//
// The part exports TESSERA_PLUGIN_COMPILER_ENTRY_POINT, returning a
// TsPluginApi of the same ABI with Error_*, Compiler_Compile and
// Compilation_Destroy filled.  It is looked for in compilers/ beside the
// object holding `anchor` (the plugin's .so), then in tessera/plugins/compilers/
// beside it (libtessera.so, for the embedded cpu plugin).  Not in the plugin
// folder itself: discovery takes every libtessera_plugin_*.so there for a
// plugin.
//
// Errors of the part are copied into errors of the calling plugin (each
// shared object has its own error allocator).
//
// Thread-safety: Load() is serialized by a mutex and succeeds once; Compile and Destroy may
// be called from any thread, as the part's own entries allow.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/plugin.h"

#define TESSERA_PLUGIN_COMPILER_ENTRY_POINT "tessera_plugin_compiler_get_api"

namespace tessera::plugin_support {

class CompilerPart {
 public:
  // `plugin`: name for messages; `file`: the part's file name; `anchor`: an
  // address inside the plugin.
  CompilerPart(const char* plugin, const char* file, const void* anchor)
      : plugin_(plugin), file_(file), anchor_(anchor) {}

  TsError* Compile(TsCompiler_Compile_Args* args) noexcept;
  // A compile for a device of the plugin, which the part knows nothing of:
  // forwards `args` without the device, with `target` instead of the
  // caller's when not empty, and with each of `defaults` (name, value) added
  // as a string option unless the caller gave that option; the outputs are
  // copied back into `args`.
  TsError* CompileWithDefaults(TsCompiler_Compile_Args* args, const std::string& target,
                               const std::vector<std::pair<std::string, std::string>>& defaults) noexcept;
  TsError* Destroy(TsCompilation_Destroy_Args* args) noexcept;

  // The plugin's compile targets with build_id set to the part's build (its
  // file's size and modification time, found with stat: nothing is loaded),
  // for Compiler_GetTargets; *listed gets their number.  None when the part
  // is not there (a build without the compiler, a part not installed): a
  // plugin lists only targets it can compile for.  The array lives as long
  // as the plugin.
  const TsCompilerTarget* Targets(const TsCompilerTarget* table, size_t count, size_t* listed) noexcept;

 private:
  TsError* Load() noexcept;
  TsError* Forward(TsError* part_error) noexcept;
  std::vector<std::string> Candidates() const;  // where the part may be, in order

  const char* plugin_;
  const char* file_;
  const void* anchor_;
  // Load's state, guarded by load_mu_: the part once loaded (api_ is then
  // set for good), or a lasting reason it cannot be (a part of another
  // ABI).  A dlopen that failed is not remembered: the file may be
  // installed later, or memory may come back (a failure under memory
  // pressure made every later compile fail, saying to install the part).
  std::mutex load_mu_;
  void* handle_ = nullptr;
  std::atomic<const TsPluginApi*> api_{nullptr};
  std::string load_error_;
  std::once_flag targets_once_;
  std::string build_id_;
  std::vector<TsCompilerTarget> targets_;
};

}  // namespace tessera::plugin_support
