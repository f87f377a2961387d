// TESSERA_FAULT (or RuntimeOptions::fault_injection): fault injection in the
// core, around its calls into the plugin, so that every backend fails the
// same way (docs/runtime.md, "Fault injection").
//
//   alloc:N     the Nth allocation (Device::allocate, Runtime::pinned_malloc)
//   copy:N      the Nth copy (copy, Stream::copy_async, memset, memset_async)
//   launch:N    the Nth launch (kernel or graph)
//   compile:N   the Nth compile (Compiler::Compile)
//   device_lost, device_lost:N
//               the device is lost at the Nth call that gives the device
//               work (default the first); that call and every later one fail
//               with ABORTED, and only releasing objects still works
//
// Several are separated by commas ("alloc:2,launch:5").  A failed call
// reaches no plugin: nothing is created, nothing leaks, and (but for
// device_lost) the next call works.  Counts are per Runtime (compiles with no
// device: per process).
#ifndef TESSERA_CORE_FAULT_HPP_
#define TESSERA_CORE_FAULT_HPP_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <vector>

#include "tessera/status.hpp"

namespace tessera::detail {

enum class FaultKind { kAlloc = 0, kCopy, kLaunch, kCompile, kOther };

class FaultInjector {
 public:
  // `source` names where `spec` came from, for messages.  Empty spec: null.
  static StatusOr<std::unique_ptr<FaultInjector>> Parse(const std::string& spec,
                                                        const std::string& source);
  // The injector of TESSERA_FAULT for work outside a Runtime (compiles
  // without a device); null when unset.  Re-read when the variable changes.
  static FaultInjector* FromEnvironment();

  // Counts one call of `kind` (`what` names it in the message); returns the
  // injected error when this is the call to fail or the device is lost.
  Status Check(FaultKind kind, const char* what);

 private:
  std::string spec_, source_;
  // The calls of each kind to fail ("alloc:1,alloc:3" fails both; a
  // second entry replaced the first).  Set by Parse, read-only after.
  std::vector<uint64_t> fail_at_[4];
  std::atomic<uint64_t> counts_[4] = {};
  uint64_t lost_at_ = 0;                // 0: never
  std::atomic<uint64_t> device_calls_{0};
};

}  // namespace tessera::detail

// Returns the injected error from the enclosing function (Status or
// StatusOr) when runtime `rt` (a RuntimeImpl*) injects one for this call.
#define TESSERA_INJECT_FAULT(rt, kind, what)                                  \
  do {                                                                        \
    if ((rt) && (rt)->faults) {                                               \
      ::tessera::Status _fault =                                              \
          (rt)->faults->Check(::tessera::detail::FaultKind::kind, what);      \
      if (!_fault.ok()) return _fault;                                        \
    }                                                                         \
  } while (0)

#endif  // TESSERA_CORE_FAULT_HPP_
