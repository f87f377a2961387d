#include "runner/probe.hpp"

#include "cts/cts.hpp"

namespace tessera::cts {

nlohmann::json DeviceInfoJson(const DeviceInfo& d) {
  nlohmann::json kinds = nlohmann::json::array();
  for (TsBufferKind k : {TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED})
    if (d.supports(k)) kinds.push_back(BufferKindName(k));
  nlohmann::json collectives = nlohmann::json::array();
  const std::pair<uint32_t, const char*> coll[] = {
      {TS_COLLECTIVE_CAP_ALL_REDUCE, "all_reduce"},
      {TS_COLLECTIVE_CAP_BROADCAST, "broadcast"},
      {TS_COLLECTIVE_CAP_ALL_GATHER, "all_gather"},
      {TS_COLLECTIVE_CAP_REDUCE_SCATTER, "reduce_scatter"},
      {TS_COLLECTIVE_CAP_DETERMINISTIC, "deterministic"}};
  for (const auto& [bit, name] : coll)
    if (d.collectives & bit) collectives.push_back(name);
  nlohmann::json scopes = nlohmann::json::array();
  const std::pair<uint32_t, const char*> sc[] = {
      {TS_ATOMIC_SCOPE_TILE, "tile"},
      {TS_ATOMIC_SCOPE_GROUP, "group"},
      {TS_ATOMIC_SCOPE_DEVICE, "device"},
      {TS_ATOMIC_SCOPE_MESH, "mesh"}};
  for (const auto& [bit, name] : sc)
    if (d.atomic_scopes & bit) scopes.push_back(name);
  return {{"name", d.name},
          {"vendor", d.vendor},
          {"driver_version", d.driver_version},
          {"type", DeviceTypeName(d.type)},
          {"ordinal", d.ordinal},
          {"total_memory", d.total_memory},
          {"buffer_kinds", kinds},
          {"managed_memory", d.managed_memory},
          {"prefetch_hint", HintResultName(d.prefetch_hint)},
          {"advise_hint", HintResultName(d.advise_hint)},
          {"peer_copy", PeerCopyModeName(d.peer_copy)},
          {"graphs", d.graphs},
          {"collectives", collectives},
          {"atomic_scopes", scopes},
          {"subgroup_size", d.subgroup_size},
          {"shared_memory_per_group", d.shared_memory_per_group},
          {"max_group_size", d.max_group_size},
          {"compute_units", d.compute_units},
          {"stream_weights", d.stream_weights},
          {"concurrent_streams", d.concurrent_streams},
          {"executable_formats", d.executable_formats}};
}

nlohmann::json ProbeSharedRuntime() {
  const Config& config = GlobalConfig();
  nlohmann::json plugin = {{"requested_backend", config.backend},
                           {"requested_plugin", config.plugin_file}};
  nlohmann::json devices = nlohmann::json::array();
  const StatusOr<Runtime>& rt = SharedRuntime();
  if (!rt.ok()) {
    plugin["error"] = rt.status().ToString();
    // Name the plugin after the file or backend, for the report's title.
    std::string name = config.backend;
    if (!config.plugin_file.empty()) {
      std::string f = config.plugin_file.substr(config.plugin_file.find_last_of('/') + 1);
      const std::string prefix = "libtessera_plugin_";
      if (f.rfind(prefix, 0) == 0) f = f.substr(prefix.size());
      name = f.substr(0, f.find('.'));
    }
    plugin["name"] = name.empty() ? "unknown" : name;
    plugin["path"] = config.plugin_file;
    return {{"plugin", plugin}, {"devices", devices}};
  }
  plugin["name"] = rt->backend();
  for (const PluginCandidate& c : rt->candidates()) {
    if (c.state != PluginState::kLoaded) continue;
    plugin["path"] = c.path;
    plugin["abi_version"] = c.abi_version;
    plugin["vendor"] = c.vendor;
    plugin["plugin_version"] = c.plugin_version;
  }
  for (const tessera::Device& d : rt->devices()) devices.push_back(DeviceInfoJson(d.info()));
  return {{"plugin", plugin}, {"devices", devices}};
}

}  // namespace tessera::cts
