/* LD_PRELOAD shim for sanitizer runs (scripts/sanitize.sh): dlopens each
 * library of $TESSERA_PIN_LIBRARY (colon-separated) with RTLD_NODELETE | RTLD_LOCAL
 * before main, so that it is never unmapped (LeakSanitizer can then
 * attribute what it allocated) and its symbols stay out of the global
 * scope (preloading the Vulkan driver itself would put its libLLVM-15 ahead
 * of the LLVM 16 that the cpu compiler's in-process lld uses). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void tessera_pin_library(void) {
  const char* list = getenv("TESSERA_PIN_LIBRARY");
  if (list == NULL) return;
  char paths[4096];
  strncpy(paths, list, sizeof(paths) - 1);
  paths[sizeof(paths) - 1] = '\0';
  for (char* save = NULL, *path = strtok_r(paths, ":", &save); path != NULL;
       path = strtok_r(NULL, ":", &save))
    if (dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) == NULL)
      fprintf(stderr, "pin_library: cannot load %s: %s\n", path, dlerror());
}
