// The CUresult -> message/code mapping: errors name the driver call and the
// result (cuGetErrorName), e.g.
//   cuda: cuMemAlloc(1.0 GiB) failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory
#include "error.hpp"

namespace tessera::cuda {

std::string cu_result_builtin_name(CUresult r) {
  switch (r) {
#define C(x) \
  case x:    \
    return #x;
    C(CUDA_SUCCESS) C(CUDA_ERROR_INVALID_VALUE) C(CUDA_ERROR_OUT_OF_MEMORY)
    C(CUDA_ERROR_NOT_INITIALIZED) C(CUDA_ERROR_DEINITIALIZED) C(CUDA_ERROR_STUB_LIBRARY)
    C(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER) C(CUDA_ERROR_DEVICE_UNAVAILABLE)
    C(CUDA_ERROR_NO_DEVICE) C(CUDA_ERROR_INVALID_DEVICE) C(CUDA_ERROR_DEVICE_NOT_LICENSED)
    C(CUDA_ERROR_INVALID_IMAGE) C(CUDA_ERROR_INVALID_CONTEXT) C(CUDA_ERROR_NO_BINARY_FOR_GPU)
    C(CUDA_ERROR_ECC_UNCORRECTABLE) C(CUDA_ERROR_UNSUPPORTED_LIMIT)
    C(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED) C(CUDA_ERROR_INVALID_PTX)
    C(CUDA_ERROR_NVLINK_UNCORRECTABLE) C(CUDA_ERROR_JIT_COMPILER_NOT_FOUND)
    C(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) C(CUDA_ERROR_JIT_COMPILATION_DISABLED)
    C(CUDA_ERROR_INVALID_SOURCE) C(CUDA_ERROR_FILE_NOT_FOUND)
    C(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND) C(CUDA_ERROR_OPERATING_SYSTEM)
    C(CUDA_ERROR_INVALID_HANDLE) C(CUDA_ERROR_ILLEGAL_STATE) C(CUDA_ERROR_NOT_FOUND)
    C(CUDA_ERROR_NOT_READY) C(CUDA_ERROR_ILLEGAL_ADDRESS) C(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    C(CUDA_ERROR_LAUNCH_TIMEOUT) C(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    C(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) C(CUDA_ERROR_CONTEXT_IS_DESTROYED)
    C(CUDA_ERROR_ASSERT) C(CUDA_ERROR_TOO_MANY_PEERS) C(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    C(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) C(CUDA_ERROR_HARDWARE_STACK_ERROR)
    C(CUDA_ERROR_ILLEGAL_INSTRUCTION) C(CUDA_ERROR_MISALIGNED_ADDRESS)
    C(CUDA_ERROR_INVALID_ADDRESS_SPACE) C(CUDA_ERROR_INVALID_PC) C(CUDA_ERROR_LAUNCH_FAILED)
    C(CUDA_ERROR_NOT_PERMITTED) C(CUDA_ERROR_NOT_SUPPORTED) C(CUDA_ERROR_SYSTEM_NOT_READY)
    C(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) C(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
    C(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) C(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    C(CUDA_ERROR_STREAM_CAPTURE_MERGE) C(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)
    C(CUDA_ERROR_STREAM_CAPTURE_UNJOINED) C(CUDA_ERROR_STREAM_CAPTURE_ISOLATION)
    C(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) C(CUDA_ERROR_CAPTURED_EVENT)
    C(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) C(CUDA_ERROR_TIMEOUT)
    C(CUDA_ERROR_INVALID_CLUSTER_SIZE) C(CUDA_ERROR_UNKNOWN)
#undef C
    default:
      return "CUDA_ERROR_" + std::to_string(static_cast<int>(r));
  }
}

TsErrorCode cu_result_code(CUresult r) {
  switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_TOO_MANY_PEERS:
      return TS_ERROR_RESOURCE_EXHAUSTED;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_SOURCE:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
      return TS_ERROR_INVALID_ARGUMENT;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
      return TS_ERROR_UNAVAILABLE;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
    case CUDA_ERROR_UNSUPPORTED_LIMIT:
      return TS_ERROR_UNSUPPORTED;
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_FILE_NOT_FOUND:
    case CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND:
      return TS_ERROR_NOT_FOUND;
    case CUDA_ERROR_NOT_READY:
      return TS_ERROR_NOT_READY;
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return TS_ERROR_INVALID_HANDLE;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    case CUDA_ERROR_STREAM_CAPTURE_MERGE:
    case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
    case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
    case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
    case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
    case CUDA_ERROR_CAPTURED_EVENT:
    case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
    case CUDA_ERROR_ILLEGAL_STATE:
    case CUDA_ERROR_PEER_ACCESS_NOT_ENABLED:
      return TS_ERROR_FAILED_PRECONDITION;
    case CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
      return TS_ERROR_ALREADY_EXISTS;
    case CUDA_ERROR_NOT_PERMITTED:
      return TS_ERROR_PERMISSION_DENIED;
    case CUDA_ERROR_TIMEOUT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return TS_ERROR_DEADLINE_EXCEEDED;
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
      return TS_ERROR_DATA_LOSS;
    // Sticky errors: the context is unusable from now on.
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
      return TS_ERROR_ABORTED;
    case CUDA_ERROR_UNKNOWN:
      return TS_ERROR_UNKNOWN;
    default:
      return TS_ERROR_INTERNAL;
  }
}

std::string driver_version_text(int v) {
  if (v <= 0) return "unknown";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cu_result_hint(CUresult r, int driver_version, int cc_major, int cc_minor) {
  const std::string drv = "CUDA " + driver_version_text(driver_version);
  const std::string sm = cc_major > 0
                             ? "sm_" + std::to_string(cc_major) + std::to_string(cc_minor)
                             : std::string("this GPU's architecture");
  switch (r) {
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return "the PTX declares a PTX ISA version newer than this driver (" + drv +
             ") can compile: update the NVIDIA driver, or generate PTX with a toolkit no "
             "newer than " + drv + ", or load a cubin for " + sm + " instead";
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return "the image holds no code this GPU (" + sm +
             ") can run: compile a cubin for " + sm +
             " (cubins run only on their own major architecture, and an 'a' target such "
             "as sm_90a only on that exact one), or ship PTX the driver (" + drv +
             ") can JIT";
    case CUDA_ERROR_INVALID_PTX:
      return "the driver's PTX JIT (" + drv + ") rejected the PTX for " + sm +
             "; its log follows when it wrote one";
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
      return "the driver's PTX JIT library (libnvidia-ptxjitcompiler.so) is missing: "
             "install it with the driver, or load a cubin for " + sm;
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
      return "this call needs a newer NVIDIA driver than " + drv;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
      return "a kernel faulted; the device's CUDA context is unusable from now on (a "
             "sticky error): restart the process to use the device again";
    case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
      return "a stream that joined the capture (by waiting on an event recorded in it) "
             "was not joined back: record an event last in it and wait on it from the "
             "stream that began the capture";
    case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
      return "CUDA's legacy default stream cannot run work while a blocking stream "
             "captures: create the capturing stream with TS_STREAM_NON_BLOCKING, or end "
             "the capture first";
    default:
      return "";
  }
}

std::string format_cu_error(const std::string& call, const std::string& name,
                            const std::string& description, const std::string& hint) {
  std::string m = "cuda: " + call + " failed: " + name;
  if (!description.empty()) m += ": " + description;
  if (!hint.empty()) m += " (" + hint + ")";
  return m;
}

TsError* cu_error(const CudaFns* fn, CUresult r, const std::string& call, int driver_version,
                  int cc_major, int cc_minor) noexcept {
  try {
    std::string name, description;
    const char* s = nullptr;
    if (fn && fn->cuGetErrorName && fn->cuGetErrorName(r, &s) == CUDA_SUCCESS && s) name = s;
    if (name.empty()) name = cu_result_builtin_name(r);
    s = nullptr;
    if (fn && fn->cuGetErrorString && fn->cuGetErrorString(r, &s) == CUDA_SUCCESS && s)
      description = s;
    return make_error(cu_result_code(r),
                      format_cu_error(call, name, description,
                                      cu_result_hint(r, driver_version, cc_major, cc_minor)));
  } catch (...) {
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "cuda: out of host memory reporting an error");
  }
}

}  // namespace tessera::cuda
