// Known failures: bugs in a plugin that are being fixed, one row per test.
//
// POLICY (docs/conformance.md, "Known failures")
//  - This table is for TEMPORARY failures only, each with a reason that says
//    what is wrong and, when there is one, the issue that tracks it.
//  - A test a plugin cannot run because the device lacks a capability is NOT
//    listed here: the test checks DeviceInfo and reports "unsupported: <cap>"
//    by itself.  Permanent unsupported and temporary expected failures are
//    kept apart on purpose.
//  - Listed tests are skipped as "expected failure: <reason>".  With
//    TESSERA_CTS_RUN_KNOWN_FAILURES=1 they run; one that passes is reported
//    as XPASS: delete its row.
//  - `test` is "Suite.Name"; a trailing '*' matches any suffix.
#include <cstring>
#include <string>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

struct KnownFailure {
  const char* plugin;  // TsPlugin_GetInfo name: "cpu", "vulkan", ...
  const char* test;    // "Suite.Name", or a prefix ending in '*'
  const char* reason;
};

constexpr KnownFailure kKnownFailures[] = {
    // {"vulkan", "Graphs.ReplayManyTimes", "lavapipe timeline semaphore "
    //                                      "overflow after 2^16 replays (#NN)"},
    {nullptr, nullptr, nullptr},
};

bool Matches(const char* pattern, const std::string& test) {
  size_t n = std::strlen(pattern);
  if (n > 0 && pattern[n - 1] == '*')
    return test.compare(0, n - 1, pattern, n - 1) == 0;
  return test == pattern;
}

}  // namespace

const char* KnownFailureReason(const std::string& plugin,
                               const std::string& test) {
  for (const KnownFailure& k : kKnownFailures) {
    if (!k.plugin) break;
    if (plugin == k.plugin && Matches(k.test, test)) return k.reason;
  }
  return nullptr;
}

}  // namespace tessera::cts
