// Options for plugins: what the environment and RuntimeOptions say, turned
// into the TsNamedValue array Client_Create takes (ABI 1.2).  The core is the
// only reader of environment variables; plugins get options.
//
// Precedence, highest first: RuntimeOptions::plugin_options, then
// TESSERA_<PLUGIN>_<OPTION> (upper case; the option is <option> in lower
// case), then the global variables mapped onto options a plugin declares
// (TESSERA_CACHE_DIR -> cache_dir, TESSERA_VALIDATE -> validation), then
// RuntimeOptions::plugin_option_defaults.
#ifndef TESSERA_CORE_PLUGIN_OPTIONS_HPP_
#define TESSERA_CORE_PLUGIN_OPTIONS_HPP_

#include <string>
#include <vector>

#include "tessera/plugin.h"
#include "tessera/runtime.hpp"

namespace tessera::detail {

struct ResolvedOption {
  OptionValue value;
  std::string origin;  // "RuntimeOptions", "TESSERA_CPU_DEVICES", ...
};

// The options for `candidate` (whose declared options are known once it was
// loaded).  Explicit options for a plugin that takes none (ABI < 1.2) are an
// error; environment variables for it are dropped with a debug message.
// `forward_validate` false: TESSERA_VALIDATE does not become the plugin's
// "validation" option (a client opened only to look at its devices).
StatusOr<std::vector<ResolvedOption>> ResolveClientOptions(const PluginCandidate& candidate,
                                                           bool takes_options,
                                                           const RuntimeOptions& options,
                                                           bool forward_validate = true);

// TsNamedValue views of OptionValues; valid while `values` lives unchanged.
std::vector<TsNamedValue> ToNamedValues(const std::vector<OptionValue>& values);

// "devices=4 (from TESSERA_CPU_DEVICES), threads=2 (from RuntimeOptions)".
std::string DescribeResolved(const std::vector<ResolvedOption>& options);

// Bounded copy of a plugin's TsOptionInfo array (plugins are not trusted:
// counts and strings are capped, NULL names skipped).
std::vector<OptionInfo> CopyOptionInfos(const TsOptionInfo* infos, size_t count);

// A NUL-terminated string from a plugin, at most `max` bytes, or "".
std::string BoundedString(const char* text, size_t max = 4096);

}  // namespace tessera::detail

#endif  // TESSERA_CORE_PLUGIN_OPTIONS_HPP_
