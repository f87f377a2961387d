// libamdhip64.so.5, opened with dlopen and resolved through hip_symbols.inc.
// The plugin never links against libamdhip64: one build loads on machines
// without ROCm and reports "not available: <dlerror text>".
//
// hip_runtime_api.h compiles as plain C++ (no hipcc) once the platform is
// chosen: the build defines __HIP_PLATFORM_AMD__ (CMakeLists.txt).
#pragma once

#ifndef __HIP_PLATFORM_AMD__
#error "build the hip plugin with -D__HIP_PLATFORM_AMD__ (hip_runtime_api.h needs a platform)"
#endif
#include <hip/hip_runtime_api.h>

#include <string>
#include <type_traits>

// "hipGetDeviceProperties" -> whatever the header maps it to: the argument
// is macro-expanded before it is stringized.
#define TS_HIP_STR_(x) #x
#define TS_HIP_SYMBOL(name) TS_HIP_STR_(name)

namespace tessera::hip {

// The runtime's entry points.  One per client; immutable after Open, so any
// thread may read it.
struct HipFns {
  void* library = nullptr;  // dlopen handle (RTLD_NODELETE: see Open)
#define HIP_FN(name) decltype(&::name) name = nullptr;
#define HIP_FN_SIG(name, sig) \
  decltype(static_cast<std::add_pointer_t<sig>>(&::name)) name = nullptr;
#include "hip_symbols.inc"

  // dlopen of `path` + every entry.  On failure returns false and sets
  // `reason` (the dlerror text, or the missing symbol).
  bool Open(const char* path, std::string* reason);
  void Close();
};

}  // namespace tessera::hip
