#include "ze_symbols.hpp"

#include <dlfcn.h>

namespace tessera::level_zero {

bool ZeFns::Open(const char* path, std::string* reason) {
  library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* err = dlerror();
    *reason = err ? err : (std::string(path) + ": dlopen failed");
    return false;
  }
#define ZE_FN(name)                                                                       \
  name = reinterpret_cast<decltype(name)>(dlsym(library, #name));                        \
  if (!name) {                                                                            \
    *reason = std::string(path) + " does not provide " #name                             \
              " (a Level Zero loader older than API 1.4? Tessera needs loader 1.8+)";    \
    Close();                                                                              \
    return false;                                                                         \
  }
#define ZE_FN_OPTIONAL(name) name = reinterpret_cast<decltype(name)>(dlsym(library, #name));
#include "ze_symbols.inc"
  zeDriverGetLastErrorDescription = reinterpret_cast<ZeDriverGetLastErrorDescriptionFn>(
      dlsym(library, "zeDriverGetLastErrorDescription"));
  return true;
}

void ZeFns::Close() {
  if (library) dlclose(library);
  library = nullptr;
#define ZE_FN(name) name = nullptr;
#include "ze_symbols.inc"
  zeDriverGetLastErrorDescription = nullptr;
}

}  // namespace tessera::level_zero
