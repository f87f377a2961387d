// libze_loader.so.1, opened with dlopen and resolved through ze_symbols.inc.
// The plugin never links against the loader: one build loads on machines
// with no Level Zero driver and reports "not available: <reason>".
#pragma once

#include <level_zero/ze_api.h>

#include <string>

namespace tessera::level_zero {

// zeDriverGetLastErrorDescription (API 1.6; not in the installed 1.4
// header): the driver's text for the last error on this thread.
using ZeDriverGetLastErrorDescriptionFn = ze_result_t (*)(ze_driver_handle_t, const char**);
// Intel's zex extensions (compute-runtime's zex_driver.h).
using ZexDriverImportExternalPointerFn = ze_result_t (*)(ze_driver_handle_t, void*, size_t);
using ZexDriverReleaseImportedPointerFn = ze_result_t (*)(ze_driver_handle_t, void*);

// The loader's entry points.  One per client; immutable after Open, so any
// thread may read it.
struct ZeFns {
  void* library = nullptr;  // dlopen handle, closed by Close()
#define ZE_FN(name) decltype(&::name) name = nullptr;
#include "ze_symbols.inc"
  ZeDriverGetLastErrorDescriptionFn zeDriverGetLastErrorDescription = nullptr;  // optional

  // dlopen of `path` + every entry.  On failure returns false and sets
  // `reason` (the dlerror text, or the missing symbol).
  bool Open(const char* path, std::string* reason);
  void Close();
};

}  // namespace tessera::level_zero
