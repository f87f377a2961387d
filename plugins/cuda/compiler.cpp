// The compiler entries: Compiler_GetTargets from the static table
// (compile_targets.hpp); Compiler_Compile and Compilation_Destroy forwarded
// to libtessera_plugin_cuda_compiler.so (compiler/), loaded on the first
// compile.  Compiling for a device adds what the device decides: without an
// arch in the target ("cuda"), the device's own ("cuda:sm_90a" on compute
// capability 9.0, "cuda:sm_<major><minor>" otherwise).
#include <cstring>
#include <string>
#include <vector>

#include "compile_targets.hpp"
#include "compiler_part.hpp"
#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::cuda {

namespace {
plugin_support::CompilerPart& Part() {
  static plugin_support::CompilerPart part("cuda", "libtessera_plugin_cuda_compiler.so",
                                           reinterpret_cast<const void*>(&Part));
  return part;
}
}  // namespace

TS_CU_ENTRY(Compiler_GetTargets, TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE) {
  size_t listed = 0;
  args->targets = Part().Targets(kCompileTargets, kNumCompileTargets, &listed);
  args->num_targets = listed;
  return nullptr;
}

TS_CU_ENTRY(Compiler_Compile, TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE) {
  if (args->device == nullptr) return Part().Compile(args);
  TS_CU_CHECK_HANDLE(args->device, "Compiler_Compile", "device");
  const TsDevice* dev = args->device;
  // The target names the arch after ':'; "cuda" alone takes the device's.
  std::string target;
  if (args->target) {
    const size_t len = strnlen(args->target, 256);
    target.assign(args->target, len);
  }
  if (target == "cuda") target += ":" + cuda_arch_for(dev->cc_major, dev->cc_minor);
  // A device whose link carries no atomics to host memory gets
  // mesh_atomics=false (unless the caller chose): mesh-scope atomics are
  // then refused at compile time, naming the op, instead of racing.
  std::vector<std::pair<std::string, std::string>> defaults;
  if (!(dev->ts.atomic_scopes & TS_ATOMIC_SCOPE_MESH)) defaults.emplace_back("mesh_atomics", "false");
  return Part().CompileWithDefaults(args, target, defaults);
}

TS_CU_ENTRY(Compilation_Destroy, TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE) {
  return Part().Destroy(args);
}

}  // namespace tessera::cuda
