// The child side of the runner: a GoogleTest listener that appends one JSON
// line per test event to a results file, flushed at once, so that the parent
// still knows which tests finished, and which one was running, when the
// child crashes or hangs.
//
//   {"e":"start","test":"Memory.Foo"}
//   {"e":"end","test":"Memory.Foo","status":"passed|failed|skipped",
//    "message":"...","ms":1.5,"known":"reason"}     ("known": in the table)
//
// The parent turns the file into TestResults (ReadResultsLog).
#ifndef TESSERA_CONFORMANCE_RUNNER_RESULTS_LOG_HPP_
#define TESSERA_CONFORMANCE_RUNNER_RESULTS_LOG_HPP_

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runner/model.hpp"

namespace tessera::cts {

// Installs the listener; the file is created (truncated) now.
void InstallResultsLog(const std::string& path);

struct ResultsLog {
  std::vector<TestResult> finished;
  std::string in_flight;  // a test that started and never ended, or ""
};
// `run_known_failures`: whether known failures ran (then a pass is XPASS).
ResultsLog ReadResultsLog(const std::string& path, bool run_known_failures);

}  // namespace tessera::cts

#endif  // TESSERA_CONFORMANCE_RUNNER_RESULTS_LOG_HPP_
