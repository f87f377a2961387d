// Error objects: Error_Destroy / Error_Message / Error_GetCode, and the
// VkResult -> message/code mapping.
#include "error.hpp"

#include <cstdio>

#include "internal.hpp"

namespace tessera::vk {
namespace {
// Returned when even the error cannot be allocated; never freed.
TsError g_out_of_memory{TS_ERROR_RESOURCE_EXHAUSTED,
                        "vulkan: out of host memory while reporting an error"};

std::string vformat(const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char buf[512];
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  std::string out;
  if (n < 0) {
    out = fmt;
  } else if (static_cast<size_t>(n) < sizeof buf) {
    out.assign(buf, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), fmt, ap2);
    out.resize(static_cast<size_t>(n));
  }
  va_end(ap2);
  return out;
}
}  // namespace

TsError* make_error(TsErrorCode code, std::string message) noexcept {
  try {
    return new TsError{code, std::move(message)};
  } catch (...) {
    return &g_out_of_memory;
  }
}

std::string strprintf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

TsError* errorf(TsErrorCode code, const char* fmt, ...) noexcept {
  try {
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    return make_error(code, std::move(s));
  } catch (...) {
    return &g_out_of_memory;
  }
}

std::string human_size(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return strprintf("%llu B", static_cast<unsigned long long>(bytes));
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  return strprintf("%.1f %s", v, kUnits[u]);
}

const char* vk_result_name(VkResult r) {
  switch (r) {
#define C(x) \
  case x:    \
    return #x;
    C(VK_SUCCESS) C(VK_NOT_READY) C(VK_TIMEOUT) C(VK_EVENT_SET) C(VK_EVENT_RESET)
    C(VK_INCOMPLETE) C(VK_ERROR_OUT_OF_HOST_MEMORY) C(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    C(VK_ERROR_INITIALIZATION_FAILED) C(VK_ERROR_DEVICE_LOST) C(VK_ERROR_MEMORY_MAP_FAILED)
    C(VK_ERROR_LAYER_NOT_PRESENT) C(VK_ERROR_EXTENSION_NOT_PRESENT)
    C(VK_ERROR_FEATURE_NOT_PRESENT) C(VK_ERROR_INCOMPATIBLE_DRIVER)
    C(VK_ERROR_TOO_MANY_OBJECTS) C(VK_ERROR_FORMAT_NOT_SUPPORTED)
    C(VK_ERROR_FRAGMENTED_POOL) C(VK_ERROR_UNKNOWN) C(VK_ERROR_OUT_OF_POOL_MEMORY)
    C(VK_ERROR_INVALID_EXTERNAL_HANDLE) C(VK_ERROR_FRAGMENTATION)
    C(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) C(VK_PIPELINE_COMPILE_REQUIRED)
    C(VK_ERROR_INVALID_SHADER_NV) C(VK_ERROR_NOT_PERMITTED_KHR)
#undef C
    default:
      return "VK_ERROR_(unrecognised)";
  }
}

TsErrorCode vk_result_code(VkResult r) {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_TOO_MANY_OBJECTS:
      return TS_ERROR_RESOURCE_EXHAUSTED;
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_DEVICE_LOST:
      return TS_ERROR_UNAVAILABLE;
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      return TS_ERROR_UNSUPPORTED;
    case VK_ERROR_INVALID_SHADER_NV:
    case VK_ERROR_INVALID_EXTERNAL_HANDLE:
      return TS_ERROR_INVALID_ARGUMENT;
    case VK_TIMEOUT:
      return TS_ERROR_DEADLINE_EXCEEDED;
    case VK_NOT_READY:
      return TS_ERROR_NOT_READY;
    case VK_ERROR_NOT_PERMITTED_KHR:
      return TS_ERROR_PERMISSION_DENIED;
    default:
      return TS_ERROR_INTERNAL;
  }
}

TsError* vk_error(VkResult r, const std::string& call) noexcept {
  try {
    return make_error(vk_result_code(r),
                      "vulkan: " + call + " failed: " + vk_result_name(r));
  } catch (...) {
    return &g_out_of_memory;
  }
}

TS_VK_ENTRY(Error_Destroy, TS_ERROR_DESTROY_ARGS_STRUCT_SIZE) {
  if (args->error != &g_out_of_memory) delete args->error;  // NULL is fine
  return nullptr;
}

TS_VK_ENTRY(Error_Message, TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE) {
  if (args->error == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Error_Message: error is NULL");
  args->message = args->error->message.c_str();
  args->message_size = args->error->message.size();
  return nullptr;
}

TS_VK_ENTRY(Error_GetCode, TS_ERROR_GETCODE_ARGS_STRUCT_SIZE) {
  if (args->error == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Error_GetCode: error is NULL");
  args->code = args->error->code;
  return nullptr;
}

}  // namespace tessera::vk
