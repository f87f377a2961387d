// tessera-run --timeout: a bound on the whole run's wall-clock time.  A
// kernel whose loop never ends cannot be stopped on any backend (the cpu
// plugin runs it on this process's threads, a GPU has no preemption the
// runtime can ask for), so past the limit the process says which phase it
// was in and exits; in a multi-process run the others see its connections
// close.  The phase is kept up to date by the main thread.
#ifndef TESSERA_TOOLS_RUN_WATCHDOG_HPP_
#define TESSERA_TOOLS_RUN_WATCHDOG_HPP_

namespace tessera::run {

/// Starts the watchdog (seconds > 0; once per process): after `seconds`,
/// prints "tessera-run: --timeout S reached while <phase>" to stderr and
/// exits with `exit_code` without running destructors (other threads may
/// be inside a kernel).
void StartWatchdog(double seconds, int exit_code);

/// What the run is doing now ("compiling", "running on cpu", ...): a
/// string literal (it is read by the watchdog's thread).  Thread-safe.
void SetPhase(const char* phase);

}  // namespace tessera::run

#endif
