// tessera-info: every candidate plugin (path, ABI version, state and why),
// then every device with its capabilities.  --json prints the same as JSON.
#include <cstdio>
#include <set>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/process_group.hpp"
#include "tessera/runtime.hpp"
#ifdef TESSERA_HAVE_MPI
#include "tessera/mpi.hpp"
#endif

namespace {

using tessera::DeviceInfo;
using tessera::Runtime;

std::string Bits(uint32_t bits, const char* const* names, int count) {
  std::string out;
  for (int i = 0; i < count; ++i)
    if (bits & (1u << i)) out += (out.empty() ? "" : ",") + std::string(names[i]);
  return out.empty() ? "none" : out;
}

const char* const kScopes[] = {"tile", "group", "device", "mesh"};
const char* const kCollectives[] = {"all_reduce", "broadcast", "all_gather",
                                    "reduce_scatter"};

const char* const kShaderTypes[] = {"int8", "int16", "int64", "fp16", "fp64"};
const char* const kSubgroupOps[] = {"basic",   "vote",    "arithmetic",       "ballot",
                                    "shuffle", "shuffle_relative", "clustered", "quad"};
const char* const kFloatAtomics[] = {"add_global", "add_shared", "min_max_global",
                                     "min_max_shared"};

std::vector<std::string> BitNames(uint32_t bits, const char* const* names, int count) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i)
    if (bits & (1u << i)) out.push_back(names[i]);
  return out;
}

const char* const kMemoryFlags[] = {"device-local", "host-visible",
                                    "host-coherent", "host-cached"};
std::string MemoryFlags(uint32_t flags) { return Bits(flags, kMemoryFlags, 4); }

std::string BufferKinds(const DeviceInfo& d) {
  std::string out;
  for (TsBufferKind k : {TS_BUFFER_DEVICE, TS_BUFFER_HOST_PINNED, TS_BUFFER_MANAGED})
    if (d.supports(k)) out += (out.empty() ? "" : ",") + std::string(tessera::BufferKindName(k));
  return out;
}

std::string Collectives(const DeviceInfo& d) {
  std::string out = Bits(d.collectives & 0xF, kCollectives, 4);
  if (d.collectives & TS_COLLECTIVE_CAP_DETERMINISTIC) out += " (deterministic available)";
  if (d.collectives & TS_COLLECTIVE_CAP_MULTI_PROCESS) out += " (across processes)";
  return out;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

nlohmann::json DeviceJson(const DeviceInfo& d) {
  nlohmann::json j;
  j["name"] = d.name;
  j["vendor"] = d.vendor;
  j["driver_version"] = d.driver_version;
  j["type"] = tessera::DeviceTypeName(d.type);
  j["ordinal"] = d.ordinal;
  j["total_memory"] = d.total_memory;
  j["buffer_kinds"] = BufferKinds(d);
  j["managed_memory"] = d.managed_memory;
  j["hints"] = {{"prefetch", tessera::HintResultName(d.prefetch_hint)},
                {"advise", tessera::HintResultName(d.advise_hint)}};
  j["peer_copy"] = tessera::PeerCopyModeName(d.peer_copy);
  j["graphs"] = d.graphs;
  j["collectives"] = Bits(d.collectives & 0xF, kCollectives, 4);
  j["deterministic_collectives"] = (d.collectives & TS_COLLECTIVE_CAP_DETERMINISTIC) != 0;
  j["multi_process_collectives"] = (d.collectives & TS_COLLECTIVE_CAP_MULTI_PROCESS) != 0;
  j["atomic_scopes"] = Bits(d.atomic_scopes, kScopes, 4);
  j["subgroup_size"] = d.subgroup_size;
  j["shared_memory_per_group"] = d.shared_memory_per_group;
  j["max_group_size"] = d.max_group_size;
  j["compute_units"] = d.compute_units;
  j["stream_weights"] = d.stream_weights;
  j["executable_formats"] = d.executable_formats;
  j["api_version"] = d.api_version;
  j["max_scalar_arg_bytes"] = d.max_scalar_arg_bytes;
  j["max_buffer_arg_bytes"] = d.max_buffer_arg_bytes;
  // What kernels may use (plugin ABI 1.1); "known": false from older plugins.
  nlohmann::json k;
  k["known"] = d.kernel_features_known;
  if (d.kernel_features_known) {
    k["shader_types"] = BitNames(d.shader_types, kShaderTypes, 5);
    k["subgroup_ops"] = BitNames(d.subgroup_ops, kSubgroupOps, 8);
    k["float_atomics"] = BitNames(d.float_atomics, kFloatAtomics, 4);
    k["subgroup_size_min"] = d.subgroup_size_min;
    k["subgroup_size_max"] = d.subgroup_size_max;
    k["subgroup_size_control"] = d.subgroup_size_control;
    k["full_subgroups"] = d.full_subgroups;
    k["host_memory_import"] = d.host_memory_import;
  }
  j["concurrent_streams"] = d.concurrent_streams;
  j["compile_arch"] = d.compile_arch;
  j["kernel_features"] = k;
  j["memory_heaps"] = nlohmann::json::array();
  for (const TsMemoryHeap& h : d.memory_heaps)
    j["memory_heaps"].push_back({{"size", h.size}, {"flags", MemoryFlags(h.flags)}});
  j["memory_types"] = nlohmann::json::array();
  for (const TsMemoryType& t : d.memory_types)
    j["memory_types"].push_back({{"heap", t.heap_index}, {"flags", MemoryFlags(t.flags)}});
  return j;
}

// Whether every device of the plugin reports collectives of its own across
// processes (ABI 1.4, docs/spmd.md).
bool OwnAcrossProcesses(const std::vector<DeviceInfo>& devices) {
  if (devices.empty()) return false;
  for (const DeviceInfo& d : devices)
    if (!(d.collectives & TS_COLLECTIVE_CAP_MULTI_PROCESS)) return false;
  return true;
}

// Collectives across processes (docs/spmd.md, "Across processes"): the
// provider for the plugin's buffers and whether this build has it, and the
// plugin's own collectives across processes where it has them (what
// TESSERA_PROCESS_COLLECTIVES=auto picks).
std::string ProcessCollectivesText(const std::string& plugin, const std::vector<DeviceInfo>& devices) {
  tessera::ProcessCollectives pc = tessera::ProcessCollectivesFor(plugin);
  std::string own;
  if (OwnAcrossProcesses(devices))
    own = pc.data_path == "host memory in place"
              ? "; the plugin's own too (TESSERA_PROCESS_COLLECTIVES=plugin)"
              : "; the plugin's own are used (TESSERA_PROCESS_COLLECTIVES=provider: MPI)";
#ifdef TESSERA_HAVE_MPI
  return "collectives over " + pc.provider + " (" + tessera::mpi::LibraryVersion() + "), " + pc.data_path + own;
#else
  return "collectives over " + pc.provider + ", " + pc.data_path +
         ": not built (no MPI found; install libopenmpi-dev and configure with -DTESSERA_WITH_MPI=ON)" + own;
#endif
}
nlohmann::json ProcessCollectivesJson(const std::string& plugin, const std::vector<DeviceInfo>& devices) {
  tessera::ProcessCollectives pc = tessera::ProcessCollectivesFor(plugin);
  const bool own = OwnAcrossProcesses(devices);
  nlohmann::json j = {{"provider", pc.provider},
                      {"data_path", pc.data_path},
                      {"plugin_own", own},
                      {"default", own && pc.data_path != "host memory in place" ? "plugin" : "provider"}};
#ifdef TESSERA_HAVE_MPI
  j["built"] = true;
  j["library"] = tessera::mpi::LibraryVersion();
#else
  j["built"] = false;
#endif
  return j;
}

void PrintDevice(const DeviceInfo& d) {
  std::printf("    device %u: %s\n", d.ordinal, d.name.c_str());
  std::printf("      vendor            %s (driver %s)\n", d.vendor.c_str(), d.driver_version.c_str());
  std::printf("      type              %s\n", tessera::DeviceTypeName(d.type));
  std::printf("      memory            %s\n", tessera::FormatBytes(d.total_memory).c_str());
  std::printf("      memory kinds      %s\n", BufferKinds(d).c_str());
  std::printf("      managed memory    %s\n", d.managed_memory ? "yes" : "no");
  std::printf("      hints             prefetch: %s, advise: %s\n",
              tessera::HintResultName(d.prefetch_hint), tessera::HintResultName(d.advise_hint));
  std::printf("      peer copies       %s\n", tessera::PeerCopyModeName(d.peer_copy));
  std::printf("      graphs            %s\n", d.graphs ? "yes" : "no");
  std::printf("      collectives       %s\n", Collectives(d).c_str());
  std::printf("      atomic scopes     %s\n", Bits(d.atomic_scopes, kScopes, 4).c_str());
  if (d.kernel_features_known)
    std::printf("      subgroup size     %u (%u..%u; size control %s, full subgroups %s)\n",
                d.subgroup_size, d.subgroup_size_min, d.subgroup_size_max,
                d.subgroup_size_control ? "yes" : "no", d.full_subgroups ? "yes" : "no");
  else
    std::printf("      subgroup size     %u\n", d.subgroup_size);
  if (d.kernel_features_known) {
    std::printf("      kernel types      32-bit, %s\n", Bits(d.shader_types, kShaderTypes, 5).c_str());
    std::printf("      subgroup ops      %s\n", Bits(d.subgroup_ops, kSubgroupOps, 8).c_str());
    std::printf("      float atomics     %s native (f32; others: compare-exchange loops)\n",
                Bits(d.float_atomics, kFloatAtomics, 4).c_str());
    std::printf("      pinned memory     %s\n",
                d.host_memory_import
                    ? "used in place by the device (async copies are asynchronous)"
                    : "not reachable: async copies of it are staged and block");
  } else {
    std::printf("      kernel features   not reported (plugin ABI 1.0)\n");
  }
  std::printf("      shared memory     %s per group\n", tessera::FormatBytes(d.shared_memory_per_group).c_str());
  std::printf("      max group size    %u lanes\n", d.max_group_size);
  std::printf("      compute units     %u\n", d.compute_units);
  std::printf("      stream weights    %s\n", d.stream_weights ? "honoured" : "ignored");
  std::printf("      concurrent streams %s\n",
              d.concurrent_streams ? "yes" : "no (one kernel at a time)");
  std::printf("      executables       %s\n", Join(d.executable_formats).c_str());
  if (!d.compile_arch.empty())
    std::printf("      compiles for      %s (schedules for it)\n", d.compile_arch.c_str());
  if (!d.api_version.empty())
    std::printf("      api               %s\n", d.api_version.c_str());
  if (d.max_scalar_arg_bytes)
    std::printf("      scalar args       %u bytes at most\n", d.max_scalar_arg_bytes);
  if (d.max_buffer_arg_bytes)
    std::printf("      buffer args       %s at most each (buffer size - offset)\n",
                tessera::FormatBytes(d.max_buffer_arg_bytes).c_str());
  for (size_t i = 0; i < d.memory_heaps.size(); ++i)
    std::printf("      memory heap %zu     %s (%s)\n", i,
                tessera::FormatBytes(d.memory_heaps[i].size).c_str(),
                MemoryFlags(d.memory_heaps[i].flags).c_str());
  for (size_t i = 0; i < d.memory_types.size(); ++i)
    std::printf("      memory type %zu     heap %u (%s)\n", i, d.memory_types[i].heap_index,
                MemoryFlags(d.memory_types[i].flags).c_str());
}

nlohmann::json OptionsJson(const std::vector<tessera::OptionInfo>& options) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& o : options)
    j.push_back({{"name", o.name},
                 {"type", tessera::ValueTypeName(o.type)},
                 {"default", o.default_value},
                 {"description", o.description}});
  return j;
}

nlohmann::json TargetsJson(const std::vector<tessera::CompileTargetInfo>& targets) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& t : targets) {
    nlohmann::json levels = nlohmann::json::array();
    if (t.input_levels & TS_IR_LEVEL_TILE) levels.push_back("tile");
    if (t.input_levels & TS_IR_LEVEL_SCHEDULE) levels.push_back("schedule");
    j.push_back({{"name", t.name},
                 {"archs", t.archs},
                 {"default_arch", t.default_arch},
                 {"executable_format", t.executable_format},
                 {"emit", t.emit_kinds},
                 {"input_levels", levels},
                 {"schedule", t.schedule},
                 {"build_id", t.build_id},
                 {"options", OptionsJson(t.options)}});
  }
  return j;
}

void PrintOptionsAndTargets(const tessera::PluginCandidate& c) {
  for (const auto& o : c.options)
    std::printf("              option %s (%s%s%s): %s\n", o.name.c_str(), tessera::ValueTypeName(o.type),
                o.default_value.empty() ? "" : ", default ", o.default_value.c_str(),
                o.description.c_str());
  for (const auto& t : c.compile_targets) {
    std::string archs = Join(t.archs);
    std::printf("              compiles for %s%s%s -> %s (emit: %s)\n", t.name.c_str(),
                archs.empty() ? "" : ":", archs == "*" ? "<any cpu LLVM knows>" : archs.c_str(),
                t.executable_format.c_str(), Join(t.emit_kinds).c_str());
  }
}

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--json] [--plugin-path DIR_OR_FILE]...\n"
               "Lists every candidate Tessera plugin and the devices of each.\n"
               "Environment: TESSERA_PLUGIN_PATH, TESSERA_BACKEND (which one "
               "is selected), TESSERA_VISIBLE_DEVICES (which devices programs "
               "see: every device is listed, the others marked hidden), "
               "TESSERA_<PLUGIN>_<OPTION> (plugin options), TESSERA_LOG=debug, "
               "TESSERA_PLUGIN_ISOLATION=off (load plugin files without probing them "
               "in a child process first), TESSERA_PLUGIN_PROBE_TIMEOUT (seconds).\n"
               "Exit status: 0 when a backend can be selected, 1 when none can.\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  tessera::RuntimeOptions options;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json")) {
      json = true;
    } else if (!std::strcmp(argv[i], "--plugin-path") && i + 1 < argc) {
      options.plugin_path.push_back(argv[++i]);
    } else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      Usage(argv[0]);
      return 0;
    } else {
      std::fprintf(stderr, "tessera-info: unknown argument '%s'\n", argv[i]);
      return Usage(argv[0]);
    }
  }

  auto probes = Runtime::ProbeAll(options);
  // Which backend would a program get?  Same rules as Runtime::Create.
  auto runtime = Runtime::Create(options);
  std::string selected = runtime.ok() ? runtime->backend() : "";
  std::string selection_error = runtime.ok() ? "" : runtime.status().ToString();
  // Devices a program sees (TESSERA_VISIBLE_DEVICES); every device is listed.
  std::set<uint32_t> visible;
  if (runtime.ok())
    for (const auto& d : runtime->devices()) visible.insert(d.info().ordinal);
  // ProbeAll opens each plugin on its own; the one Runtime::Create loaded is
  // shown as loaded.
  std::string selected_path;
  if (runtime.ok())
    for (const auto& c : runtime->candidates())
      if (c.state == tessera::PluginState::kLoaded) selected_path = c.path;
  auto state_of = [&](const tessera::PluginCandidate& c) {
    return c.name == selected && c.path == selected_path ? "loaded" : tessera::PluginStateName(c.state);
  };

  if (json) {
    nlohmann::json out;
    out["abi_version"] = std::to_string(TESSERA_ABI_VERSION_MAJOR) + "." +
                         std::to_string(TESSERA_ABI_VERSION_MINOR);
    out["selected_backend"] = selected;
    if (!selection_error.empty()) out["selection_error"] = selection_error;
    out["search_path"] = Runtime::DefaultPluginDirectories();
    out["plugins"] = nlohmann::json::array();
    for (const auto& p : probes) {
      nlohmann::json j;
      j["name"] = p.candidate.name;
      j["path"] = p.candidate.path;
      j["abi_version"] = p.candidate.abi_version;
      j["vendor"] = p.candidate.vendor;
      j["plugin_version"] = p.candidate.plugin_version;
      j["state"] = state_of(p.candidate);
      j["reason"] = p.candidate.reason;
      j["options"] = OptionsJson(p.candidate.options);
      j["compile_targets"] = TargetsJson(p.candidate.compile_targets);
      j["process_collectives"] = ProcessCollectivesJson(p.candidate.name, p.devices);
      j["devices"] = nlohmann::json::array();
      for (const auto& d : p.devices) {
        nlohmann::json dj = DeviceJson(d);
        if (p.candidate.name == selected) dj["visible"] = visible.count(d.ordinal) != 0;
        j["devices"].push_back(dj);
      }
      out["plugins"].push_back(j);
    }
    std::printf("%s\n", out.dump(2).c_str());
    return runtime.ok() ? 0 : 1;
  }

  std::printf("Tessera plugin ABI %d.%d\n", TESSERA_ABI_VERSION_MAJOR,
              TESSERA_ABI_VERSION_MINOR);
  if (runtime.ok())
    std::printf("Selected backend: %s\n", selected.c_str());
  else
    std::printf("Selected backend: none: %s\n", selection_error.c_str());
  std::printf("\nPlugins (in search order):\n");
  for (const auto& p : probes) {
    const auto& c = p.candidate;
    std::printf("  %-11s %-11s ABI %-5s %s\n", c.name.c_str(),
                state_of(c),
                c.abi_version.empty() ? "?" : c.abi_version.c_str(),
                c.path.c_str());
    if (!c.reason.empty()) std::printf("              %s\n", c.reason.c_str());
    PrintOptionsAndTargets(c);
    if (!p.devices.empty()) std::printf("              across processes: %s\n", ProcessCollectivesText(c.name, p.devices).c_str());
    for (const auto& d : p.devices) {
      PrintDevice(d);
      if (c.name == selected && !visible.count(d.ordinal))
        std::printf("      (hidden from programs by TESSERA_VISIBLE_DEVICES)\n");
    }
  }
  return runtime.ok() ? 0 : 1;
}
