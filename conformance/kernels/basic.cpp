// Element-wise and scheduling kernels used by the memory, copies, streams,
// events, graphs, hints and threads areas.  Element i of a 1-D launch is
// group_linear_id * lanes + lane.
//
// Scheduling kernels wait or spin with a time limit: the limits are a safety
// net (a plugin that deadlocks makes the test fail instead of hanging), never
// an assertion on durations.
#include <chrono>
#include <thread>

#include "kernel_util.h"

using namespace cts_kernels;

// fill_u32(uint32* x, uint32 value, uint64 n): x[i] = value.
TESSERA_CPU_KERNEL(fill_u32) {
  uint32_t* x = Ptr<uint32_t>(ctx, 0);
  const uint32_t value = Arg<uint32_t>(ctx, 1);
  const uint64_t n = Arg<uint64_t>(ctx, 2);
  const uint64_t first = LinearGroup(ctx) * Lanes(ctx);
  for (uint32_t lane = 0; lane < Lanes(ctx); ++lane)
    if (first + lane < n) x[first + lane] = value;
}

// mul_add_u32(uint32* x, uint32 m, uint32 a, uint64 n): x[i] = x[i]*m + a.
// Two of these do not commute, so a result tells the order they ran in.
TESSERA_CPU_KERNEL(mul_add_u32) {
  uint32_t* x = Ptr<uint32_t>(ctx, 0);
  const uint32_t m = Arg<uint32_t>(ctx, 1);
  const uint32_t a = Arg<uint32_t>(ctx, 2);
  const uint64_t n = Arg<uint64_t>(ctx, 3);
  const uint64_t first = LinearGroup(ctx) * Lanes(ctx);
  for (uint32_t lane = 0; lane < Lanes(ctx); ++lane)
    if (first + lane < n) x[first + lane] = x[first + lane] * m + a;
}

// saxpy(float* y, const float* x, float a, uint64 n): y[i] = a*x[i] + y[i].
TESSERA_CPU_KERNEL(saxpy) {
  float* y = Ptr<float>(ctx, 0);
  const float* x = Ptr<const float>(ctx, 1);
  const float a = Arg<float>(ctx, 2);
  const uint64_t n = Arg<uint64_t>(ctx, 3);
  const uint64_t first = LinearGroup(ctx) * Lanes(ctx);
  for (uint32_t lane = 0; lane < Lanes(ctx); ++lane) {
    const uint64_t i = first + lane;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}

// gate(uint32* flag, uint32* timed_out, uint32 limit_ms): waits until the
// host sets flag[0] != 0 (flag lives in a host-visible buffer); after
// limit_ms it sets timed_out[0] = 1 and returns.
TESSERA_CPU_KERNEL(gate) {
  uint32_t* flag = Ptr<uint32_t>(ctx, 0);
  uint32_t* timed_out = Ptr<uint32_t>(ctx, 1);
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

// delayed_store(uint32* dst, uint32 value, uint32 us): keeps a worker busy
// for `us` microseconds, then stores value.  Work ordered after it sees it.
TESSERA_CPU_KERNEL(delayed_store) {
  uint32_t* dst = Ptr<uint32_t>(ctx, 0);
  const uint32_t value = Arg<uint32_t>(ctx, 1);
  const uint32_t us = Arg<uint32_t>(ctx, 2);
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) std::this_thread::yield();
  __atomic_store_n(dst, value, __ATOMIC_RELEASE);
}

// copy_u32(uint32* dst, const uint32* src, uint64 n): dst[i] = src[i].
TESSERA_CPU_KERNEL(copy_u32) {
  uint32_t* dst = Ptr<uint32_t>(ctx, 0);
  const uint32_t* src = Ptr<const uint32_t>(ctx, 1);
  const uint64_t n = Arg<uint64_t>(ctx, 2);
  const uint64_t first = LinearGroup(ctx) * Lanes(ctx);
  for (uint32_t lane = 0; lane < Lanes(ctx); ++lane)
    if (first + lane < n)
      dst[first + lane] = __atomic_load_n(&src[first + lane], __ATOMIC_ACQUIRE);
}

// handshake(uint32* flags, uint32 me, uint32 limit_ms, uint32* seen): sets
// flags[me] = 1, then waits (up to limit_ms) for flags[1 - me]; seen[me] = 1
// when the partner was seen.  Two launches on two streams both see each
// other only if the streams ran at the same time.
TESSERA_CPU_KERNEL(handshake) {
  uint32_t* flags = Ptr<uint32_t>(ctx, 0);
  const uint32_t me = Arg<uint32_t>(ctx, 1);
  const uint32_t limit_ms = Arg<uint32_t>(ctx, 2);
  uint32_t* seen = Ptr<uint32_t>(ctx, 3);
  __atomic_store_n(&flags[me], 1u, __ATOMIC_RELEASE);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(limit_ms);
  while (__atomic_load_n(&flags[1 - me], __ATOMIC_ACQUIRE) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return;
    std::this_thread::yield();
  }
  __atomic_store_n(&seen[me], 1u, __ATOMIC_RELEASE);
}

// log_stream(uint32* log, uint32 id, uint32 capacity, uint32 spin): log[0]
// counts completions; completion k writes id into log[1 + k].  Busy-loops
// `spin` iterations first so that a launch is not free.
TESSERA_CPU_KERNEL(log_stream) {
  uint32_t* log = Ptr<uint32_t>(ctx, 0);
  const uint32_t id = Arg<uint32_t>(ctx, 1);
  const uint32_t capacity = Arg<uint32_t>(ctx, 2);
  const uint32_t spin = Arg<uint32_t>(ctx, 3);
  volatile uint32_t sink = 0;
  for (uint32_t i = 0; i < spin; ++i) sink = sink + i;
  const uint32_t k = __atomic_fetch_add(&log[0], 1u, __ATOMIC_ACQ_REL);
  if (k < capacity) log[1 + k] = id;
}

// count(uint32* counter, uint32 slot): counter[slot] += 1 per group
// (device-scope atomic).
TESSERA_CPU_KERNEL(count) {
  uint32_t* counter = Ptr<uint32_t>(ctx, 0);
  const uint32_t slot = Arg<uint32_t>(ctx, 1);
  __atomic_fetch_add(&counter[slot], 1u, __ATOMIC_RELAXED);
}
