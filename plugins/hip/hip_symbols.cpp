#include "hip_symbols.hpp"

#include <dlfcn.h>

namespace tessera::hip {

// RTLD_NODELETE: the HIP runtime starts threads and registers exit handlers
// once it is used; unloading it under them crashes at exit on some ROCm
// releases.  A client that is destroyed forgets the handle instead, and a
// later dlopen of the same file takes the loaded copy.
bool HipFns::Open(const char* path, std::string* reason) {
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!library) {
    const char* err = dlerror();
    *reason = err ? err : (std::string(path) + ": dlopen failed");
    return false;
  }
#define HIP_FN(name)                                                                  \
  name = reinterpret_cast<decltype(name)>(dlsym(library, TS_HIP_SYMBOL(name)));      \
  if (!name) {                                                                        \
    *reason = std::string(path) + " does not provide " TS_HIP_SYMBOL(name)            \
              " (the HIP runtime is older than the plugin needs: ROCm 5.2 or later)"; \
    Close();                                                                          \
    return false;                                                                     \
  }
#define HIP_FN_OPTIONAL(name) \
  name = reinterpret_cast<decltype(name)>(dlsym(library, TS_HIP_SYMBOL(name)));
#include "hip_symbols.inc"
  return true;
}

void HipFns::Close() {
  if (library) dlclose(library);
  library = nullptr;
#define HIP_FN(name) name = nullptr;
#include "hip_symbols.inc"
}

}  // namespace tessera::hip
