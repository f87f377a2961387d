// libcuda.so.1, opened with dlopen and resolved through cuda_symbols.inc.
// The plugin never links against libcuda: one build loads on machines with
// no NVIDIA driver and reports "not available: <dlerror text>".
#pragma once

#include <cuda.h>

#include <string>

// "cuMemAlloc" -> "cuMemAlloc_v2": the argument is macro-expanded (cuda.h's
// version #defines) before it is stringized.
#define TS_CU_STR_(x) #x
#define TS_CU_SYMBOL(name) TS_CU_STR_(name)

namespace tessera::cuda {

// The driver's entry points.  One per client; immutable after Open, so any
// thread may read it.  Each member is named by the versioned symbol (the
// public name expands to it), so `fn.cuMemAlloc(...)` calls cuMemAlloc_v2.
struct CudaFns {
  void* library = nullptr;  // dlopen handle, closed by Close()
#define CU_FN(name) decltype(&::name) name = nullptr;
#include "cuda_symbols.inc"

  // dlopen of `path` + every entry.  On failure returns false and sets
  // `reason` (the dlerror text, or the missing symbol).
  bool Open(const char* path, std::string* reason);
  void Close();
};

}  // namespace tessera::cuda
