// Pure mappings from ABI values onto HIP's (no runtime needed; checked by
// hip_plugin_test).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace tessera::hip {

// TsStream_Create_Args.priority ("larger runs first", 0 default) onto the
// range hipDeviceGetStreamPriorityRange reports, [greatest, least] (HIP,
// like CUDA: numerically LOWER runs first).  ROCm reports least 1 (low),
// greatest -1 (high) around its default 0 (normal), so: p > 0 -> -p clamped
// at greatest (high), 0 -> 0 (normal), p < 0 -> -p clamped at least (low).
// A runtime whose least is 0 ranks negative priorities with 0.
inline int hip_stream_priority(int32_t priority, int least, int greatest) {
  int64_t want = -static_cast<int64_t>(priority);
  int64_t lo = std::min(least, greatest), hi = std::max(least, greatest);
  return static_cast<int>(std::clamp<int64_t>(want, lo, hi));
}

// The compile arch of a device: its gcnArchName without the feature
// suffix ("gfx90a:sramecc+:xnack-" -> "gfx90a").
inline std::string hip_arch_for(const std::string& gcn_arch_name) {
  return gcn_arch_name.substr(0, gcn_arch_name.find(':'));
}

}  // namespace tessera::hip
