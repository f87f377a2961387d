// Slices of one's own in the Chrome trace of TESSERA_TRACE (docs/runtime.md,
// "Tracing"): a compile phase, a step of a program, anything a thread does
// between two points.  They go on the calling thread's track of the active
// trace: the one TESSERA_TRACE names, else the one the last Runtime with
// RuntimeOptions::trace_path opened.  Without a trace a TraceScope costs a
// load and a test.
#ifndef TESSERA_TRACE_HPP_
#define TESSERA_TRACE_HPP_

#include <cstdint>
#include <string>

namespace tessera {

// True when a trace is being written.
bool TraceActive();

class TraceScope {
 public:
  // `category` ("compile", "program", ...) must be a string literal (or
  // otherwise outlive the process's trace); `name` is copied.
  TraceScope(const char* category, std::string name);
  ~TraceScope();
  // Adds "key":"value" to the slice's args.
  void AddArg(const char* key, const std::string& value);

  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  void* tracer_;
  const char* category_;
  std::string name_;
  std::string args_;
  uint64_t start_ = 0;
};

}  // namespace tessera

#endif  // TESSERA_TRACE_HPP_
