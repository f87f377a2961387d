// Error objects and the hipError_t -> TsErrorCode / message mapping.  The
// mapping and the message format are pure functions (no runtime needed), so
// hip_plugin_test checks them on machines without an AMD GPU.
#pragma once

#include <cstdint>
#include <string>

#include "hip_symbols.hpp"
#include "plugin_support.hpp"
#include "tessera/plugin.h"

namespace tessera::hip {

using plugin_support::errorf;
using plugin_support::human_size;
using plugin_support::make_error;
using plugin_support::strprintf;

// "hipErrorOutOfMemory" from the plugin's own table; "hipError_<n>" when
// the value is not a hipError_t of ROCm 5.2.
std::string hip_error_builtin_name(hipError_t r);
// A short description ("out of memory") for the common results, "" for the
// others.  ROCm 5.x's hipGetErrorString returns the name again, so the
// message takes its description from here when the runtime has none.
std::string hip_error_builtin_description(hipError_t r);
// hipError_t -> the closest TsErrorCode.
TsErrorCode hip_error_code(hipError_t r);
// What to do about `r` where the name alone does not say: a code object
// for another GPU (naming the device's gcnArchName, e.g.
// "gfx90a:sramecc+:xnack-", and the code object's target when known),
// sticky kernel faults, unjoined captures.  "" for the others.
std::string hip_error_hint(hipError_t r, const std::string& device_arch,
                           const std::string& image_target);
// "hip: <call> failed: <name>[: <description>][ (<hint>)]".
std::string format_hip_error(const std::string& call, const std::string& name,
                             const std::string& description, const std::string& hint);
// "5.2.21153" from hipRuntimeGetVersion's 50221153
// (major * 10000000 + minor * 100000 + patch); "unknown" for <= 0.
std::string hip_version_text(int version);

// The error for a failed runtime call.  `fn` may be NULL: names and
// descriptions then come from the builtin tables.  A name the runtime does
// not know (ROCm 5.x answers "hipErrorUnknown" for any unknown value) is
// replaced by the builtin one, which carries the number.
TsError* hip_error(const HipFns* fn, hipError_t r, const std::string& call,
                   const std::string& device_arch = "",
                   const std::string& image_target = "") noexcept;

}  // namespace tessera::hip

#define TS_HIP_ENTRY(Name, SIZE) TS_PLUGIN_ENTRY("hip", Name, SIZE)
