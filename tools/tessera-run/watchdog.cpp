#include "watchdog.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace tessera::run {
namespace {
std::atomic<const char*> g_phase{"starting"};
}  // namespace

void SetPhase(const char* phase) { g_phase.store(phase, std::memory_order_relaxed); }

void StartWatchdog(double seconds, int exit_code) {
  // Detached: it sleeps through a run that finishes in time and dies with
  // the process.
  std::thread([seconds, exit_code] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    char text[256];
    const int n = std::snprintf(text, sizeof text,
                                "tessera-run: --timeout %g s reached while %s: stopped (a kernel that never ends? "
                                "a larger --timeout allows longer)\n",
                                seconds, g_phase.load(std::memory_order_relaxed));
    // What the run printed so far, unless the main thread holds stdout
    // (it may be blocked in a write: never wait for it).
    if (::ftrylockfile(stdout) == 0) {
      std::fflush(stdout);  // stdio's locks are recursive: this thread holds it
      ::funlockfile(stdout);
    }
    if (n > 0) (void)!::write(2, text, static_cast<size_t>(n) < sizeof text ? static_cast<size_t>(n) : sizeof text - 1);
    ::_exit(exit_code);
  }).detach();
}

}  // namespace tessera::run
