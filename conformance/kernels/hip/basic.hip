// The conformance kernels in the hip plugin's "hsaco" format: the same
// kernels, arguments and semantics as kernels/basic.cpp (elf-native),
// kernels/spirv/*.comp and kernels/cuda/basic.cu, compiled at build time by
// clang (-x hip, device code only, no ROCm headers or device libraries)
// into one code object per GPU target the hip plugin compiles for
// (<kernels dir>/hip/basic-<arch>.hsaco, loaded with hipModuleLoadData on a
// device whose compile arch is <arch>).
//
// Launch ABI: the arguments in order, buffers as device pointers, scalars by
// value (uint32 / uint64 / float).  `extern "C"`: the kernel names are not
// mangled.  No kernel fixes its group size, so tests launch with the group
// size they want.
//
// Element i of a 1-D launch is group_linear_id * lanes + lane, over a 3-D
// grid of groups (kernel_util.h's LinearGroup).  The scheduling kernels
// (gate, handshake, delayed_store, log_stream, count) act once per group:
// lane 0 of each group does the work, as one call of a cpu kernel does.
//
// Spin kernels: GPUs of gfx9 and gfx10 have a constant-rate clock
// (s_memrealtime, 100 MHz); gfx11 has none a kernel reads directly, so there
// a time limit becomes an iteration bound, as in the SPIR-V kernels.  The
// limits are a safety net, never an assertion on durations.  Words another
// agent writes while a kernel polls them (the host, or a kernel on another
// stream) are read with system-scope acquire loads and written with
// system-scope release stores, so a poll sees host writes to pinned memory.

#define TS_DEVICE __attribute__((device)) static inline
#define TS_KERNEL extern "C" __attribute__((global))

typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

TS_DEVICE uint32_t Lanes() {
  return __builtin_amdgcn_workgroup_size_x() * __builtin_amdgcn_workgroup_size_y() *
         __builtin_amdgcn_workgroup_size_z();
}
TS_DEVICE uint32_t Lane() {
  return __builtin_amdgcn_workitem_id_x() +
         __builtin_amdgcn_workgroup_size_x() *
             (__builtin_amdgcn_workitem_id_y() + __builtin_amdgcn_workgroup_size_y() * __builtin_amdgcn_workitem_id_z());
}
// Groups per dimension: the grid size (in work-items) over the group size.
TS_DEVICE uint32_t Groups(uint32_t grid, uint32_t group) { return (grid + group - 1) / group; }
TS_DEVICE uint64_t LinearGroup() {
  const uint64_t gx = Groups(__builtin_amdgcn_grid_size_x(), __builtin_amdgcn_workgroup_size_x());
  const uint64_t gy = Groups(__builtin_amdgcn_grid_size_y(), __builtin_amdgcn_workgroup_size_y());
  return __builtin_amdgcn_workgroup_id_x() +
         gx * (__builtin_amdgcn_workgroup_id_y() + gy * __builtin_amdgcn_workgroup_id_z());
}
TS_DEVICE uint64_t LinearIndex() { return LinearGroup() * Lanes() + Lane(); }

TS_DEVICE uint32_t LoadAcquire(const uint32_t* p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}
TS_DEVICE void StoreRelease(uint32_t* p, uint32_t v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
TS_DEVICE uint32_t AddSystem(uint32_t* p, uint32_t v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
TS_DEVICE uint32_t AddDevice(uint32_t* p, uint32_t v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

// A clock of the GPU, as a count and its ticks per millisecond; without
// one (gfx11), every call counts one tick and a millisecond is 20000 of
// them, as the SPIR-V kernels' kSpinPerMs.
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__)
#define TS_HAVE_CLOCK 0
#else
#define TS_HAVE_CLOCK 1
#endif
struct Clock {
  uint64_t ticks = 0;
  TS_DEVICE uint64_t now(Clock* c) {
#if TS_HAVE_CLOCK
    (void)c;
    return __builtin_amdgcn_s_memrealtime();
#else
    return ++c->ticks;
#endif
  }
  static constexpr uint64_t kTicksPerMs = TS_HAVE_CLOCK ? 100000 : 20000;
};

// fill_u32(uint32* x, uint32 value, uint64 n): x[i] = value.
TS_KERNEL void fill_u32(uint32_t* x, uint32_t value, uint64_t n) {
  const uint64_t i = LinearIndex();
  if (i < n) x[i] = value;
}

// mul_add_u32(uint32* x, uint32 m, uint32 a, uint64 n): x[i] = x[i]*m + a.
// Two of these do not commute, so a result tells the order they ran in.
TS_KERNEL void mul_add_u32(uint32_t* x, uint32_t m, uint32_t a, uint64_t n) {
  const uint64_t i = LinearIndex();
  if (i < n) x[i] = x[i] * m + a;
}

// saxpy(float* y, const float* x, float a, uint64 n): y[i] = a*x[i] + y[i].
// Rounded multiply then rounded add, never contracted into an FMA (built
// with -ffp-contract=off): the same bits as the elf-native kernel.
TS_KERNEL void saxpy(float* y, const float* x, float a, uint64_t n) {
  const uint64_t i = LinearIndex();
  if (i < n) {
    const float product = a * x[i];
    y[i] = product + y[i];
  }
}

// copy_u32(uint32* dst, const uint32* src, uint64 n): dst[i] = src[i]
// (src read with acquire loads, as the other formats do).
TS_KERNEL void copy_u32(uint32_t* dst, const uint32_t* src, uint64_t n) {
  const uint64_t i = LinearIndex();
  if (i < n) dst[i] = LoadAcquire(&src[i]);
}

// count(uint32* counter, uint32 slot): counter[slot] += 1 per group
// (device-scope atomic, lane 0 of each group).
TS_KERNEL void count(uint32_t* counter, uint32_t slot) {
  if (Lane() == 0) AddDevice(&counter[slot], 1u);
}

// gate(uint32* flag, uint32* timed_out, uint32 limit_ms): waits until the
// host sets flag[0] != 0 (flag lives in a host-visible buffer).  Each group
// that gives up after limit_ms adds 1 to timed_out[0].
TS_KERNEL void gate(uint32_t* flag, uint32_t* timed_out, uint32_t limit_ms) {
  if (Lane() != 0) return;
  Clock clock;
  const uint64_t deadline = Clock::now(&clock) + static_cast<uint64_t>(limit_ms) * Clock::kTicksPerMs;
  while (LoadAcquire(flag) == 0) {
    if (Clock::now(&clock) > deadline) {
      // Checked again: opened at the last moment is not a time-out.
      if (LoadAcquire(flag) == 0) AddSystem(timed_out, 1u);
      return;
    }
    __builtin_amdgcn_s_sleep(2);
  }
}

// delayed_store(uint32* dst, uint32 value, uint32 us): keeps the group busy
// for `us` microseconds of the GPU clock, then stores value.  Work ordered
// after it sees it.
TS_KERNEL void delayed_store(uint32_t* dst, uint32_t value, uint32_t us) {
  if (Lane() != 0) return;
  Clock clock;
  const uint64_t end = Clock::now(&clock) + static_cast<uint64_t>(us) * Clock::kTicksPerMs / 1000;
  while (Clock::now(&clock) < end) {
  }
  StoreRelease(dst, value);
}

// handshake(uint32* flags, uint32 me, uint32 limit_ms, uint32* seen): sets
// flags[me] = 1, then waits (up to limit_ms) for flags[1 - me]; seen[me] = 1
// when the partner was seen.  Two launches on two streams both see each
// other only if the streams ran at the same time.
TS_KERNEL void handshake(uint32_t* flags, uint32_t me, uint32_t limit_ms, uint32_t* seen) {
  if (Lane() != 0) return;
  StoreRelease(&flags[me], 1u);
  Clock clock;
  const uint64_t deadline = Clock::now(&clock) + static_cast<uint64_t>(limit_ms) * Clock::kTicksPerMs;
  while (LoadAcquire(&flags[1 - me]) == 0) {
    if (Clock::now(&clock) > deadline) return;
    __builtin_amdgcn_s_sleep(1);
  }
  StoreRelease(&seen[me], 1u);
}

// log_stream(uint32* log, uint32 id, uint32 capacity, uint32 spin): log[0]
// counts completions; completion k writes id into log[1 + k].  Busy-loops
// `spin` iterations first so that a launch is not free.
TS_KERNEL void log_stream(uint32_t* log, uint32_t id, uint32_t capacity, uint32_t spin) {
  if (Lane() != 0) return;
  volatile uint32_t sink = 0;
  for (uint32_t i = 0; i < spin; ++i) sink = sink + i;
  const uint32_t k = AddDevice(&log[0], 1u);
  if (k < capacity) log[1 + k] = id;
}
