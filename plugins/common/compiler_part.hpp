// A plugin's compiler part: a second shared object
// (libtessera_plugin_<name>_compiler.so, which links LLVM/MLIR), loaded on
// the first Compiler_Compile so that loading the plugin and creating a client
// stay cheap (no libMLIR in a process that only runs precompiled programs or
// copies data).
//
// The part exports TESSERA_PLUGIN_COMPILER_ENTRY_POINT, returning a
// TsPluginApi of the same ABI with Error_*, Compiler_Compile and
// Compilation_Destroy filled.  It is looked for next to the object holding
// `anchor` (the plugin's .so, or libtessera.so for the embedded cpu plugin),
// then in that folder's tessera/plugins/.
//
// Errors of the part are copied into errors of the calling plugin (each
// shared object has its own error allocator).
//
// Thread-safety: Load() runs once (std::call_once); Compile and Destroy may
// be called from any thread, as the part's own entries allow.
#pragma once

#include <mutex>
#include <string>

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
  TsError* Destroy(TsCompilation_Destroy_Args* args) noexcept;

 private:
  TsError* Load() noexcept;
  TsError* Forward(TsError* part_error) noexcept;

  const char* plugin_;
  const char* file_;
  const void* anchor_;
  std::once_flag once_;
  void* handle_ = nullptr;
  const TsPluginApi* api_ = nullptr;
  std::string load_error_;
};

}  // namespace tessera::plugin_support
