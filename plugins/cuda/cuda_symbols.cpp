#include "cuda_symbols.hpp"

#include <dlfcn.h>

namespace tessera::cuda {

bool CudaFns::Open(const char* path, std::string* reason) {
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* err = dlerror();
    *reason = err ? err : (std::string(path) + ": dlopen failed");
    return false;
  }
#define CU_FN(name)                                                                   \
  name = reinterpret_cast<decltype(name)>(dlsym(library, TS_CU_SYMBOL(name)));       \
  if (!name) {                                                                        \
    *reason = std::string(path) + " does not provide " TS_CU_SYMBOL(name)             \
              " (the NVIDIA driver is older than Tessera needs: CUDA 12.3 or later)"; \
    Close();                                                                          \
    return false;                                                                     \
  }
#define CU_FN_OPTIONAL(name) \
  name = reinterpret_cast<decltype(name)>(dlsym(library, TS_CU_SYMBOL(name)));
#define CU_FN_OR(name, fallback)                                                      \
  name = reinterpret_cast<decltype(name)>(dlsym(library, TS_CU_SYMBOL(name)));       \
  if (!name) name = reinterpret_cast<decltype(name)>(dlsym(library, fallback));       \
  if (!name) {                                                                        \
    *reason = std::string(path) + " provides neither " TS_CU_SYMBOL(name) " nor " fallback; \
    Close();                                                                          \
    return false;                                                                     \
  }
#include "cuda_symbols.inc"
  return true;
}

void CudaFns::Close() {
  if (library) dlclose(library);
  library = nullptr;
#define CU_FN(name) name = nullptr;
#include "cuda_symbols.inc"
}

}  // namespace tessera::cuda
