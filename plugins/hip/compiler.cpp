// The compiler entries: Compiler_GetTargets from the static table
// (compile_targets.hpp); Compiler_Compile and Compilation_Destroy forwarded
// to libtessera_plugin_hip_compiler.so (compiler/), loaded on the first
// compile.  Compiling for a device adds what the device decides: without an
// arch in the target ("hip"), the device's own gfx name without its feature
// suffix ("hip:gfx90a" on a device whose gcnArchName is
// "gfx90a:sramecc+:xnack-").
#include <cstring>
#include <string>
#include <vector>

#include "compile_targets.hpp"
#include "compiler_part.hpp"
#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::hip {

namespace {
plugin_support::CompilerPart& Part() {
  static plugin_support::CompilerPart part("hip", "libtessera_plugin_hip_compiler.so",
                                           reinterpret_cast<const void*>(&Part));
  return part;
}
}  // namespace

TS_HIP_ENTRY(Compiler_GetTargets, TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE) {
  size_t listed = 0;
  args->targets = Part().Targets(kCompileTargets, kNumCompileTargets, &listed);
  args->num_targets = listed;
  return nullptr;
}

TS_HIP_ENTRY(Compiler_Compile, TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE) {
  if (args->device == nullptr) return Part().Compile(args);
  TS_HIP_CHECK_HANDLE(args->device, "Compiler_Compile", "device");
  const TsDevice* dev = args->device;
  // The target names the arch after ':'; "hip" alone takes the device's.
  std::string target;
  if (args->target) {
    const size_t len = strnlen(args->target, 256);
    target.assign(args->target, len);
  }
  if (target == "hip" && !hip_arch_for(dev->arch).empty()) target += ":" + hip_arch_for(dev->arch);
  return Part().CompileWithDefaults(args, target, {});
}

TS_HIP_ENTRY(Compilation_Destroy, TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE) {
  return Part().Destroy(args);
}

}  // namespace tessera::hip
