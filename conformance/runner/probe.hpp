// What the report says about the plugin under test: its identity and every
// device's capabilities, as JSON.  Runs in a child process (--cts-probe) so
// a plugin that crashes while starting cannot take the runner down.
#ifndef TESSERA_CONFORMANCE_RUNNER_PROBE_HPP_
#define TESSERA_CONFORMANCE_RUNNER_PROBE_HPP_

#include <nlohmann/json.hpp>

#include "tessera/runtime.hpp"

namespace tessera::cts {

nlohmann::json DeviceInfoJson(const DeviceInfo& info);
// {"plugin": {...}, "devices": [...]}; plugin.error when no Runtime.
nlohmann::json ProbeSharedRuntime();

}  // namespace tessera::cts

#endif  // TESSERA_CONFORMANCE_RUNNER_PROBE_HPP_
