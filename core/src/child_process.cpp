#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace tessera::detail {

namespace {

// A pipe whose ends are above descriptor 3 and close on exec, so the dup2
// onto 1, 2 and 3 in the child never meets its own source descriptor.
bool MakePipe(int fds[2]) {
  int raw[2];
  if (::pipe2(raw, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    fds[i] = ::fcntl(raw[i], F_DUPFD_CLOEXEC, 10);
    ::close(raw[i]);
  }
  if (fds[0] < 0 || fds[1] < 0) {
    if (fds[0] >= 0) ::close(fds[0]);
    if (fds[1] >= 0) ::close(fds[1]);
    return false;
  }
  return true;
}

// Reads what is there; false at end of file (or on an error).
bool Drain(int fd, std::string* into, size_t max_bytes, bool keep_tail) {
  char buffer[4096];
  ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  if (keep_tail) {
    into->append(buffer, static_cast<size_t>(n));
    if (into->size() > max_bytes) into->erase(0, into->size() - max_bytes);
  } else if (into->size() < max_bytes) {
    into->append(buffer, std::min(static_cast<size_t>(n), max_bytes - into->size()));
  }
  return true;
}

}  // namespace

std::string SignalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGXCPU: return "SIGXCPU";
    default: return "signal " + std::to_string(sig);
  }
}

ChildResult RunChild(const std::vector<std::string>& argv, double timeout_seconds,
                     const ChildOptions& options) {
  const size_t max_bytes = options.max_bytes;
  ChildResult result;
  if (argv.empty()) {
    result.error = "no program to run";
    return result;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment, built before the spawn (nothing may allocate between
  // a fork and its exec).
  std::vector<std::string> env_storage;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    bool replaced = false;
    for (const auto& [name, value] : options.env)
      replaced |= entry.compare(0, name.size() + 1, name + "=") == 0;
    if (!replaced) env_storage.push_back(std::move(entry));
  }
  for (const auto& [name, value] : options.env) env_storage.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  int report[2], output[2];
  if (!MakePipe(report)) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  if (!MakePipe(output)) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    ::close(report[0]);
    ::close(report[1]);
    return result;
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  const int output_target = options.output_fd >= 0 ? options.output_fd : output[1];
  posix_spawn_file_actions_adddup2(&actions, output_target, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output_target, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, report[1], 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group (a timeout kills the group); no signal blocked or
  // ignored because the host program blocks or ignores it.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1,
                  SIGUSR2, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL})
    sigaddset(&defaults, sig);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(report[1]);
  ::close(output[1]);
  if (rc != 0) {
    result.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    ::close(report[0]);
    ::close(output[0]);
    return result;
  }
  result.started = true;

  const auto deadline = start + std::chrono::duration<double>(timeout_seconds);
  bool report_open = true, output_open = options.output_fd < 0, exited = false;
  int status = 0;
  auto exited_at = start;
  for (;;) {
    if (!exited) {
      // WNOWAIT: the child stays a zombie, so its process group id cannot
      // be reused before the group is killed below.
      siginfo_t info{};
      int rc = ::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT);
      // ECHILD: gone, reaped by the host program (SIGCHLD ignored, or a
      // handler that waits for every child).
      if ((rc == 0 && info.si_pid == pid) || (rc < 0 && errno == ECHILD)) {
        exited = true;
        exited_at = std::chrono::steady_clock::now();
      }
    }
    auto now = std::chrono::steady_clock::now();
    // Done when it exited and its output ended, or a little after it exited
    // when something it started still holds the pipes.
    if (exited && ((!report_open && !output_open) ||
                   now - exited_at > std::chrono::milliseconds(200)))
      break;
    if (!exited && now >= deadline) {
      result.timed_out = true;
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (report_open) fds[n++] = {report[0], POLLIN, 0};
    if (output_open) fds[n++] = {output[0], POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    int wait_ms = static_cast<int>(std::max<long long>(1, std::min<long long>(left, 20)));
    if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(wait_ms, 2)));
      continue;
    }
    if (::poll(fds, n, wait_ms) <= 0) continue;
    for (nfds_t i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fds[i].fd == report[0])
        report_open = Drain(report[0], &result.report, max_bytes, false);
      else
        output_open = Drain(output[0], &result.output, max_bytes, true);
    }
  }
  // The whole group goes: the child if it hangs, and whatever it started.
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  pid_t reaped;
  while ((reaped = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  ::close(output[0]);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // reaped != pid: the host program reaped it first; how it ended is unknown.
  if (!result.timed_out && reaped == pid) {
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace tessera::detail
