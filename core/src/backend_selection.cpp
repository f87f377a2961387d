#include "backend_selection.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <set>

#include "log.hpp"
#include "plugin_discovery.hpp"
#include "plugin_options.hpp"
#include "plugin_probe.hpp"

namespace tessera::detail {

namespace {

DeviceInfo ToDeviceInfo(const TsDeviceProperties& p) {
  DeviceInfo info;
  info.name = p.name;
  info.vendor = p.vendor;
  info.driver_version = p.driver_version;
  info.type = p.type;
  info.ordinal = p.ordinal;
  info.total_memory = p.total_memory;
  info.buffer_kinds = p.buffer_kinds;
  info.managed_memory = p.managed_memory != 0;
  info.prefetch_hint = p.prefetch_hint;
  info.advise_hint = p.advise_hint;
  info.peer_copy = p.peer_copy;
  info.graphs = p.graphs != 0;
  info.collectives = p.collectives;
  info.atomic_scopes = p.atomic_scopes;
  info.subgroup_size = p.subgroup_size;
  info.shared_memory_per_group = p.shared_memory_per_group;
  info.max_group_size = p.max_group_size;
  info.compute_units = p.compute_units;
  info.stream_weights = p.stream_weights != 0;
  info.api_version = p.api_version;
  info.max_scalar_arg_bytes = p.max_scalar_arg_bytes;
  if (TS_FIELD_PRESENT(&p, TsDeviceProperties, max_buffer_arg_bytes))
    info.max_buffer_arg_bytes = p.max_buffer_arg_bytes;
  if (TS_FIELD_PRESENT(&p, TsDeviceProperties, host_memory_import) &&
      p.kernel_features_known) {
    info.kernel_features_known = true;
    info.shader_types = p.shader_types;
    info.subgroup_ops = p.subgroup_ops;
    info.float_atomics = p.float_atomics;
    info.subgroup_size_min = p.subgroup_size_min;
    info.subgroup_size_max = p.subgroup_size_max;
    info.subgroup_size_control = p.subgroup_size_control != 0;
    info.full_subgroups = p.full_subgroups != 0;
    info.host_memory_import = p.host_memory_import != 0;
  }
  if (TS_FIELD_PRESENT(&p, TsDeviceProperties, concurrent_streams) && p.kernel_features_known)
    info.concurrent_streams = p.concurrent_streams != 0;
  else
    info.concurrent_streams = p.compute_units >= 2;  // a MINOR-0 plugin: a guess
  if (TS_FIELD_PRESENT(&p, TsDeviceProperties, compile_arch)) info.compile_arch = p.compile_arch;
  for (uint32_t i = 0; i < p.num_memory_heaps && i < TS_MAX_MEMORY_HEAPS; ++i)
    info.memory_heaps.push_back(p.memory_heaps[i]);
  for (uint32_t i = 0; i < p.num_memory_types && i < TS_MAX_MEMORY_TYPES; ++i)
    info.memory_types.push_back(p.memory_types[i]);
  std::string formats = p.executable_formats;
  size_t start = 0;
  while (start < formats.size()) {
    size_t end = formats.find(',', start);
    if (end == std::string::npos) end = formats.size();
    if (end > start) info.executable_formats.push_back(formats.substr(start, end - start));
    start = end + 1;
  }
  return info;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

std::string JoinNames(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool IsHardwareAccelerator(TsDeviceType type) {
  return type == TS_DEVICE_TYPE_DISCRETE_GPU ||
         type == TS_DEVICE_TYPE_INTEGRATED_GPU;
}

}  // namespace

size_t EditDistance(const std::string& a, const std::string& b) {
  // Optimal string alignment: insertions, deletions, substitutions and
  // swaps of two adjacent letters each cost 1, so "cdua" is one edit from
  // "cuda" (the typo people make) and two from "cpu".
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

// More than any machine has; a bound on what Client_GetDevices may claim.
constexpr size_t kMaxDevices = 4096;

StatusOr<std::vector<std::pair<TsDevice*, DeviceInfo>>> ListDevices(
    const PluginLibrary& lib, TsClient* client) {
  auto args = MakeArgs<TsClient_GetDevices_Args>();
  args.client = client;
  TESSERA_RETURN_IF_ERROR(TESSERA_PLUGIN_CALL(lib, Client_GetDevices, args));
  // The answer is checked before it is read: a count past any real machine
  // (the array would be read past its end), or a count without an array.
  if (args.num_devices > kMaxDevices)
    return lib.BadAnswer("Client_GetDevices", std::to_string(args.num_devices) +
                                                  " devices, more than the " +
                                                  std::to_string(kMaxDevices) + " a client may have");
  if (args.num_devices > 0 && args.devices == nullptr)
    return lib.BadAnswer("Client_GetDevices",
                         std::to_string(args.num_devices) + " devices without a device array");
  std::vector<std::pair<TsDevice*, DeviceInfo>> out;
  for (size_t i = 0; i < args.num_devices; ++i) {
    if (args.devices[i] == nullptr)
      return lib.BadAnswer("Client_GetDevices", "a null device at index " + std::to_string(i));
    TsDeviceProperties props{};
    props.struct_size = sizeof(props);
    auto pargs = MakeArgs<TsDevice_GetProperties_Args>();
    pargs.device = args.devices[i];
    pargs.properties = &props;
    TESSERA_RETURN_IF_ERROR(
        TESSERA_PLUGIN_CALL(lib, Device_GetProperties, pargs));
    props.name[TS_NAME_MAX - 1] = props.vendor[TS_NAME_MAX - 1] = 0;
    props.driver_version[TS_NAME_MAX - 1] = 0;
    props.executable_formats[TS_NAME_MAX - 1] = 0;
    props.api_version[TS_NAME_MAX - 1] = 0;
    props.compile_arch[TS_NAME_MAX - 1] = 0;
    // Enum fields are read as their bytes and checked before ToDeviceInfo
    // loads them: a value outside an enum, loaded as the enum type, is
    // undefined behaviour (UBSan, fuzz/plugin_fuzzer.cpp).
    struct EnumField {
      const char* what;
      const void* field;
      uint32_t max;
    };
    static_assert(sizeof(props.type) == 4 && sizeof(props.prefetch_hint) == 4 &&
                  sizeof(props.advise_hint) == 4 && sizeof(props.peer_copy) == 4);
    const EnumField enums[] = {{"the device type", &props.type, TS_DEVICE_TYPE_SOFTWARE},
                               {"the prefetch hint", &props.prefetch_hint, TS_HINT_APPLIED},
                               {"the advise hint", &props.advise_hint, TS_HINT_APPLIED},
                               {"the peer copy mode", &props.peer_copy, TS_PEER_COPY_DIRECT}};
    for (const EnumField& e : enums) {
      uint32_t raw;
      std::memcpy(&raw, e.field, sizeof raw);
      if (raw > e.max)
        return lib.BadAnswer("Device_GetProperties", std::string(e.what) + " " + std::to_string(raw) +
                                                         " (device " + std::to_string(i) + ")");
    }
    out.emplace_back(args.devices[i], ToDeviceInfo(props));
  }
  return out;
}

static StatusOr<bool> ValidationWanted(const RuntimeOptions& options) {
  if (options.validate >= 0) return options.validate != 0;
  if (!options.read_environment) return false;
  const char* value = std::getenv("TESSERA_VALIDATE");
  if (value == nullptr || *value == 0) return false;
  std::string v = value;
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  return Status(StatusCode::kInvalidArgument,
                std::string("TESSERA_VALIDATE=") + value +
                    ": not a switch; set 1 to turn the validation layer on, 0 (or unset it) "
                    "for off");
}

StatusOr<OpenedBackend> OpenBackend(PluginCandidate* candidate,
                                    const RuntimeOptions& options,
                                    bool inspecting) {
  OpenedBackend backend;
  auto lib = PluginLibrary::Load(candidate, options);
  if (!lib.ok()) return lib.status();
  backend.plugin = *lib;
  if (candidate->path != kEmbeddedPath) {
    // Its probe already tried to open it and failed cleanly: the same answer,
    // without initialising a driver here for a client that cannot be used.
    ProbeVerdict verdict = ProbePluginFile(*candidate, options);
    if (verdict.survived && verdict.open_failed) {
      candidate->state = verdict.open_state;
      candidate->reason = verdict.open_reason;
      return Status(verdict.open_code, verdict.open_message);
    }
  }
  auto resolved =
      ResolveClientOptions(*candidate, backend.plugin->takes_options(), options, !inspecting);
  if (!resolved.ok()) {
    candidate->state = PluginState::kUnavailable;
    candidate->reason = "not available: " + resolved.status().message();
    return resolved.status();
  }
  std::vector<OptionValue> values;
  for (const ResolvedOption& r : *resolved) values.push_back(r.value);
  std::vector<TsNamedValue> named = ToNamedValues(values);
  if (!resolved->empty())
    TESSERA_LOG(kDebug, "plugin " + candidate->name + " options: " + DescribeResolved(*resolved));
  TESSERA_ASSIGN_OR_RETURN(bool validate, ValidationWanted(options));
  if (validate && !inspecting) {
    Status stacked = backend.plugin->StackValidation(options.validation_callback);
    if (!stacked.ok()) TESSERA_LOG(kWarning, "TESSERA_VALIDATE: " + stacked.message());
  }
  auto create = MakeArgs<TsClient_Create_Args>();
  if (backend.plugin->takes_options()) {
    create.options = named.empty() ? nullptr : named.data();
    create.num_options = named.size();
  } else {
    // An older plugin checks struct_size against its own, smaller, struct.
    create.struct_size = TS_CLIENT_CREATE_ARGS_MIN_STRUCT_SIZE;
  }
  NoteProbeStep(ProbeStep::kClientCreate);
  Status st = TESSERA_PLUGIN_CALL_OUT(*backend.plugin, Client_Create, create, client);
  if (!st.ok() && st.code() == StatusCode::kInvalidArgument && !resolved->empty())
    st.Annotate("with " + DescribeResolved(*resolved));
  if (!st.ok()) {
    candidate->state = PluginState::kUnavailable;
    candidate->reason = st.message().rfind("not available", 0) == 0
                            ? st.message()
                            : "not available: " + st.message();
    return st.Annotate("backend '" + candidate->name + "' is not available");
  }
  backend.client = create.client;
  NoteProbeStep(ProbeStep::kDevices);
  auto devices = ListDevices(*backend.plugin, backend.client);
  if (!devices.ok()) {
    candidate->state = PluginState::kUnavailable;
    candidate->reason = "not available: " + devices.status().message();
    Status failure = devices.status();
    CloseBackend(&backend);
    return failure.Annotate("backend '" + candidate->name + "'");
  }
  backend.devices = std::move(*devices);
  if (backend.devices.empty()) {
    candidate->state = PluginState::kUnavailable;
    candidate->reason = "not available: the plugin loaded but found no device";
    CloseBackend(&backend);
    return Status(StatusCode::kUnavailable,
                  "backend '" + candidate->name + "' has no device");
  }
  candidate->state = PluginState::kAvailable;
  return backend;
}

void CloseBackend(OpenedBackend* backend) {
  if (backend->client && backend->plugin) {
    NoteProbeStep(ProbeStep::kClientDestroy);
    auto args = MakeArgs<TsClient_Destroy_Args>();
    args.client = backend->client;
    Status st = TESSERA_PLUGIN_CALL(*backend->plugin, Client_Destroy, args);
    if (!st.ok()) TESSERA_LOG(kWarning, "Client_Destroy failed: " + st.message());
  }
  backend->client = nullptr;
  backend->devices.clear();
  backend->plugin.reset();
}

StatusOr<Selection> SelectBackend(const RuntimeOptions& options) {
  // A misspelt TESSERA_VALIDATE is the user's error, not any plugin's.
  if (auto validate = ValidationWanted(options); !validate.ok()) return validate.status();
  Selection selection;
  selection.candidates = DiscoverPlugins(options);
  auto& candidates = selection.candidates;

  std::string requested_text = options.backend;
  std::string source = "RuntimeOptions::backend";
  if (requested_text.empty() && options.read_environment) {
    if (const char* env = std::getenv("TESSERA_BACKEND")) {
      requested_text = env;
      source = "TESSERA_BACKEND";
    }
  }
  std::vector<std::string> requested = SplitList(requested_text);

  auto find = [&](const std::string& name) -> PluginCandidate* {
    for (PluginCandidate& c : candidates)
      if (c.name == name && c.state != PluginState::kShadowed) return &c;
    return nullptr;
  };
  StatusCode open_failure = StatusCode::kOk;  // the code of try_open's last failure
  auto try_open = [&](PluginCandidate* c, std::string* why, bool inspecting = false) -> bool {
    auto opened = OpenBackend(c, options, inspecting);
    if (!opened.ok()) {
      open_failure = opened.status().code();
      *why = c->name + ": " + c->reason;
      TESSERA_LOG(kDebug, "backend " + c->name + " (" + c->path +
                              ") skipped: " + c->reason);
      return false;
    }
    selection.backend = std::move(*opened);
    c->state = PluginState::kLoaded;
    return true;
  };

  // --plugin PATH: exactly that plugin.
  if (!options.plugin_file.empty()) {
    if (candidates.empty())
      return Status(StatusCode::kNotFound,
                    "plugin file " + options.plugin_file + " does not exist");
    std::string why;
    // The plugin's own code: UNAVAILABLE only when it says so (no driver,
    // no device); a file that does not load, an ABI mismatch or a refused
    // option is not "unavailable" (tessera-conformance
    // --unavailable-exit-code turns only UNAVAILABLE into a skip).
    if (!try_open(&candidates.front(), &why))
      return Status(open_failure == StatusCode::kOk ? StatusCode::kInternal : open_failure,
                    "plugin " + options.plugin_file + " cannot be used: " +
                        candidates.front().reason);
    return selection;
  }

  if (requested.empty()) {
    // Automatic: the first vendor plugin with a hardware accelerator, else
    // the CPU plugin.  Software devices (lavapipe) are used only when named.
    // Their probes run at once; each is then opened in turn.
    std::vector<const PluginCandidate*> vendors;
    for (const char* name : {"cuda", "hip", "level_zero", "vulkan"}) vendors.push_back(find(name));
    ProbePluginFiles(vendors, options);
    for (const char* name : {"cuda", "hip", "level_zero", "vulkan"}) {
      PluginCandidate* c = find(name);
      if (!c) {
        TESSERA_LOG(kDebug, std::string("automatic selection: no ") + name +
                                " plugin found");
        continue;
      }
      std::string why;
      // Validating, look at the devices without it (a vendor's validation
      // layer would announce itself for a plugin that is not chosen), then
      // reopen the one chosen with it.
      bool validating = *ValidationWanted(options);
      if (!try_open(c, &why, /*inspecting=*/validating)) continue;
      bool hardware = std::any_of(
          selection.backend.devices.begin(), selection.backend.devices.end(),
          [](const auto& d) { return IsHardwareAccelerator(d.second.type); });
      if (hardware) {
        TESSERA_LOG(kDebug, std::string("automatic selection: ") + name +
                                " has a hardware accelerator");
        if (validating) {
          CloseBackend(&selection.backend);
          if (!try_open(c, &why)) continue;
        }
        return selection;
      }
      TESSERA_LOG(kDebug, std::string("automatic selection: ") + name +
                              " has only software devices; name it in "
                              "TESSERA_BACKEND to use them");
      c->state = PluginState::kAvailable;
      c->reason = "only software devices (used only when named)";
      CloseBackend(&selection.backend);
    }
    requested = {"cpu"};
    requested_text = "cpu";
    source = "";  // automatic selection: no variable to name
  }
  // "TESSERA_BACKEND=x", or automatic selection's fallback.
  auto where = [&] {
    return source.empty() ? std::string("automatic selection's fallback (TESSERA_BACKEND unset): cpu")
                          : source + "=" + requested_text;
  };

  // Every name must be one we know: a typo is an error, not a fall-through.
  std::set<std::string> known(WellKnownBackendNames().begin(),
                              WellKnownBackendNames().end());
  for (const PluginCandidate& c : candidates) known.insert(c.name);
  for (const std::string& name : requested) {
    if (known.count(name)) continue;
    std::string best;
    size_t best_distance = SIZE_MAX;
    for (const std::string& k : known) {
      size_t d = EditDistance(name, k);
      if (d < best_distance) best_distance = d, best = k;
    }
    std::string message = "unknown backend '" + name + "' in " + where() +
                          "; known backends: " +
                          JoinNames(known);
    if (best_distance <= std::max<size_t>(2, name.size() / 2))
      message += "; did you mean '" + best + "'?";
    return Status(StatusCode::kNotFound, message);
  }

  std::vector<const PluginCandidate*> named;
  for (const std::string& name : requested) named.push_back(find(name));
  ProbePluginFiles(named, options);
  std::vector<std::string> reasons;
  // UNAVAILABLE only when every plugin tried said so (or had no file): a
  // plugin refusing its options, a broken or mismatched plugin keeps its
  // own code (tessera-conformance --unavailable-exit-code, tessera-run's
  // exit 77, read the code).
  StatusCode code = StatusCode::kUnavailable;
  for (const std::string& name : requested) {
    PluginCandidate* c = find(name);
    if (!c) {
      std::string why = name + ": no plugin file libtessera_plugin_" + name +
                        ".so was found in the plugin search path (set "
                        "TESSERA_PLUGIN_PATH to its directory)";
      TESSERA_LOG(kDebug, "backend " + why + "; trying the next name");
      reasons.push_back(why);
      continue;
    }
    std::string why;
    if (try_open(c, &why)) {
      TESSERA_LOG(kDebug, "selected backend " + name + " from " + c->path);
      return selection;
    }
    // Other files of the same name later in the path are never tried: say
    // so when this one is broken (a copy of another ABI first in
    // TESSERA_PLUGIN_PATH hid a working one).
    for (const PluginCandidate& other : candidates)
      if (c->state == PluginState::kRejected && other.name == name && other.state == PluginState::kShadowed)
        why += " (" + other.path + " has the same name but comes later in the search path: not tried)";
    reasons.push_back(why);
    if (code == StatusCode::kUnavailable && open_failure != StatusCode::kOk) code = open_failure;
  }
  std::string message =
      source.empty() ? "automatic selection (TESSERA_BACKEND unset) found no usable backend: "
                     : "no backend of " + where() + " can be used: ";
  for (size_t i = 0; i < reasons.size(); ++i)
    message += (i ? "; " : "") + reasons[i];
  return Status(code, message);
}

}  // namespace tessera::detail
