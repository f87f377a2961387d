// The validation layer (docs/runtime.md, "Validation"): TESSERA_VALIDATE=1,
// or RuntimeOptions::validate, stacks a core-side layer between the runtime
// and whichever plugin it selected.  Every call to the plugin passes through
// it, the C++ API's and the raw ABI table's (Runtime::plugin_api()) alike.
// It reports:
//   - use of a destroyed or foreign handle, naming where it was destroyed
//     (the call is refused with TS_ERROR_INVALID_HANDLE);
//   - leaks: objects of the client still alive when it is destroyed, with
//     where each was created;
//   - pageable host memory in an asynchronous copy, and copies or memsets
//     past the end of a buffer (refused, as the core's own checks do);
//   - events waited on (Stream_WaitEvent, Event_Synchronize) before they
//     were ever recorded: the wait is a no-op, almost always a bug;
//   - stream hazards: a buffer written on one stream and read or written on
//     another with no event edge between the two operations, naming both.
#ifndef TESSERA_VALIDATION_HPP_
#define TESSERA_VALIDATION_HPP_

#include <functional>
#include <string>

namespace tessera {

struct ValidationMessage {
  enum class Severity { kWarning, kError };
  Severity severity = Severity::kWarning;
  // One of: "destroyed-handle", "foreign-handle", "leak", "pageable-memory",
  // "out-of-bounds", "wait-before-record", "hazard".
  std::string kind;
  std::string text;  // the whole report, as printed
};

// Receives every report of a validating runtime, on the thread that made the
// call, with the layer's lock held: it must not call into the runtime.
// Without one, reports go to stderr ("tessera validation: ...").
using ValidationCallback = std::function<void(const ValidationMessage&)>;

}  // namespace tessera

#endif  // TESSERA_VALIDATION_HPP_
