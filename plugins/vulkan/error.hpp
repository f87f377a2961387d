// Error objects and the ABI-boundary helpers every entry point uses.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <new>
#include <string>

#include "tessera/plugin.h"
#include "vulkan_symbols.hpp"

// The opaque error handed across the ABI; owned by the caller.
struct TsError {
  TsErrorCode code;
  std::string message;
};

namespace tessera::vk {

// Builds an error; never throws (falls back to a static out-of-memory error).
TsError* make_error(TsErrorCode code, std::string message) noexcept;
TsError* errorf(TsErrorCode code, const char* fmt, ...) noexcept
    __attribute__((format(printf, 2, 3)));
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "1.0 GiB", "512 B".
std::string human_size(uint64_t bytes);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY"
const char* vk_result_name(VkResult r);
// VkResult -> the closest TsErrorCode.
TsErrorCode vk_result_code(VkResult r);
// "vulkan: <call> failed: <VK_...>" with the code mapped from `r`.
TsError* vk_error(VkResult r, const std::string& call) noexcept;

// Runs f, turning every C++ exception into a TsError: nothing crosses the ABI.
template <class F>
TsError* guard(const char* entry, F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "vulkan: %s: out of host memory", entry);
  } catch (const std::exception& e) {
    return errorf(TS_ERROR_INTERNAL, "vulkan: %s: internal error: %s", entry, e.what());
  } catch (...) {
    return errorf(TS_ERROR_INTERNAL, "vulkan: %s: internal error (unknown exception)",
                  entry);
  }
}

}  // namespace tessera::vk

// Returns from the enclosing function when a Vulkan call fails.
#define TS_VK_CALL(expr, what)                                        \
  do {                                                                \
    VkResult r_ = (expr);                                             \
    if (r_ != VK_SUCCESS) return ::tessera::vk::vk_error(r_, (what)); \
  } while (0)

// Defines entry point Name: checks `args` and its struct_size (a larger size
// from a newer caller is accepted), then runs Name_impl inside guard().
#define TS_VK_ENTRY(Name, SIZE)                                                   \
  static TsError* Name##_impl(Ts##Name##_Args* args);                             \
  TsError* Name(Ts##Name##_Args* args) noexcept {                                 \
    if (args == nullptr)                                                          \
      return ::tessera::vk::errorf(TS_ERROR_INVALID_ARGUMENT,                     \
                                   "vulkan: " #Name ": args is NULL: pass a Ts" #Name \
                                   "_Args with struct_size = " #SIZE);            \
    if (args->struct_size < (SIZE))                                               \
      return ::tessera::vk::errorf(                                               \
          TS_ERROR_INVALID_ARGUMENT,                                              \
          "vulkan: " #Name ": Ts" #Name "_Args.struct_size is %zu, smaller than " \
          "the %zu bytes of ABI %d.0: set it to " #SIZE,                          \
          args->struct_size, static_cast<size_t>(SIZE), TESSERA_ABI_VERSION_MAJOR); \
    return ::tessera::vk::guard(#Name, [&] { return Name##_impl(args); });        \
  }                                                                               \
  static TsError* Name##_impl(Ts##Name##_Args* args)
