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
// at `ticks_per_second`: the difference modulo the timer's width read as a
// signed value, so a wrap between the stamps is a short positive time and
// an `end` stamped before `start` is negative (the ABI's answer for events
// passed in the other order, as cuEventElapsedTime), not a wrap.
inline double elapsed_ms(uint64_t start, uint64_t end, uint32_t valid_bits,
                         double ticks_per_second) {
  const uint64_t mask = valid_bits == 0 || valid_bits >= 64 ? ~uint64_t{0}
                                                            : (uint64_t{1} << valid_bits) - 1;
  const uint64_t diff = (end - start) & mask;
  const uint64_t half = mask / 2 + 1;
  const double ticks = diff >= half ? -static_cast<double>(mask - diff) - 1.0 : static_cast<double>(diff);
  return ticks_per_second > 0 ? ticks * 1000.0 / ticks_per_second : 0.0;
}

// The host time of the device's global timer value `ticks`
// (zeCommandListAppendWriteGlobalTimestamp), from a calibration: the timer
// read `base_ticks` at host time `base_host_ns`.  The difference is taken
// modulo the timer's `valid_bits` as a signed value (a point may precede
// the calibration it is converted with, and the timer may have wrapped).
// Never 0 (the ABI's "not yet").
inline uint64_t global_ticks_to_host_ns(uint64_t ticks, uint64_t base_ticks, uint64_t base_host_ns,
                                        uint32_t valid_bits, double ticks_per_second) {
  const uint64_t mask = valid_bits == 0 || valid_bits >= 64 ? ~uint64_t{0}
                                                            : (uint64_t{1} << valid_bits) - 1;
  const uint64_t diff = (ticks - base_ticks) & mask;
  const uint64_t half = mask / 2 + 1;
  const double d = diff >= half ? -static_cast<double>(mask - diff) - 1.0 : static_cast<double>(diff);
  const double t = static_cast<double>(base_host_ns) +
                   (ticks_per_second > 0 ? d * 1e9 / ticks_per_second : 0.0);
  if (!(t >= 1.0)) return 1;
  if (t >= 18446744073709549568.0) return ~uint64_t{0};
  return static_cast<uint64_t>(t + 0.5);
}

}  // namespace tessera::level_zero
