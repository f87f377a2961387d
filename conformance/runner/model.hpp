// What the runner knows about a run: per test, per area, per plugin.
#ifndef TESSERA_CONFORMANCE_RUNNER_MODEL_HPP_
#define TESSERA_CONFORMANCE_RUNNER_MODEL_HPP_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::cts {

enum class Outcome {
  kPassed,
  kFailed,
  kUnsupported,      // a capability is missing: `detail` names it
  kExpectedFailure,  // in the known-failures table: `detail` is the reason
  kXPass,            // in the table, ran (TESSERA_CTS_RUN_KNOWN_FAILURES=1), passed
};
const char* OutcomeName(Outcome outcome);  // "passed", "failed", ...

struct TestResult {
  std::string name;    // "Memory.AllocateEveryKind"
  Outcome outcome = Outcome::kFailed;
  std::string detail;  // failure text, capability, or reason
  double ms = 0;
};

struct AreaResult {
  std::string name;   // "memory"
  std::string suite;  // "Memory"
  std::vector<TestResult> tests;
  // Non-empty when a child process of the area crashed or timed out:
  // "crashed (SIGSEGV) in Memory.Foo", "timed out after 60 s in Memory.Foo".
  std::vector<std::string> incidents;
  double seconds = 0;
  std::string log_file;  // the child's stdout+stderr, "" in-process

  int count(Outcome o) const {
    int n = 0;
    for (const TestResult& t : tests) n += t.outcome == o;
    return n;
  }
  int passed() const { return count(Outcome::kPassed) + count(Outcome::kXPass); }
  int failed() const { return count(Outcome::kFailed); }
  int skipped() const {
    return count(Outcome::kUnsupported) + count(Outcome::kExpectedFailure);
  }
  // The area's verdict: "failed" (a failure or incident), "passed" (at least
  // one pass, nothing failed, no expected failure), "expected failure",
  // "unsupported" (everything unsupported), "empty".
  std::string verdict() const;
  // Counts toward a certification level: passed, nothing else.
  bool qualifies() const { return verdict() == "passed"; }
};

struct RunReport {
  nlohmann::json plugin;   // name, path, vendor, versions; or error
  nlohmann::json devices;  // array of DeviceInfo as JSON
  std::vector<AreaResult> areas;
  std::string level;       // certification level
  std::string command;     // the command line
  std::string started;     // ISO 8601 time
  double seconds = 0;
  bool run_known_failures = false;
  int passed() const;
  int failed() const;
  int skipped() const;
};

// Certification level reached by the areas that ran (docs/conformance.md).
std::string CertificationLevel(const std::vector<AreaResult>& areas);

}  // namespace tessera::cts

#endif  // TESSERA_CONFORMANCE_RUNNER_MODEL_HPP_
