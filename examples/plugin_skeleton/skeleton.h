/* What plugin.c and compiler.c share: errors and the Args check. */
#ifndef TESSERA_PLUGIN_SKELETON_H_
#define TESSERA_PLUGIN_SKELETON_H_

#include <tessera/plugin.h>

/* An error the caller owns (Error_Destroy frees it); never fails. */
TsError* SkeletonError(TsErrorCode code, const char* text);

/* Every Args struct starts with struct_size: reject only what is too small
 * to hold the fields of MINOR 0 (a larger one comes from a newer core and
 * is fine: plugin.h, VERSIONING). */
#define SKELETON_CHECK_ARGS(args, min_size, entry)                         \
  do {                                                                     \
    if ((args) == NULL || (args)->struct_size < (min_size))                \
      return SkeletonError(TS_ERROR_INVALID_ARGUMENT,                      \
                           "skeleton plugin: " entry ": Args struct is NULL " \
                           "or smaller than ABI 1.0 requires");            \
  } while (0)

/* compiler.c */
TsError* Compiler_GetTargets(TsCompiler_GetTargets_Args* args);
TsError* Compiler_Compile(TsCompiler_Compile_Args* args);
TsError* Compilation_Destroy(TsCompilation_Destroy_Args* args);

#endif /* TESSERA_PLUGIN_SKELETON_H_ */
