// The compiler entries: Compiler_GetTargets from the static table
// (compile_targets.hpp); Compiler_Compile and Compilation_Destroy forwarded
// to libtessera_plugin_level_zero_compiler.so (compiler/), loaded on the
// first compile. Compiling for a device adds what the device decides:
// without f32 atomic add in global and local memory
// (ze_float_atomic_ext_properties_t), float_atomic_add=cas unless the caller
// chose.
#include <vector>

#include "compile_targets.hpp"
#include "compiler_part.hpp"
#include "internal.hpp"

namespace tessera::level_zero {

namespace {
plugin_support::CompilerPart& Part() {
  static plugin_support::CompilerPart part("level_zero", "libtessera_plugin_level_zero_compiler.so",
                                           reinterpret_cast<const void*>(&Part));
  return part;
}
}  // namespace

TS_ZE_ENTRY(Compiler_GetTargets, TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE) {
  size_t listed = 0;
  args->targets = Part().Targets(kCompileTargets, kNumCompileTargets, &listed);
  args->num_targets = listed;
  return nullptr;
}

TS_ZE_ENTRY(Compiler_Compile, TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE) {
  if (args->device == nullptr) return Part().Compile(args);
  TS_ZE_CHECK_HANDLE(args->device, "Compiler_Compile", "device");
  const uint32_t add = ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_ADD;
  std::vector<std::pair<std::string, std::string>> defaults;
  if ((args->device->fp32_atomics & add) != add) defaults.emplace_back("float_atomic_add", "cas");
  return Part().CompileWithDefaults(args, "", defaults);
}

TS_ZE_ENTRY(Compilation_Destroy, TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE) {
  return Part().Destroy(args);
}

}  // namespace tessera::level_zero
