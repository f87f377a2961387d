// The compiler entries: Compiler_GetTargets from the static table
// (compile_targets.hpp); Compiler_Compile and Compilation_Destroy forwarded
// to libtessera_plugin_vulkan_compiler.so (compiler/), loaded on the first
// compile.  Compiling for a device adds what the device decides: without
// native f32 atomic add, float_atomic_add=cas (unless the caller chose).
#include <vector>

#include "compile_targets.hpp"
#include "compiler_part.hpp"
#include "internal.hpp"

namespace tessera::vk {

namespace {
plugin_support::CompilerPart& Part() {
  static plugin_support::CompilerPart part("vulkan", "libtessera_plugin_vulkan_compiler.so",
                                           reinterpret_cast<const void*>(&Part));
  return part;
}
}  // namespace

TS_VK_ENTRY(Compiler_GetTargets, TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE) {
  size_t listed = 0;
  args->targets = Part().Targets(kCompileTargets, kNumCompileTargets, &listed);
  args->num_targets = listed;
  return nullptr;
}

TS_VK_ENTRY(Compiler_Compile, TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE) {
  if (args->device == nullptr) return Part().Compile(args);
  TS_VK_CHECK_HANDLE(args->device, "Compiler_Compile", "device");
  const EnabledFeatures& f = args->device->features;
  const bool native_add = f.atomic_float.shaderBufferFloat32AtomicAdd == VK_TRUE &&
                          f.atomic_float.shaderSharedFloat32AtomicAdd == VK_TRUE;
  std::vector<std::pair<std::string, std::string>> defaults;
  if (!native_add) defaults.emplace_back("float_atomic_add", "cas");
  return Part().CompileWithDefaults(args, "", defaults);
}

TS_VK_ENTRY(Compilation_Destroy, TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE) {
  return Part().Destroy(args);
}

}  // namespace tessera::vk
