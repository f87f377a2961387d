// The compiler entries.  The Level Zero compiler (Tile IR -> SPIR-V for the
// Kernel execution model in the OpenCL environment: Addresses, Kernel and
// Int64 capabilities, CrossWorkgroup buffers) is not written yet, so
// Compiler_GetTargets lists no target and Compiler_Compile is
// TS_ERROR_UNIMPLEMENTED.  Precompiled SPIR-V loads through Executable_Load
// (formats "spirv-kernel" and "archive:spirv-kernel").
#include "internal.hpp"

namespace tessera::level_zero {

TS_ZE_ENTRY(Compiler_GetTargets, TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE) {
  args->targets = nullptr;
  args->num_targets = 0;
  return nullptr;
}

TS_ZE_ENTRY(Compiler_Compile, TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE) {
  return errorf(TS_ERROR_UNIMPLEMENTED,
                "level_zero: Compiler_Compile: the Tile IR -> SPIR-V (Kernel execution model, "
                "OpenCL environment) compiler for Level Zero is not written yet; load "
                "precompiled SPIR-V through Executable_Load (format \"spirv-kernel\" or "
                "\"archive:spirv-kernel\")");
}

TS_ZE_ENTRY(Compilation_Destroy, TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE) {
  if (args->compilation)
    return errorf(TS_ERROR_INVALID_HANDLE,
                  "level_zero: Compilation_Destroy: this plugin never made a compilation");
  return nullptr;
}

}  // namespace tessera::level_zero
