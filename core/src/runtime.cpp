// Runtime: creation (discovery + selection + device filtering), probing for
// tessera-info, and host memory that is page-locked.
#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

#include "backend_selection.hpp"
#include "log.hpp"
#include "plugin_discovery.hpp"
#include "plugin_probe.hpp"
#include "runtime_impl.hpp"

namespace fs = std::filesystem;

namespace tessera {

namespace detail {

Status InvalidHandle(const char* what, bool null_handle, const std::string& destroyed_at) {
  if (null_handle)
    return Status(StatusCode::kInvalidHandle,
                  std::string("null ") + what +
                      " handle: it was default-constructed or moved from; "
                      "create it through its Device or Runtime");
  return Status(StatusCode::kInvalidHandle,
                std::string(what) +
                    " was destroyed (destroy() was called on it or on a copy "
                    "of its handle" +
                    (destroyed_at.empty() ? std::string() : ": " + destroyed_at) +
                    "); create a new one");
}

RuntimeImpl::~RuntimeImpl() {
  // Every object of the plugin is gone (each held a Device handle, hence this
  // runtime).  The trace (it waits for its pending operations and destroys
  // its events), devices, then the client, then the library: the plugin's
  // code must stay mapped until Client_Destroy has returned.
  trace.reset();
  visible_devices.clear();
  owned_devices.clear();
  // In a child fork()ed after the client was made, the client is the
  // parent's: left alone (the child's copy of its memory goes with it).
  if (client && plugin && !plugin->InForkedChild()) {
    auto args = MakeArgs<TsClient_Destroy_Args>();
    args.client = client;
    Status st = TESSERA_PLUGIN_CALL(*plugin, Client_Destroy, args);
    if (!st.ok())
      TESSERA_LOG(kWarning, "Client_Destroy failed: " + st.ToString());
    client = nullptr;
  }
  plugin.reset();  // unmaps the shared object (unless another runtime uses it)
}

static StatusOr<std::vector<uint32_t>> ParseVisible(const std::string& source,
                                                     const std::string& text,
                                                     size_t count) {
  std::vector<uint32_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    char* tail = nullptr;
    unsigned long value = std::strtoul(item.c_str(), &tail, 10);
    if (*tail != 0 || item[0] == '-')
      return Status(StatusCode::kInvalidArgument,
                    source + "=" + text + ": '" + item +
                        "' is not a device ordinal; write a comma-separated "
                        "list such as 0,2");
    if (value >= count)
      return Status(StatusCode::kInvalidArgument,
                    source + "=" + text + ": device " + item +
                        " does not exist; the backend has " +
                        std::to_string(count) + " device(s), 0.." +
                        std::to_string(count - 1));
    if (std::find(out.begin(), out.end(), value) == out.end())
      out.push_back(static_cast<uint32_t>(value));
  }
  return out;
}

Status RuntimeImpl::InitDevices(const std::string& visible,
                                const std::string& visible_source) {
  TESSERA_ASSIGN_OR_RETURN(auto listed, ListDevices(*plugin, client));
  for (auto& [raw, info] : listed) {
    auto device = std::make_unique<DeviceImpl>();
    device->runtime = this;
    device->raw = raw;
    device->info = std::move(info);
    // Devices of a plugin without Device_GetDefaultStream have none; calls
    // that need one report UNSUPPORTED.
    auto ds = MakeArgs<TsDevice_GetDefaultStream_Args>();
    ds.device = raw;
    // Optional (without it a device has no default stream), but a plugin
    // that provides it must answer with a stream.
    if (plugin->table().Device_GetDefaultStream &&
        TESSERA_PLUGIN_CALL(*plugin, Device_GetDefaultStream, ds).ok()) {
      if (ds.stream == nullptr)
        return plugin->BadAnswer("Device_GetDefaultStream",
                                 "success without setting its out-pointer 'stream'");
      device->default_stream = ds.stream;
    }
    owned_devices.push_back(std::move(device));
  }
  std::vector<uint32_t> keep;
  if (visible.empty()) {
    for (uint32_t i = 0; i < owned_devices.size(); ++i) keep.push_back(i);
  } else {
    TESSERA_ASSIGN_OR_RETURN(keep, ParseVisible(visible_source, visible, owned_devices.size()));
    if (keep.empty())
      return Status(StatusCode::kInvalidArgument,
                    visible_source + "=" + visible +
                        " leaves no device visible");
  }
  for (uint32_t index : keep) {
    visible_devices.push_back(owned_devices[index].get());
    TESSERA_LOG(kDebug, "device " + std::to_string(index) + ": " +
                            owned_devices[index]->info.name);
  }
  return Status::Ok();
}

std::string DeviceImpl::Describe() const {
  return runtime->backend + " device " + std::to_string(info.ordinal) + " (" +
         info.name + ")";
}

}  // namespace detail

using detail::MakeArgs;

StatusOr<Runtime> Runtime::Create(const RuntimeOptions& options) {
  auto selection = detail::SelectBackend(options);
  if (!selection.ok()) return selection.status();
  auto impl = std::make_shared<detail::RuntimeImpl>();
  impl->plugin = selection->backend.plugin;
  impl->client = selection->backend.client;
  impl->candidates = std::move(selection->candidates);
  for (const PluginCandidate& c : impl->candidates)
    if (c.state == PluginState::kLoaded) impl->backend = c.name;

  std::string visible = options.visible_devices;
  std::string visible_source = "RuntimeOptions::visible_devices";
  if (visible.empty() && options.read_environment) {
    if (const char* env = std::getenv("TESSERA_VISIBLE_DEVICES")) {
      visible = env;
      visible_source = "TESSERA_VISIBLE_DEVICES";
    }
  }
  Status st = impl->InitDevices(visible, visible_source);
  if (!st.ok()) return st;
  std::string faults = options.fault_injection;
  std::string faults_source = "RuntimeOptions::fault_injection";
  if (faults.empty() && options.read_environment)
    if (const char* env = std::getenv("TESSERA_FAULT")) {
      faults = env;
      faults_source = "TESSERA_FAULT";
    }
  TESSERA_ASSIGN_OR_RETURN(impl->faults,
                           detail::FaultInjector::Parse(faults, faults_source));
  std::string trace_path = options.trace_path;
  if (trace_path.empty() && options.read_environment)
    if (const char* env = std::getenv("TESSERA_TRACE")) trace_path = env;
  if (!trace_path.empty())
    impl->trace = std::make_unique<detail::RuntimeTrace>(
        detail::Tracer::Open(trace_path), impl->plugin.get());
  return Runtime(std::move(impl));
}

std::vector<Runtime::ProbeResult> Runtime::ProbeAll(
    const RuntimeOptions& options) {
  std::vector<ProbeResult> results;
  std::vector<PluginCandidate> candidates = detail::DiscoverPlugins(options);
  std::vector<const PluginCandidate*> all;
  for (const PluginCandidate& c : candidates) all.push_back(&c);
  detail::ProbePluginFiles(all, options);
  for (PluginCandidate& c : candidates) {
    ProbeResult result;
    if (c.state != PluginState::kShadowed) {
      auto opened = detail::OpenBackend(&c, options);
      if (opened.ok()) {
        for (auto& device : opened->devices)
          result.devices.push_back(device.second);
        detail::CloseBackend(&*opened);
      }
    }
    result.candidate = c;
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<std::string> Runtime::DefaultPluginDirectories() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& dir) {
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return;
    std::string canonical = fs::weakly_canonical(dir, ec).string();
    if (std::find(dirs.begin(), dirs.end(), canonical) == dirs.end())
      dirs.push_back(canonical);
  };
  // Next to this library (<libdir>/tessera/plugins): a relocated install
  // still finds its plugins.
  Dl_info info{};
  std::string library_dir;
  if (dladdr(reinterpret_cast<void*>(&Runtime::DefaultPluginDirectories),
             &info) && info.dli_fname) {
    std::error_code ec;
    library_dir = fs::weakly_canonical(fs::path(info.dli_fname).parent_path(), ec).string();
    add((fs::path(library_dir) / "tessera" / "plugins").string());
  }
  // The build tree's plugins only for the build tree's library: an installed
  // (or relocated) copy must not pick up plugins from where it was built.
  std::error_code ec;
  const bool in_build_tree =
      !library_dir.empty() &&
      library_dir == fs::weakly_canonical(TESSERA_BUILD_LIBRARY_DIR, ec).string();
  if (in_build_tree) {
    add(TESSERA_BUILD_PLUGIN_DIR);
  } else {
    add(TESSERA_INSTALL_PLUGIN_DIR);
  }
  return dirs;
}

namespace {
// What a default-constructed Runtime (invalid until Create) answers: empty
// values, and an error that says so, instead of a null dereference.
Status NotCreated(const char* what) {
  return Status(StatusCode::kFailedPrecondition,
                std::string(what) + ": the Runtime was not created (a default-constructed Runtime is "
                                    "empty): use Runtime::Create()");
}
}  // namespace

const std::string& Runtime::backend() const {
  static const std::string none;
  return impl_ ? impl_->backend : none;
}
const std::vector<PluginCandidate>& Runtime::candidates() const {
  static const std::vector<PluginCandidate> none;
  return impl_ ? impl_->candidates : none;
}
Runtime::Runtime(std::shared_ptr<detail::RuntimeImpl> impl) : impl_(std::move(impl)) {
  if (!impl_) return;
  // Aliasing handles: each points at a device and shares ownership of the
  // runtime.  They live here, in the handle, not in the RuntimeImpl (which
  // would then own itself).
  devices_.reserve(impl_->visible_devices.size());
  for (detail::DeviceImpl* d : impl_->visible_devices)
    devices_.push_back(Device(std::shared_ptr<detail::DeviceImpl>(impl_, d)));
}

const std::vector<Device>& Runtime::devices() const { return devices_; }
const TsPluginApi* Runtime::plugin_api() const {
  if (!impl_) return nullptr;
  // Validating, the raw table too goes through the layer.
  return impl_->plugin->validation() ? &impl_->plugin->table() : impl_->plugin->raw_api();
}
const TsPluginApi* Runtime::plugin_own_api() const { return impl_ ? impl_->plugin->raw_api() : nullptr; }
TsClient* Runtime::raw_client() const { return impl_ ? impl_->client : nullptr; }

StatusOr<void*> Runtime::pinned_malloc(size_t size) const {
  if (!impl_) return NotCreated("pinned_malloc");
  if (size == 0)
    return Status(StatusCode::kInvalidArgument,
                  "pinned_malloc(0): the size must be greater than zero");
  TESSERA_INJECT_FAULT(impl_.get(), kAlloc, "pinned_malloc");
  auto args = MakeArgs<TsHost_Allocate_Args>();
  args.client = impl_->client;
  args.size = size;
  Status st = TESSERA_PLUGIN_CALL_OUT(impl_->lib(), Host_Allocate, args, pointer);
  if (!st.ok()) return st.Annotate("pinned_malloc(" + FormatBytes(size) + ")");
  impl_->pinned.Add(args.pointer, size, detail::PinnedRegistry::Origin::kPinnedMalloc);
  return args.pointer;
}

Status Runtime::pinned_free(void* pointer) const {
  if (pointer == nullptr) return Status::Ok();
  if (!impl_) return NotCreated("pinned_free");
  if (!impl_->pinned.Remove(pointer, detail::PinnedRegistry::Origin::kPinnedMalloc))
    return Status(StatusCode::kInvalidArgument,
                  "pinned_free: the pointer was not returned by pinned_malloc "
                  "(or was already freed)");
  auto args = MakeArgs<TsHost_Free_Args>();
  args.client = impl_->client;
  args.pointer = pointer;
  return TESSERA_PLUGIN_CALL(impl_->lib(), Host_Free, args);
}

Status Runtime::register_host(void* pointer, size_t size) const {
  if (!impl_) return NotCreated("register_host");
  if (pointer == nullptr || size == 0)
    return Status(StatusCode::kInvalidArgument,
                  "register_host needs a non-null pointer and a size > 0");
  if (uintptr_t end = 0; __builtin_add_overflow(reinterpret_cast<uintptr_t>(pointer), size, &end))
    return Status(StatusCode::kInvalidArgument,
                  "register_host: " + FormatBytes(size) + " from the pointer wraps the address space: give "
                  "the size of the memory at the pointer");
  // Claim the range first so two threads cannot register overlapping memory.
  if (!impl_->pinned.Add(pointer, size,
                         detail::PinnedRegistry::Origin::kRegisterHost))
    return Status(StatusCode::kAlreadyExists,
                  "register_host: the range overlaps memory that is already "
                  "page-locked");
  auto args = MakeArgs<TsHost_Register_Args>();
  args.client = impl_->client;
  args.pointer = pointer;
  args.size = size;
  Status st = TESSERA_PLUGIN_CALL(impl_->lib(), Host_Register, args);
  if (!st.ok()) {
    impl_->pinned.Remove(pointer, detail::PinnedRegistry::Origin::kRegisterHost);
    return st.Annotate("register_host(" + FormatBytes(size) + ")");
  }
  return Status::Ok();
}

Status Runtime::unregister_host(void* pointer) const {
  if (!impl_) return NotCreated("unregister_host");
  if (!impl_->pinned.Remove(pointer, detail::PinnedRegistry::Origin::kRegisterHost))
    return Status(StatusCode::kInvalidArgument,
                  "unregister_host: the pointer was not registered with "
                  "register_host");
  auto args = MakeArgs<TsHost_Unregister_Args>();
  args.client = impl_->client;
  args.pointer = pointer;
  return TESSERA_PLUGIN_CALL(impl_->lib(), Host_Unregister, args);
}

bool Runtime::is_pinned(const void* pointer, size_t size) const {
  return impl_ && impl_->pinned.Contains(pointer, size);
}

}  // namespace tessera
