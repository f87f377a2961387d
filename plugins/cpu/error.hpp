// Error objects and the ABI-boundary helpers every entry point uses.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <new>
#include <string>

#include "tessera/plugin.h"

// The opaque error handed across the ABI; owned by the caller.
struct TsError {
  TsErrorCode code;
  std::string message;
};

namespace tessera::cpu {

// Builds an error; never throws (falls back to a static out-of-memory error).
TsError* make_error(TsErrorCode code, std::string message) noexcept;
TsError* errorf(TsErrorCode code, const char* fmt, ...) noexcept
    __attribute__((format(printf, 2, 3)));
// "1.0 TiB", "23.4 GiB", "512 B".
std::string human_size(uint64_t bytes);
// printf into a std::string.
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Runs f, turning every C++ exception into a TsError: nothing crosses the ABI.
template <class F>
TsError* guard(const char* entry, F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "cpu: %s: out of host memory", entry);
  } catch (const std::exception& e) {
    return errorf(TS_ERROR_INTERNAL, "cpu: %s: internal error: %s", entry, e.what());
  } catch (...) {
    return errorf(TS_ERROR_INTERNAL, "cpu: %s: internal error (unknown exception)", entry);
  }
}

}  // namespace tessera::cpu

// Defines entry point Name: checks `args` and its struct_size (a larger size
// from a newer caller is accepted), then runs Name_impl inside guard().
#define TS_CPU_ENTRY(Name, SIZE)                                                  \
  static TsError* Name##_impl(Ts##Name##_Args* args);                             \
  TsError* Name(Ts##Name##_Args* args) noexcept {                                 \
    if (args == nullptr)                                                          \
      return ::tessera::cpu::errorf(TS_ERROR_INVALID_ARGUMENT,                    \
                                    "cpu: " #Name ": args is NULL: pass a Ts" #Name \
                                    "_Args with struct_size = " #SIZE);           \
    if (args->struct_size < (SIZE))                                               \
      return ::tessera::cpu::errorf(                                              \
          TS_ERROR_INVALID_ARGUMENT,                                              \
          "cpu: " #Name ": Ts" #Name "_Args.struct_size is %zu, smaller than "    \
          "the %zu bytes of ABI %d.0: set it to " #SIZE,                          \
          args->struct_size, static_cast<size_t>(SIZE), TESSERA_ABI_VERSION_MAJOR); \
    return ::tessera::cpu::guard(#Name, [&] { return Name##_impl(args); });       \
  }                                                                               \
  static TsError* Name##_impl(Ts##Name##_Args* args)
