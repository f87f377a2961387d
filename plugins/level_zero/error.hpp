// Error objects and the ze_result_t -> TsErrorCode / message mapping.  The
// mapping and the message format are pure functions (no driver needed), so
// level_zero_plugin_test checks them on machines without a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "plugin_support.hpp"
#include "tessera/plugin.h"
#include "ze_symbols.hpp"

namespace tessera::level_zero {

using plugin_support::errorf;
using plugin_support::human_size;
using plugin_support::make_error;
using plugin_support::strprintf;

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY" from the plugin's own table (the
// loader has no name function); "ZE_RESULT_0x<hex>" when unknown.
std::string ze_result_name(ze_result_t r);
// ze_result_t -> the closest TsErrorCode.
TsErrorCode ze_result_code(ze_result_t r);
// What to do about `r` when the name alone does not say (no driver, a lost
// device, a module that did not build); "" for the others.
std::string ze_result_hint(ze_result_t r);
// "level_zero: <call> failed: <name>[: <description>][ (<hint>)]".
std::string format_ze_error(const std::string& call, const std::string& name,
                            const std::string& description, const std::string& hint);
// "1.3" from a ze_api_version_t.
std::string api_version_text(uint32_t version);
// Intel's driverVersion packs major.minor.build as 8.8.16 bits: "1.3.26241".
std::string driver_version_text(uint32_t version);

// The error for a failed driver call.  `fn` and `driver` may be NULL; with
// both, the driver's own description (zeDriverGetLastErrorDescription, API
// 1.6+) is added when it has one.
TsError* ze_error(const ZeFns* fn, ze_driver_handle_t driver, ze_result_t r,
                  const std::string& call) noexcept;

}  // namespace tessera::level_zero

#define TS_ZE_ENTRY(Name, SIZE) TS_PLUGIN_ENTRY("level_zero", Name, SIZE)
