// Runs one child process with a time limit: posix_spawn, its own process
// group (so a timeout kills the plugin's threads and children with it),
// stdout and stderr into a log file, extra environment variables.  The
// core's runner does the work (core/src/child_process.hpp): one
// implementation for the plugin probes and the conformance areas.
#ifndef TESSERA_CONFORMANCE_RUNNER_CHILD_PROCESS_HPP_
#define TESSERA_CONFORMANCE_RUNNER_CHILD_PROCESS_HPP_

#include <string>
#include <utility>
#include <vector>

namespace tessera::cts {

struct ChildResult {
  bool started = false;   // fork/exec worked
  bool timed_out = false;
  int exit_code = -1;     // when it exited
  int signal = 0;         // when a signal ended it
  double seconds = 0;
  std::string error;      // why it did not start
};

ChildResult RunChild(const std::vector<std::string>& argv,
                     const std::vector<std::pair<std::string, std::string>>& env,
                     const std::string& log_file, double timeout_seconds);

// "SIGSEGV", "SIGABRT", ... or "signal N".
std::string SignalName(int signal);

// Path of the running executable.
std::string SelfExecutable();

}  // namespace tessera::cts

#endif  // TESSERA_CONFORMANCE_RUNNER_CHILD_PROCESS_HPP_
