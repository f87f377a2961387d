// tessera-startup-timing: how long Runtime::Create takes in a fresh process
// (discovery, probes, selection), then a second Create in the same process.
// Prints one JSON object; tests/startup_timing.py runs it many times and
// reports medians (docs/runtime.md, "Isolation").  Not a test: timings are
// never asserted.
#include <chrono>
#include <cstdio>

#include "tessera/runtime.hpp"

int main() {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  auto t0 = Clock::now();
  auto first = tessera::Runtime::Create();
  auto t1 = Clock::now();
  auto second = tessera::Runtime::Create();
  auto t2 = Clock::now();
  std::printf("{\"backend\": \"%s\", \"first_create_ms\": %.3f, \"second_create_ms\": %.3f}\n",
              first.ok() ? first->backend().c_str() : "", ms(t1 - t0), ms(t2 - t1));
  return first.ok() ? 0 : 1;
}
