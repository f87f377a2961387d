// Pure mappings from ABI values onto CUDA's (no driver needed; checked by
// cuda_plugin_test).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace tessera::cuda {

// TsStream_Create_Args.priority ("larger runs first", 0 default) onto the
// context's range [greatest, least] (CUDA: numerically LOWER runs first;
// least is 0, greatest e.g. -5 on Hopper).  0 -> least (CUDA's default);
// p > 0 -> -p, clamped at greatest; p < 0 -> least: CUDA has no priority
// below its default, so negative priorities rank with 0.
inline int cuda_stream_priority(int32_t priority, int least, int greatest) {
  int64_t want = -static_cast<int64_t>(priority);
  int64_t lo = std::min(least, greatest), hi = std::max(least, greatest);
  return static_cast<int>(std::clamp<int64_t>(want, lo, hi));
}

// The compile arch for a device of compute capability major.minor:
// "sm_90a" for 9.0 (Hopper's wgmma/TMA need the arch-specific target),
// else "sm_<major><minor>".
inline std::string cuda_arch_for(int major, int minor) {
  std::string a = "sm_" + std::to_string(major) + std::to_string(minor);
  if (major == 9 && minor == 0) a += "a";
  return a;
}

}  // namespace tessera::cuda
