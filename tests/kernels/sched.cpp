// Kernels for scheduling tests: they block, spin or count, so that the tests
// can build exact situations (a stream with pending work, two saturated
// streams) without relying on timing.  Counting, not timing: nothing here is
// asserted on durations; the time limits are only a safety net against a
// deadlock in the runtime (the test then fails instead of hanging).
#include <chrono>
#include <cstdint>
#include <thread>

#include "tessera/cpu_kernel.h"

namespace {
template <typename T>
T Arg(const TsCpuLaunchContext* ctx, uint32_t i) {
  return *static_cast<const T*>(ctx->args[i]);
}
}  // namespace

// gate(uint64 flag_address, uint64 timed_out_address, uint32 limit_ms):
// waits until the host sets *(uint32*)flag_address != 0.  If that does not
// happen within limit_ms it sets *(uint32*)timed_out_address = 1 and returns,
// so a runtime that waits for work it should not wait for makes the test fail
// instead of hanging.  The addresses are host addresses passed as scalars
// (the CPU device shares the host's address space).
TESSERA_CPU_KERNEL(gate) {
  auto* flag = reinterpret_cast<uint32_t*>(Arg<uint64_t>(ctx, 0));
  auto* timed_out = reinterpret_cast<uint32_t*>(Arg<uint64_t>(ctx, 1));
  const uint32_t limit_ms = Arg<uint32_t>(ctx, 2);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(limit_ms);
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      __atomic_store_n(timed_out, 1u, __ATOMIC_RELEASE);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// spin_us(uint32 microseconds): keeps a worker busy.
TESSERA_CPU_KERNEL(spin_us) {
  const uint32_t us = Arg<uint32_t>(ctx, 0);
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// log_stream(uint32* log, uint32 stream_id, uint32 capacity, uint32 spin):
// log[0] is an atomic completion counter; entry k of the completion order is
// stored in log[1 + k] (while k < capacity).  Busy-loops `spin` iterations
// first so that a launch is not free.
TESSERA_CPU_KERNEL(log_stream) {
  uint32_t* log = static_cast<uint32_t*>(ctx->args[0]);
  const uint32_t stream_id = Arg<uint32_t>(ctx, 1);
  const uint32_t capacity = Arg<uint32_t>(ctx, 2);
  const uint32_t spin = Arg<uint32_t>(ctx, 3);
  volatile uint32_t sink = 0;
  for (uint32_t i = 0; i < spin; ++i) sink = sink + i;
  uint32_t k = __atomic_fetch_add(&log[0], 1u, __ATOMIC_ACQ_REL);
  if (k < capacity) log[1 + k] = stream_id;
}

// count(uint32* counter): atomically adds 1 per group.
TESSERA_CPU_KERNEL(count) {
  __atomic_fetch_add(static_cast<uint32_t*>(ctx->args[0]), 1u,
                     __ATOMIC_RELAXED);
}
