// Pure mappings from ABI values to Level Zero ones (unit-tested without a
// driver).
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>

namespace tessera::level_zero {

// The ABI's stream priority (larger runs first, 0 default) onto Level
// Zero's three queue priorities: p > 0 is HIGH, p < 0 LOW, 0 NORMAL.
inline ze_command_queue_priority_t ze_queue_priority(int32_t p) {
  if (p > 0) return ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH;
  if (p < 0) return ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW;
  return ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
}

// ZE_COMMAND_QUEUE_FLAG_IN_ORDER (Level Zero API 1.7; the installed header
// is 1.4): commands of an immediate command list run one after the other.
inline constexpr ze_command_queue_flags_t kZeCommandQueueFlagInOrder = ZE_BIT(1);

// Elapsed milliseconds between two device timestamps of `valid_bits` bits
// (wrap-around handled) at `ticks_per_second`.
inline double elapsed_ms(uint64_t start, uint64_t end, uint32_t valid_bits,
                         double ticks_per_second) {
  const uint64_t mask = valid_bits == 0 || valid_bits >= 64 ? ~uint64_t{0}
                                                            : (uint64_t{1} << valid_bits) - 1;
  const uint64_t ticks = (end - start) & mask;
  return ticks_per_second > 0 ? static_cast<double>(ticks) * 1000.0 / ticks_per_second : 0.0;
}

}  // namespace tessera::level_zero
