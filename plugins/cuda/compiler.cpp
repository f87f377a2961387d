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
  args->targets = Part().Targets(kCompileTargets, kNumCompileTargets);
  args->num_targets = kNumCompileTargets;
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
  std::vector<TsNamedValue> options;
  bool chosen = false;
  if (args->options && args->num_options <= 1024)
    for (size_t i = 0; i < args->num_options; ++i) {
      options.push_back(args->options[i]);
      chosen |= args->options[i].name && std::strcmp(args->options[i].name, "mesh_atomics") == 0;
    }
  if (!chosen && !(dev->ts.atomic_scopes & TS_ATOMIC_SCOPE_MESH)) {
    TsNamedValue v{};
    v.struct_size = TS_NAMED_VALUE_STRUCT_SIZE;
    v.name = "mesh_atomics";
    v.type = TS_VALUE_BOOL;
    v.bool_value = 0;
    options.push_back(v);
  }
  TsCompiler_Compile_Args forwarded = *args;
  forwarded.options = options.empty() ? nullptr : options.data();
  forwarded.num_options = options.size();
  forwarded.target = target.empty() ? args->target : target.c_str();
  forwarded.device = nullptr;  // the part knows no device of this plugin
  TsError* e = Part().Compile(&forwarded);
  // Copy the outputs back (the caller's struct is the one it reads).
  args->compilation = forwarded.compilation;
  args->format = forwarded.format;
  args->data = forwarded.data;
  args->size = forwarded.size;
  args->kernels = forwarded.kernels;
  args->num_kernels = forwarded.num_kernels;
  args->log = forwarded.log;
  return e;
}

TS_CU_ENTRY(Compilation_Destroy, TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE) {
  return Part().Destroy(args);
}

}  // namespace tessera::cuda
