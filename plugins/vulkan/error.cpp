// The VkResult -> message/code mapping: errors name the Vulkan call.
#include "error.hpp"

#include <cstdio>

#include "internal.hpp"

namespace tessera::vk {

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
  return errorf(vk_result_code(r), "vulkan: %s failed: %s", call.c_str(), vk_result_name(r));
}

}  // namespace tessera::vk
