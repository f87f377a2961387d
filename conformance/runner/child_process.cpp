// The runner's children run through the core's runner (core/src/
// child_process.cpp, which also probes plugins): posix_spawn, their own
// process group, killed with it at the time limit.  Here: the log file.
#include "runner/child_process.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "src/child_process.hpp"  // the core's (core/src/)

namespace tessera::cts {

std::string SignalName(int sig) { return detail::SignalName(sig); }

std::string SelfExecutable() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, n) : std::string();
}

ChildResult RunChild(const std::vector<std::string>& argv,
                     const std::vector<std::pair<std::string, std::string>>& env,
                     const std::string& log_file, double timeout_seconds) {
  ChildResult result;
  int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    result.error = "cannot open " + log_file + ": " + std::strerror(errno);
    return result;
  }
  detail::ChildOptions options;
  options.env = env;
  options.output_fd = log_fd;
  detail::ChildResult r = detail::RunChild(argv, timeout_seconds, options);
  ::close(log_fd);
  result.started = r.started;
  result.timed_out = r.timed_out;
  result.exit_code = r.exit_code;
  result.signal = r.signal;
  result.seconds = r.seconds;
  result.error = r.error;
  return result;
}

}  // namespace tessera::cts
