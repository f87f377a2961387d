// The conformance kernels in the CUDA plugin's "ptx" format: the same
// kernels, arguments and semantics as kernels/basic.cpp (elf-native) and
// kernels/spirv/*.comp, built with `nvcc -ptx` into ONE PTX module
// (<kernels dir>/cuda/basic.ptx, loaded with cuModuleLoadData).
//
// Launch ABI: the arguments in order, buffers as device pointers, scalars by
// value (uint32 / uint64 / float).  `extern "C"`: the kernel names are not
// mangled.  No kernel fixes its group size (no .reqntid), so tests launch
// with the group size they want, as on the cpu plugin.
//
// Element i of a 1-D launch is group_linear_id * lanes + lane, over a 3-D
// grid of groups (kernel_util.h's LinearGroup).  The scheduling kernels
// (gate, handshake, delayed_store, log_stream, count) act once per group:
// lane 0 of each group does the work, as one call of a cpu kernel does.
//
// Spin kernels use the real clock (%globaltimer, nanoseconds); their limits
// are a safety net, never an assertion on durations.  Words that another
// agent writes while a kernel polls them (the host, or a kernel on another
// stream) are read with ld.acquire.sys and written with st.release.sys, so a
// poll sees host writes to mapped (pinned) memory.
#include <stdint.h>

namespace {

__device__ __forceinline__ uint64_t LinearGroup() {
  return blockIdx.x +
         static_cast<uint64_t>(gridDim.x) *
             (blockIdx.y + static_cast<uint64_t>(gridDim.y) * blockIdx.z);
}
__device__ __forceinline__ uint32_t Lanes() {
  return blockDim.x * blockDim.y * blockDim.z;
}
__device__ __forceinline__ uint32_t Lane() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ uint64_t LinearIndex() {
  return LinearGroup() * Lanes() + Lane();
}

// Nanoseconds of the GPU's global timer.
__device__ __forceinline__ uint64_t NowNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ uint32_t LoadAcquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void StoreRelease(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

}  // namespace

// fill_u32(uint32* x, uint32 value, uint64 n): x[i] = value.
extern "C" __global__ void fill_u32(uint32_t* x, uint32_t value, uint64_t n) {
  const uint64_t i = LinearIndex();
  if (i < n) x[i] = value;
}

// mul_add_u32(uint32* x, uint32 m, uint32 a, uint64 n): x[i] = x[i]*m + a.
// Two of these do not commute, so a result tells the order they ran in.
extern "C" __global__ void mul_add_u32(uint32_t* x, uint32_t m, uint32_t a,
                                       uint64_t n) {
  const uint64_t i = LinearIndex();
  if (i < n) x[i] = x[i] * m + a;
}

// saxpy(float* y, const float* x, float a, uint64 n): y[i] = a*x[i] + y[i].
// Rounded multiply then rounded add, never contracted into an FMA: the
// same bits as the elf-native kernel (built with -ffp-contract=off).
extern "C" __global__ void saxpy(float* y, const float* x, float a, uint64_t n) {
  const uint64_t i = LinearIndex();
  if (i < n) y[i] = __fadd_rn(__fmul_rn(a, x[i]), y[i]);
}

// copy_u32(uint32* dst, const uint32* src, uint64 n): dst[i] = src[i]
// (src read with acquire loads, as the other formats do).
extern "C" __global__ void copy_u32(uint32_t* dst, const uint32_t* src, uint64_t n) {
  const uint64_t i = LinearIndex();
  if (i < n) dst[i] = LoadAcquire(&src[i]);
}

// count(uint32* counter, uint32 slot): counter[slot] += 1 per group
// (device-scope atomic, lane 0 of each group).
extern "C" __global__ void count(uint32_t* counter, uint32_t slot) {
  if (Lane() == 0) atomicAdd(&counter[slot], 1u);
}

// gate(uint32* flag, uint32* timed_out, uint32 limit_ms): waits until the
// host sets flag[0] != 0 (flag lives in a host-visible buffer).  Each group
// that gives up after limit_ms adds 1 to timed_out[0] (the cpu gate is one
// group and stores 1; HostGate launches this one as one group too).
extern "C" __global__ void gate(uint32_t* flag, uint32_t* timed_out, uint32_t limit_ms) {
  if (Lane() != 0) return;
  const uint64_t deadline = NowNs() + static_cast<uint64_t>(limit_ms) * 1000000u;
  while (LoadAcquire(flag) == 0) {
    if (NowNs() > deadline) {
      // Checked again, as the SPIR-V gate does: opened at the last moment
      // is not a time-out.
      if (LoadAcquire(flag) == 0) atomicAdd_system(timed_out, 1u);
      return;
    }
    __nanosleep(1000);
  }
}

// delayed_store(uint32* dst, uint32 value, uint32 us): keeps the group busy
// for `us` microseconds of the GPU clock, then stores value.  Work ordered
// after it sees it.
extern "C" __global__ void delayed_store(uint32_t* dst, uint32_t value, uint32_t us) {
  if (Lane() != 0) return;
  const uint64_t end = NowNs() + static_cast<uint64_t>(us) * 1000u;
  while (NowNs() < end) {
  }
  StoreRelease(dst, value);
}

// handshake(uint32* flags, uint32 me, uint32 limit_ms, uint32* seen): sets
// flags[me] = 1, then waits (up to limit_ms) for flags[1 - me]; seen[me] = 1
// when the partner was seen.  Two launches on two streams both see each
// other only if the streams ran at the same time.
extern "C" __global__ void handshake(uint32_t* flags, uint32_t me, uint32_t limit_ms,
                                     uint32_t* seen) {
  if (Lane() != 0) return;
  StoreRelease(&flags[me], 1u);
  const uint64_t deadline = NowNs() + static_cast<uint64_t>(limit_ms) * 1000000u;
  while (LoadAcquire(&flags[1 - me]) == 0) {
    if (NowNs() > deadline) return;
    __nanosleep(100);
  }
  StoreRelease(&seen[me], 1u);
}

// log_stream(uint32* log, uint32 id, uint32 capacity, uint32 spin): log[0]
// counts completions; completion k writes id into log[1 + k].  Busy-loops
// `spin` iterations first so that a launch is not free.
extern "C" __global__ void log_stream(uint32_t* log, uint32_t id, uint32_t capacity,
                                      uint32_t spin) {
  if (Lane() != 0) return;
  volatile uint32_t sink = 0;
  for (uint32_t i = 0; i < spin; ++i) sink = sink + i;
  const uint32_t k = atomicAdd(&log[0], 1u);
  if (k < capacity) log[1 + k] = id;
}
