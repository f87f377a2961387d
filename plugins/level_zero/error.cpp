// The ze_result_t -> message/code mapping: errors name the driver call and
// the result, e.g.
//   level_zero: zeMemAllocDevice(1.0 GiB) failed: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
#include "error.hpp"

#include <cstring>

namespace tessera::level_zero {

std::string ze_result_name(ze_result_t r) {
  switch (r) {
#define C(x) \
  case x:    \
    return #x;
    C(ZE_RESULT_SUCCESS) C(ZE_RESULT_NOT_READY) C(ZE_RESULT_ERROR_DEVICE_LOST)
    C(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) C(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
    C(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) C(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)
    C(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET) C(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE)
    C(ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX) C(ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE)
    C(ZE_RESULT_EXP_ERROR_REMOTE_DEVICE) C(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)
    C(ZE_RESULT_ERROR_NOT_AVAILABLE) C(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE)
    C(ZE_RESULT_WARNING_DROPPED_DATA) C(ZE_RESULT_ERROR_UNINITIALIZED)
    C(ZE_RESULT_ERROR_UNSUPPORTED_VERSION) C(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
    C(ZE_RESULT_ERROR_INVALID_ARGUMENT) C(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    C(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE) C(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
    C(ZE_RESULT_ERROR_INVALID_SIZE) C(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)
    C(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT) C(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)
    C(ZE_RESULT_ERROR_INVALID_ENUMERATION) C(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
    C(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT) C(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)
    C(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME) C(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)
    C(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME) C(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)
    C(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION)
    C(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)
    C(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)
    C(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE)
    C(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED) C(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE)
    C(ZE_RESULT_ERROR_OVERLAPPING_REGIONS) C(ZE_RESULT_WARNING_ACTION_REQUIRED)
    C(ZE_RESULT_ERROR_UNKNOWN)
#undef C
    default:
      return strprintf("ZE_RESULT_0x%08x", static_cast<unsigned>(r));
  }
}

TsErrorCode ze_result_code(ze_result_t r) {
  switch (r) {
    case ZE_RESULT_NOT_READY:
      return TS_ERROR_NOT_READY;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
      return TS_ERROR_RESOURCE_EXHAUSTED;
    case ZE_RESULT_ERROR_UNINITIALIZED:
    case ZE_RESULT_ERROR_NOT_AVAILABLE:
    case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE:
    case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE:
      return TS_ERROR_UNAVAILABLE;
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
    case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION:
    case ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT:
      return TS_ERROR_UNSUPPORTED;
    case ZE_RESULT_ERROR_INVALID_ARGUMENT:
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER:
    case ZE_RESULT_ERROR_INVALID_SIZE:
    case ZE_RESULT_ERROR_INVALID_ENUMERATION:
    case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY:
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
    case ZE_RESULT_ERROR_MODULE_LINK_FAILURE:
    case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION:
    case ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION:
    case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX:
    case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE:
    case ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE:
    case ZE_RESULT_ERROR_OVERLAPPING_REGIONS:
      return TS_ERROR_INVALID_ARGUMENT;
    case ZE_RESULT_ERROR_INVALID_GLOBAL_NAME:
    case ZE_RESULT_ERROR_INVALID_KERNEL_NAME:
    case ZE_RESULT_ERROR_INVALID_FUNCTION_NAME:
      return TS_ERROR_NOT_FOUND;
    case ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
    case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT:
      return TS_ERROR_INVALID_HANDLE;
    case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
    case ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED:
    case ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE:
    case ZE_RESULT_WARNING_ACTION_REQUIRED:
      return TS_ERROR_FAILED_PRECONDITION;
    case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
      return TS_ERROR_PERMISSION_DENIED;
    // The device is unusable from now on.
    case ZE_RESULT_ERROR_DEVICE_LOST:
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET:
      return TS_ERROR_ABORTED;
    case ZE_RESULT_WARNING_DROPPED_DATA:
      return TS_ERROR_DATA_LOSS;
    case ZE_RESULT_ERROR_UNKNOWN:
      return TS_ERROR_UNKNOWN;
    default:
      return TS_ERROR_INTERNAL;
  }
}

std::string ze_result_hint(ze_result_t r) {
  switch (r) {
    case ZE_RESULT_ERROR_UNINITIALIZED:
      return "the Level Zero loader found no driver with a GPU: install Intel's compute "
             "runtime (intel-level-zero-gpu / level-zero driver) and check that /dev/dri "
             "is accessible";
    case ZE_RESULT_ERROR_DEVICE_LOST:
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET:
      return "a kernel faulted or the GPU hung; the device is unusable from now on: restart "
             "the process to use it again";
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
      return "the driver's SPIR-V compiler rejected the module; its build log follows when it "
             "wrote one";
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
      return "the driver implements an older Level Zero API than this call needs";
    default:
      return "";
  }
}

std::string format_ze_error(const std::string& call, const std::string& name,
                            const std::string& description, const std::string& hint) {
  std::string m = "level_zero: " + call + " failed: " + name;
  if (!description.empty()) m += ": " + description;
  if (!hint.empty()) m += " (" + hint + ")";
  return m;
}

std::string api_version_text(uint32_t v) {
  return std::to_string(ZE_MAJOR_VERSION(v)) + "." + std::to_string(ZE_MINOR_VERSION(v));
}

std::string driver_version_text(uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xffu) + "." +
         std::to_string(v & 0xffffu);
}

TsError* ze_error(const ZeFns* fn, ze_driver_handle_t driver, ze_result_t r,
                  const std::string& call) noexcept {
  try {
    std::string description;
    if (fn && driver && fn->zeDriverGetLastErrorDescription) {
      const char* s = nullptr;
      if (fn->zeDriverGetLastErrorDescription(driver, &s) == ZE_RESULT_SUCCESS && s)
        description.assign(s, strnlen(s, 4096));
    }
    return make_error(ze_result_code(r),
                      format_ze_error(call, ze_result_name(r), description, ze_result_hint(r)));
  } catch (...) {
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "level_zero: out of host memory reporting an error");
  }
}

}  // namespace tessera::level_zero
