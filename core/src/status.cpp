#include "tessera/status.hpp"

#include <cstdio>
#include <cstdlib>

namespace tessera {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kUnknown: return "UNKNOWN";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
    case StatusCode::kUnsupported: return "UNSUPPORTED";
    case StatusCode::kNotReady: return "NOT_READY";
    case StatusCode::kInvalidHandle: return "INVALID_HANDLE";
    case StatusCode::kAbiMismatch: return "ABI_MISMATCH";
  }
  return "UNKNOWN_CODE";
}

namespace detail {
void DieOnErrorValue(const Status& status) {
  std::fprintf(stderr,
               "tessera: StatusOr::value() called on an error: %s\n"
               "tessera: check ok() (or use TESSERA_ASSIGN_OR_RETURN) before "
               "taking the value; aborting\n",
               status.ToString().c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status& Status::Annotate(const std::string& context) & {
  if (!ok()) message_ = context + ": " + message_;
  return *this;
}

Status&& Status::Annotate(const std::string& context) && {
  if (!ok()) message_ = context + ": " + message_;
  return std::move(*this);
}

std::string FormatBytes(unsigned long long bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[64];
  if (value == static_cast<double>(static_cast<unsigned long long>(value)))
    std::snprintf(text, sizeof text, "%.0f %s", value, kUnits[unit]);
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace tessera
