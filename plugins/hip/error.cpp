// The hipError_t -> message/code mapping: errors name the runtime call and
// the result (hipGetErrorName), e.g.
//   hip: hipMalloc(1.0 GiB) failed: hipErrorOutOfMemory: out of memory
#include "error.hpp"

#include <cstring>

namespace tessera::hip {

std::string hip_error_builtin_name(hipError_t r) {
  switch (r) {
#define C(x) \
  case x:    \
    return #x;
    C(hipSuccess) C(hipErrorInvalidValue) C(hipErrorOutOfMemory) C(hipErrorNotInitialized)
    C(hipErrorDeinitialized) C(hipErrorProfilerDisabled) C(hipErrorProfilerNotInitialized)
    C(hipErrorProfilerAlreadyStarted) C(hipErrorProfilerAlreadyStopped)
    C(hipErrorInvalidConfiguration) C(hipErrorInvalidPitchValue) C(hipErrorInvalidSymbol)
    C(hipErrorInvalidDevicePointer) C(hipErrorInvalidMemcpyDirection)
    C(hipErrorInsufficientDriver) C(hipErrorMissingConfiguration) C(hipErrorPriorLaunchFailure)
    C(hipErrorInvalidDeviceFunction) C(hipErrorNoDevice) C(hipErrorInvalidDevice)
    C(hipErrorInvalidImage) C(hipErrorInvalidContext) C(hipErrorContextAlreadyCurrent)
    C(hipErrorMapFailed) C(hipErrorUnmapFailed) C(hipErrorArrayIsMapped)
    C(hipErrorAlreadyMapped) C(hipErrorNoBinaryForGpu) C(hipErrorAlreadyAcquired)
    C(hipErrorNotMapped) C(hipErrorNotMappedAsArray) C(hipErrorNotMappedAsPointer)
    C(hipErrorECCNotCorrectable) C(hipErrorUnsupportedLimit) C(hipErrorContextAlreadyInUse)
    C(hipErrorPeerAccessUnsupported) C(hipErrorInvalidKernelFile)
    C(hipErrorInvalidGraphicsContext) C(hipErrorInvalidSource) C(hipErrorFileNotFound)
    C(hipErrorSharedObjectSymbolNotFound) C(hipErrorSharedObjectInitFailed)
    C(hipErrorOperatingSystem) C(hipErrorInvalidHandle) C(hipErrorIllegalState)
    C(hipErrorNotFound) C(hipErrorNotReady) C(hipErrorIllegalAddress)
    C(hipErrorLaunchOutOfResources) C(hipErrorLaunchTimeOut)
    C(hipErrorPeerAccessAlreadyEnabled) C(hipErrorPeerAccessNotEnabled)
    C(hipErrorSetOnActiveProcess) C(hipErrorContextIsDestroyed) C(hipErrorAssert)
    C(hipErrorHostMemoryAlreadyRegistered) C(hipErrorHostMemoryNotRegistered)
    C(hipErrorLaunchFailure) C(hipErrorCooperativeLaunchTooLarge) C(hipErrorNotSupported)
    C(hipErrorStreamCaptureUnsupported) C(hipErrorStreamCaptureInvalidated)
    C(hipErrorStreamCaptureMerge) C(hipErrorStreamCaptureUnmatched)
    C(hipErrorStreamCaptureUnjoined) C(hipErrorStreamCaptureIsolation)
    C(hipErrorStreamCaptureImplicit) C(hipErrorCapturedEvent)
    C(hipErrorStreamCaptureWrongThread) C(hipErrorGraphExecUpdateFailure) C(hipErrorUnknown)
    C(hipErrorRuntimeMemory) C(hipErrorRuntimeOther)
#undef C
    default:
      return "hipError_" + std::to_string(static_cast<int>(r));
  }
}

std::string hip_error_builtin_description(hipError_t r) {
  switch (r) {
    case hipErrorInvalidValue: return "invalid argument";
    case hipErrorOutOfMemory: return "out of memory";
    case hipErrorNotInitialized: return "initialization error";
    case hipErrorInsufficientDriver: return "the amdgpu driver is older than the HIP runtime";
    case hipErrorNoDevice: return "no ROCm-capable device is detected";
    case hipErrorInvalidDevice: return "invalid device ordinal";
    case hipErrorInvalidImage: return "device kernel image is invalid";
    case hipErrorNoBinaryForGpu: return "no kernel image is available for execution on the device";
    case hipErrorInvalidKernelFile: return "invalid kernel file";
    case hipErrorSharedObjectInitFailed: return "the code object could not be loaded";
    case hipErrorInvalidDeviceFunction: return "invalid device function";
    case hipErrorInvalidConfiguration: return "invalid configuration argument";
    case hipErrorNotFound: return "named symbol not found";
    case hipErrorNotReady: return "device not ready";
    case hipErrorIllegalAddress: return "an illegal memory access was encountered";
    case hipErrorLaunchOutOfResources: return "too many resources requested for launch";
    case hipErrorLaunchFailure: return "unspecified launch failure";
    case hipErrorPeerAccessUnsupported: return "peer access is not supported between these two devices";
    case hipErrorNotSupported: return "operation not supported";
    case hipErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case hipErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case hipErrorStreamCaptureUnjoined: return "capture was not joined back into the origin stream";
    case hipErrorStreamCaptureImplicit: return "operation would make the legacy stream depend on a capturing blocking stream";
    default: return "";
  }
}

TsErrorCode hip_error_code(hipError_t r) {
  switch (r) {
    case hipErrorOutOfMemory:
    case hipErrorLaunchOutOfResources:
    case hipErrorCooperativeLaunchTooLarge:
    case hipErrorRuntimeMemory:
      return TS_ERROR_RESOURCE_EXHAUSTED;
    case hipErrorInvalidValue:
    case hipErrorInvalidConfiguration:
    case hipErrorInvalidPitchValue:
    case hipErrorInvalidSymbol:
    case hipErrorInvalidDevicePointer:
    case hipErrorInvalidMemcpyDirection:
    case hipErrorMissingConfiguration:
    case hipErrorInvalidDeviceFunction:
    case hipErrorInvalidImage:
    case hipErrorInvalidKernelFile:
    case hipErrorInvalidSource:
    case hipErrorSharedObjectInitFailed:
    case hipErrorHostMemoryNotRegistered:
      return TS_ERROR_INVALID_ARGUMENT;
    case hipErrorNoDevice:
    case hipErrorNotInitialized:
    case hipErrorDeinitialized:
    case hipErrorInsufficientDriver:
    case hipErrorInvalidDevice:
      return TS_ERROR_UNAVAILABLE;
    case hipErrorNoBinaryForGpu:
    case hipErrorNotSupported:
    case hipErrorPeerAccessUnsupported:
    case hipErrorUnsupportedLimit:
      return TS_ERROR_UNSUPPORTED;
    case hipErrorNotFound:
    case hipErrorFileNotFound:
    case hipErrorSharedObjectSymbolNotFound:
      return TS_ERROR_NOT_FOUND;
    case hipErrorNotReady:
      return TS_ERROR_NOT_READY;
    case hipErrorInvalidHandle:
    case hipErrorInvalidContext:
    case hipErrorContextIsDestroyed:
      return TS_ERROR_INVALID_HANDLE;
    case hipErrorStreamCaptureUnsupported:
    case hipErrorStreamCaptureInvalidated:
    case hipErrorStreamCaptureMerge:
    case hipErrorStreamCaptureUnmatched:
    case hipErrorStreamCaptureUnjoined:
    case hipErrorStreamCaptureIsolation:
    case hipErrorStreamCaptureImplicit:
    case hipErrorCapturedEvent:
    case hipErrorStreamCaptureWrongThread:
    case hipErrorIllegalState:
    case hipErrorPeerAccessNotEnabled:
    case hipErrorSetOnActiveProcess:
    case hipErrorContextAlreadyInUse:
      return TS_ERROR_FAILED_PRECONDITION;
    case hipErrorPeerAccessAlreadyEnabled:
    case hipErrorHostMemoryAlreadyRegistered:
    case hipErrorAlreadyMapped:
    case hipErrorAlreadyAcquired:
      return TS_ERROR_ALREADY_EXISTS;
    case hipErrorLaunchTimeOut:
      return TS_ERROR_DEADLINE_EXCEEDED;
    case hipErrorECCNotCorrectable:
      return TS_ERROR_DATA_LOSS;
    // Sticky errors: the device's state is lost from now on.
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorPriorLaunchFailure:
    case hipErrorAssert:
      return TS_ERROR_ABORTED;
    case hipErrorUnknown:
      return TS_ERROR_UNKNOWN;
    default:
      return TS_ERROR_INTERNAL;
  }
}

std::string hip_version_text(int v) {
  if (v <= 0) return "unknown";
  return std::to_string(v / 10000000) + "." + std::to_string((v / 100000) % 100) + "." +
         std::to_string(v % 100000);
}

std::string hip_error_hint(hipError_t r, const std::string& device_arch,
                           const std::string& image_target) {
  const std::string dev = device_arch.empty() ? std::string("this GPU's target") : device_arch;
  const std::string base = device_arch.substr(0, device_arch.find(':'));
  switch (r) {
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidImage:
    case hipErrorInvalidKernelFile:
    case hipErrorSharedObjectInitFailed: {
      std::string h = "the device is " + dev;
      if (!image_target.empty()) h += " and the code object was built for " + image_target;
      h += ": a code object runs only on the gfx target it was compiled for, with matching "
           "sramecc/xnack settings (or 'any'); compile it for " +
           (base.empty() ? std::string("the device's target") : base) +
           " (e.g. --target hip:" + (base.empty() ? std::string("<gfx>") : base) +
           ", or --offload-arch=" + (base.empty() ? std::string("<gfx>") : base) + ")";
      return h;
    }
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorPriorLaunchFailure:
    case hipErrorAssert:
      return "a kernel faulted; the device's state is unusable from now on (a sticky error): "
             "restart the process to use the device again";
    case hipErrorStreamCaptureUnjoined:
      return "a stream that joined the capture (by waiting on an event recorded in it) was "
             "not joined back: record an event last in it and wait on it from the stream "
             "that began the capture";
    case hipErrorStreamCaptureImplicit:
      return "the device's NULL stream cannot run work while a blocking stream captures: "
             "create the capturing stream with TS_STREAM_NON_BLOCKING, or end the capture "
             "first";
    default:
      return "";
  }
}

std::string format_hip_error(const std::string& call, const std::string& name,
                             const std::string& description, const std::string& hint) {
  std::string m = "hip: " + call + " failed: " + name;
  if (!description.empty()) m += ": " + description;
  if (!hint.empty()) m += " (" + hint + ")";
  return m;
}

TsError* hip_error(const HipFns* fn, hipError_t r, const std::string& call,
                   const std::string& device_arch, const std::string& image_target) noexcept {
  try {
    const std::string builtin = hip_error_builtin_name(r);
    std::string name, description;
    const char* s = nullptr;
    if (fn && fn->hipGetErrorName && (s = fn->hipGetErrorName(r)) != nullptr)
      name.assign(s, strnlen(s, 256));
    // ROCm 5.x names every value it does not know "hipErrorUnknown".
    if (name.empty() || (name == "hipErrorUnknown" && r != hipErrorUnknown)) name = builtin;
    s = nullptr;
    if (fn && fn->hipGetErrorString && (s = fn->hipGetErrorString(r)) != nullptr)
      description.assign(s, strnlen(s, 1024));
    if (description == name || description == builtin || description == "hipErrorUnknown")
      description.clear();
    if (description.empty()) description = hip_error_builtin_description(r);
    return make_error(hip_error_code(r),
                      format_hip_error(call, name, description,
                                       hip_error_hint(r, device_arch, image_target)));
  } catch (...) {
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "hip: out of host memory reporting an error");
  }
}

}  // namespace tessera::hip
