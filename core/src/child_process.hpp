// Runs one helper process with a time limit and captures what it prints.
//
// Why posix_spawn and not fork: the core runs inside programs that already
// have threads (a fork there may copy a locked malloc arena into the child,
// which then deadlocks before exec); posix_spawn execs at once.  The child
// gets its own process group, so a timeout kills whatever the plugin started
// with it (threads die with the process, helper processes with the group).
//
// Thread-safety: reentrant; each call owns its pipe and child.
//
// Users: the plugin probe (plugin_probe.cpp) and the conformance runner
// (conformance/runner/child_process.cpp, which runs its areas with it).
#ifndef TESSERA_CORE_CHILD_PROCESS_HPP_
#define TESSERA_CORE_CHILD_PROCESS_HPP_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tessera::detail {

struct ChildResult {
  bool started = false;    // the process ran (posix_spawn succeeded)
  bool timed_out = false;  // killed at the deadline
  int exit_code = -1;      // when it exited
  int signal = 0;          // when a signal ended it
  double seconds = 0;
  // What the child wrote to descriptor 3 (its report channel), the first
  // max_bytes; kept apart from its output so a chatty plugin cannot drown it.
  std::string report;
  // Its stdout and stderr interleaved: the last max_bytes (the last words
  // before a crash are the useful ones).
  std::string output;
  std::string error;       // why it did not start
};

struct ChildOptions {
  // Set (or replaced) in the child's copy of the caller's environment.
  std::vector<std::pair<std::string, std::string>> env;
  // >= 0: the child's stdout and stderr go to this descriptor (a log file)
  // instead of ChildResult::output.
  int output_fd = -1;
  size_t max_bytes = 64 * 1024;  // of report and of output each
};

// Runs argv[0] (a path) with argv and the caller's environment; stdin is
// /dev/null, descriptor 3 the report pipe, stdout and stderr the output pipe
// (or options.output_fd).
ChildResult RunChild(const std::vector<std::string>& argv, double timeout_seconds,
                     const ChildOptions& options = {});

// "SIGSEGV", "SIGABRT", ... or "signal N".
std::string SignalName(int signal);

}  // namespace tessera::detail

#endif  // TESSERA_CORE_CHILD_PROCESS_HPP_
