// Status and StatusOr: every fallible call of the C++ API returns one.
//
// A Status carries a code (the ABI's TsErrorCode values) and a message that
// says what went wrong and how to fix it.  As an error travels up, callers add
// context with Annotate(): "while loading plugin cuda: dlopen failed: ...".
#ifndef TESSERA_STATUS_HPP_
#define TESSERA_STATUS_HPP_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

#include "tessera/plugin.h"

namespace tessera {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = TS_ERROR_CANCELLED,
  kUnknown = TS_ERROR_UNKNOWN,
  kInvalidArgument = TS_ERROR_INVALID_ARGUMENT,
  kDeadlineExceeded = TS_ERROR_DEADLINE_EXCEEDED,
  kNotFound = TS_ERROR_NOT_FOUND,
  kAlreadyExists = TS_ERROR_ALREADY_EXISTS,
  kPermissionDenied = TS_ERROR_PERMISSION_DENIED,
  kResourceExhausted = TS_ERROR_RESOURCE_EXHAUSTED,
  kFailedPrecondition = TS_ERROR_FAILED_PRECONDITION,
  kAborted = TS_ERROR_ABORTED,
  kOutOfRange = TS_ERROR_OUT_OF_RANGE,
  kUnimplemented = TS_ERROR_UNIMPLEMENTED,
  kInternal = TS_ERROR_INTERNAL,
  kUnavailable = TS_ERROR_UNAVAILABLE,
  kDataLoss = TS_ERROR_DATA_LOSS,
  kUnauthenticated = TS_ERROR_UNAUTHENTICATED,
  kUnsupported = TS_ERROR_UNSUPPORTED,
  kNotReady = TS_ERROR_NOT_READY,
  kInvalidHandle = TS_ERROR_INVALID_HANDLE,
  kAbiMismatch = TS_ERROR_ABI_MISMATCH,
};

// "INVALID_ARGUMENT", "OUT_OF_RANGE", ...
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "RESOURCE_EXHAUSTED: cpu: cannot allocate 1.0 TiB ..." or "OK".
  std::string ToString() const;

  // Prefixes the message with "<context>: ".  No-op on OK.
  Status& Annotate(const std::string& context) &;
  Status&& Annotate(const std::string& context) &&;

  // Marks a Status as deliberately ignored.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

namespace detail {
// Prints "StatusOr::value() called on an error: <status>" and aborts.
[[noreturn]] void DieOnErrorValue(const Status& status);
}  // namespace detail

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit
    assert(!status_.ok() && "StatusOr built from an OK status has no value");
    if (status_.ok())
      status_ = Status(StatusCode::kInternal, "StatusOr built from OK status");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  // The value.  On an error (check ok() first) these print the status and
  // abort: never undefined behaviour, even in a release build.
  T& value() & { return CheckedValue(); }
  const T& value() const& { return CheckedValue(); }
  T&& value() && { return std::move(CheckedValue()); }
  T& operator*() & { return CheckedValue(); }
  const T& operator*() const& { return CheckedValue(); }
  T* operator->() { return &CheckedValue(); }
  const T* operator->() const { return &CheckedValue(); }

 private:
  T& CheckedValue() {
    if (!value_) detail::DieOnErrorValue(status_);
    return *value_;
  }
  const T& CheckedValue() const {
    if (!value_) detail::DieOnErrorValue(status_);
    return *value_;
  }
  Status status_;
  std::optional<T> value_;
};

// Formats a byte count for messages: "1.0 GiB", "64 MiB", "12 B".
std::string FormatBytes(unsigned long long bytes);

}  // namespace tessera

// Early return on error, for code inside the runtime and in tools.
#define TESSERA_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::tessera::Status _ts_status = (expr);     \
    if (!_ts_status.ok()) return _ts_status;   \
  } while (0)

#define TESSERA_CONCAT_INNER_(a, b) a##b
#define TESSERA_CONCAT_(a, b) TESSERA_CONCAT_INNER_(a, b)
#define TESSERA_ASSIGN_OR_RETURN(lhs, expr) \
  TESSERA_ASSIGN_OR_RETURN_IMPL_(TESSERA_CONCAT_(_ts_or_, __LINE__), lhs, expr)
#define TESSERA_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();       \
  lhs = std::move(tmp).value()

#endif  // TESSERA_STATUS_HPP_
