// The compiler entries: Compiler_GetTargets from the static table
// (compile_targets.hpp), Compiler_Compile and Compilation_Destroy forwarded
// to the compiler part, libtessera_plugin_cpu_compiler.so (compiler/), which
// is loaded on the first compile: a process that only runs precompiled
// programs never maps LLVM.
#include "compile_targets.hpp"
#include "compiler_part.hpp"
#include "internal.hpp"

namespace tessera::cpu {

namespace {
plugin_support::CompilerPart& Part() {
  static plugin_support::CompilerPart part("cpu", "libtessera_plugin_cpu_compiler.so",
                                           reinterpret_cast<const void*>(&Part));
  return part;
}
}  // namespace

TS_CPU_ENTRY(Compiler_GetTargets, TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE) {
  size_t listed = 0;
  args->targets = Part().Targets(kCompileTargets, kNumCompileTargets, &listed);
  args->num_targets = listed;
  return nullptr;
}

// A device changes nothing: cpu kernels are compiled for the host (or the
// named cpu) and run on every cpu device.
TS_CPU_ENTRY(Compiler_Compile, TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE) {
  if (args->device != nullptr) TS_CPU_CHECK_HANDLE(args->device, "Compiler_Compile", "device");
  return Part().Compile(args);
}

TS_CPU_ENTRY(Compilation_Destroy, TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE) {
  return Part().Destroy(args);
}

}  // namespace tessera::cpu
