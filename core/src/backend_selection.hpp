// Chooses the backend: TESSERA_BACKEND (an ordered list of plugin names), or
// the automatic rule of docs/runtime.md when it is unset.
#ifndef TESSERA_CORE_BACKEND_SELECTION_HPP_
#define TESSERA_CORE_BACKEND_SELECTION_HPP_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugin_library.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

struct OpenedBackend {
  std::shared_ptr<PluginLibrary> plugin;
  TsClient* client = nullptr;
  std::vector<std::pair<TsDevice*, DeviceInfo>> devices;
};

// Loads the candidate's plugin, creates a client, lists its devices.  On
// failure the candidate's state and reason say why (and nothing leaks).
// `inspecting`: the client is opened only to look at its devices (automatic
// selection), so no validation, neither the core's layer nor the plugin's.
StatusOr<OpenedBackend> OpenBackend(PluginCandidate* candidate,
                                    const RuntimeOptions& options,
                                    bool inspecting = false);
void CloseBackend(OpenedBackend* backend);

// Reads the properties of every device of `client`.
StatusOr<std::vector<std::pair<TsDevice*, DeviceInfo>>> ListDevices(
    const PluginLibrary& lib, TsClient* client);

// Edit distance with adjacent swaps (OSA), for "did you mean" suggestions.
size_t EditDistance(const std::string& a, const std::string& b);

struct Selection {
  OpenedBackend backend;
  std::vector<PluginCandidate> candidates;
};
StatusOr<Selection> SelectBackend(const RuntimeOptions& options);

}  // namespace tessera::detail

#endif  // TESSERA_CORE_BACKEND_SELECTION_HPP_
