/*
 * The skeleton's compiler (plugin ABI 1.2): what a plugin that brings its own
 * code generator fills in.
 *
 *   Compiler_GetTargets  works: one target, "skeleton", taking Tile IR and
 *                        producing the (imaginary) "skeleton-elf" format;
 *   Compiler_Compile     checks the request as every compiler must (the
 *                        target, the IR version, a module, the options, the
 *                        emit kind), then returns TS_ERROR_UNIMPLEMENTED:
 *                        lowering Tile IR is the part you write;
 *   Compilation_Destroy  accepts what Compiler_Compile would return.
 *
 * A real compiler reads the module (MLIR bytecode of Tile IR) with MLIR and
 * Tessera's dialects, lowers it for its hardware, and returns the binary and
 * each kernel's signature (see plugins/cpu/compiler and
 * plugins/vulkan/compiler in the Tessera tree, and docs/plugin-sdk.md).  It
 * should live in a second shared object that the plugin loads on the first
 * compile, so that creating a client never maps LLVM.
 */
#include <stdio.h>
#include <string.h>

#include <tessera/ir_version.h>
#include <tessera/plugin.h>

#include "skeleton.h"

static const TsCompilerTarget kTargets[] = {
    {.struct_size = TS_COMPILER_TARGET_STRUCT_SIZE,
     .name = "skeleton",
     .archs = "",
     .default_arch = "",
     .executable_format = "skeleton-elf",
     .emit_kinds = "",
     .input_levels = TS_IR_LEVEL_TILE,
     .schedule = "",
     .options = NULL,
     .num_options = 0,
     /* Change it with every build of the compiler (a version and a build
      * number, or the compiler file's modification time): caches of
      * compiled programs are keyed on it. */
     .build_id = "skeleton-0.1.0"},
};

TsError* Compiler_GetTargets(TsCompiler_GetTargets_Args* args) {
  SKELETON_CHECK_ARGS(args, TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE, "Compiler_GetTargets");
  args->targets = kTargets;
  args->num_targets = sizeof(kTargets) / sizeof(kTargets[0]);
  return NULL;
}

TsError* Compiler_Compile(TsCompiler_Compile_Args* args) {
  char text[512];
  SKELETON_CHECK_ARGS(args, TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE, "Compiler_Compile");
  if (!args->target || strncmp(args->target, "skeleton", 9) != 0)
    return SkeletonError(TS_ERROR_INVALID_ARGUMENT,
                         "skeleton plugin: Compiler_Compile: unknown target; this plugin compiles for "
                         "skeleton");
  if (!args->ir_version || strcmp(args->ir_version, TESSERA_IR_VERSION) != 0) {
    snprintf(text, sizeof(text),
             "skeleton plugin: Compiler_Compile: the module was written by Tessera IR '%.64s' but "
             "this compiler reads '%s'",
             args->ir_version ? args->ir_version : "(none)", TESSERA_IR_VERSION);
    return SkeletonError(TS_ERROR_ABI_MISMATCH, text);
  }
  if (!args->module || args->module_size == 0)
    return SkeletonError(TS_ERROR_INVALID_ARGUMENT,
                         "skeleton plugin: Compiler_Compile: no module (MLIR bytecode) given");
  if (args->num_options > 0) {
    snprintf(text, sizeof(text),
             "skeleton plugin: Compiler_Compile: unknown option '%.64s'; the skeleton target takes "
             "no options",
             args->options && args->options[0].name ? args->options[0].name : "(null)");
    return SkeletonError(TS_ERROR_INVALID_ARGUMENT, text);
  }
  if (args->emit && args->emit[0])
    return SkeletonError(TS_ERROR_INVALID_ARGUMENT,
                         "skeleton plugin: Compiler_Compile: target skeleton emits nothing but its "
                         "executable");
  return SkeletonError(TS_ERROR_UNIMPLEMENTED,
                       "skeleton plugin: Compiler_Compile: lowering Tile IR is not implemented yet: "
                       "read the module with MLIR and Tessera's dialects and emit your binary; see "
                       "examples/plugin_skeleton/README.md");
}

TsError* Compilation_Destroy(TsCompilation_Destroy_Args* args) {
  SKELETON_CHECK_ARGS(args, TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE, "Compilation_Destroy");
  if (args->compilation != NULL)
    return SkeletonError(TS_ERROR_INVALID_HANDLE,
                         "skeleton plugin: Compilation_Destroy: this plugin made no compilation");
  return NULL;
}
