#include "plugin_library.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <exception>

#include "log.hpp"
#include "plugin_options.hpp"
#include "plugin_probe.hpp"
#include "static_plugins.hpp"

namespace tessera::detail {

namespace {

// Forks of this process so far, counted in the child (pthread_atfork): a
// library loaded before the last fork is unusable in the child.
std::atomic<uint64_t> g_forks{0};

uint64_t ForkGeneration() {
  static const bool registered = [] {
    ::pthread_atfork(nullptr, nullptr, [] { g_forks.fetch_add(1, std::memory_order_relaxed); });
    return true;
  }();
  (void)registered;
  return g_forks.load(std::memory_order_relaxed);
}

std::string VersionText(TsAbiVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

Status Reject(PluginCandidate* candidate, PluginState state, StatusCode code,
              std::string reason) {
  candidate->state = state;
  candidate->reason = reason;
  return Status(code, "plugin '" + candidate->name + "' (" + candidate->path +
                          "): " + reason);
}

// Entry points without which a plugin cannot serve anything.
struct RequiredEntry {
  const char* name;
  size_t offset;
};
#define TESSERA_REQUIRED(Entry) {#Entry, offsetof(TsPluginApi, Entry)}
constexpr RequiredEntry kRequired[] = {
    TESSERA_REQUIRED(Error_Destroy),     TESSERA_REQUIRED(Error_Message),
    TESSERA_REQUIRED(Error_GetCode),     TESSERA_REQUIRED(Plugin_GetInfo),
    TESSERA_REQUIRED(Client_Create),     TESSERA_REQUIRED(Client_Destroy),
    TESSERA_REQUIRED(Client_GetDevices), TESSERA_REQUIRED(Device_GetProperties),
};
#undef TESSERA_REQUIRED

}  // namespace

PluginLibrary::~PluginLibrary() {
  if (library_.is_loaded()) NoteProbeStep(ProbeStep::kUnload);
}

StatusOr<std::shared_ptr<PluginLibrary>> PluginLibrary::Load(
    PluginCandidate* candidate, const RuntimeOptions& options) {
  std::shared_ptr<PluginLibrary> lib(new PluginLibrary());
  lib->fork_generation_ = ForkGeneration();
  lib->pid_ = static_cast<long>(::getpid());
  lib->name_ = candidate->name;
  lib->path_ = candidate->path;

  const TsPluginApi* api = nullptr;
  if (candidate->path == kEmbeddedPath) {
    TsPluginGetApiFn get_api = FindStaticPlugin(candidate->name);
    if (get_api == nullptr)
      return Reject(candidate, PluginState::kRejected, StatusCode::kNotFound,
                    "no plugin named '" + candidate->name + "' is registered in this program");
    api = get_api();
  } else {
    std::string not_a_file = NotAPluginFileReason(candidate->path);
    if (!not_a_file.empty())
      return Reject(candidate, PluginState::kRejected, StatusCode::kNotFound, not_a_file);
    ProbeVerdict verdict = ProbePluginFile(*candidate, options);
    if (!verdict.survived)
      return Reject(candidate, PluginState::kRejected, StatusCode::kInternal, verdict.reason);
    NoteProbeStep(ProbeStep::kLoad);
    // Boost.DLL reports failures as exceptions carrying the dlerror text; the
    // text is what the user needs ("invalid ELF header", "undefined symbol").
    try {
      lib->library_.load(candidate->path,
                         boost::dll::load_mode::rtld_local |
                             boost::dll::load_mode::rtld_now);
    } catch (const std::exception& e) {
      return Reject(candidate, PluginState::kRejected, StatusCode::kNotFound,
                    std::string("cannot load the shared object: ") + e.what() +
                        " (is it a plugin built for this machine?)");
    }
    if (!lib->library_.has(TESSERA_PLUGIN_ENTRY_POINT)) {
      return Reject(candidate, PluginState::kRejected,
                    StatusCode::kNotFound,
                    std::string("not a Tessera plugin: it does not export the "
                                "entry point '") +
                        TESSERA_PLUGIN_ENTRY_POINT +
                        "' (declare it with TESSERA_PLUGIN_EXPORT, extern \"C\")");
    }
    NoteProbeStep(ProbeStep::kEntryPoint);
    try {
      auto& entry =
          lib->library_.get<const TsPluginApi*()>(TESSERA_PLUGIN_ENTRY_POINT);
      api = entry();
    } catch (const std::exception& e) {
      return Reject(candidate, PluginState::kRejected, StatusCode::kNotFound,
                    std::string("cannot resolve the entry point: ") + e.what());
    }
  }

  if (api == nullptr) {
    return Reject(candidate, PluginState::kRejected, StatusCode::kInternal,
                  std::string("its entry point ") + TESSERA_PLUGIN_ENTRY_POINT +
                      "() returned NULL instead of a function table");
  }
  candidate->abi_version = VersionText(api->abi_version);
  if (api->abi_version.major != TESSERA_ABI_VERSION_MAJOR) {
    return Reject(
        candidate, PluginState::kRejected, StatusCode::kAbiMismatch,
        "ABI version mismatch: the plugin implements Tessera plugin ABI " +
            VersionText(api->abi_version) + " but this runtime implements " +
            std::to_string(TESSERA_ABI_VERSION_MAJOR) + "." +
            std::to_string(TESSERA_ABI_VERSION_MINOR) +
            "; plugins must have the same MAJOR version: rebuild the plugin "
            "against tessera/plugin.h " +
            std::to_string(TESSERA_ABI_VERSION_MAJOR) + ".x");
  }
  if (api->struct_size < TS_PLUGIN_API_MIN_STRUCT_SIZE) {
    return Reject(candidate, PluginState::kRejected, StatusCode::kAbiMismatch,
                  "its function table is " + std::to_string(api->struct_size) +
                      " bytes, smaller than any Tessera 1.x table (" +
                      std::to_string(TS_PLUGIN_API_MIN_STRUCT_SIZE) +
                      "); set struct_size = TS_PLUGIN_API_STRUCT_SIZE");
  }

  // Copy what the plugin provides; a newer MINOR's extra entries are ignored.
  size_t known = api->struct_size < sizeof(TsPluginApi) ? api->struct_size
                                                         : sizeof(TsPluginApi);
  // Whole entries only: a struct_size that ends inside an entry point (not a
  // multiple of the pointer size) would copy part of a pointer, which the
  // core then calls (found by fuzz/plugin_fuzzer.cpp). The cut entry counts
  // as missing.
  known -= known % sizeof(void*);
  std::memcpy(&lib->table_, api, known);
  lib->table_.struct_size = sizeof(TsPluginApi);
  lib->raw_ = api;
  lib->version_ = api->abi_version;

  for (const RequiredEntry& required : kRequired) {
    void* fn = nullptr;
    std::memcpy(&fn, reinterpret_cast<const char*>(&lib->table_) + required.offset,
                sizeof fn);
    if (fn == nullptr) {
      return Reject(candidate, PluginState::kRejected, StatusCode::kAbiMismatch,
                    std::string("its function table lacks the required entry "
                                "point ") +
                        required.name);
    }
  }

  NoteProbeStep(ProbeStep::kGetInfo);
  auto info = MakeArgs<TsPlugin_GetInfo_Args>();
  Status st = lib->ToStatus(lib->table_.Plugin_GetInfo(&info), "Plugin_GetInfo");
  if (!st.ok()) {
    return Reject(candidate, PluginState::kRejected, st.code(),
                  "Plugin_GetInfo failed: " + st.message());
  }
  candidate->vendor = BoundedString(info.vendor, TS_NAME_MAX);
  candidate->plugin_version = BoundedString(info.plugin_version, TS_NAME_MAX);
  lib->takes_options_ = lib->version_.minor >= 2 || lib->version_.major > 1;
  if (lib->takes_options_ && TS_FIELD_PRESENT(&info, TsPlugin_GetInfo_Args, num_client_options))
    candidate->options = CopyOptionInfos(info.client_options, info.num_client_options);
  candidate->compile_targets = lib->ReadCompileTargets();
  if (info.name && candidate->name != BoundedString(info.name, TS_NAME_MAX)) {
    TESSERA_LOG(kDebug, "plugin file " + candidate->path + " calls itself '" +
                            BoundedString(info.name, TS_NAME_MAX) + "'; it is known as '" +
                            candidate->name + "' from its file name");
  }
  TESSERA_LOG(kDebug, "loaded plugin '" + candidate->name + "' from " +
                          candidate->path + " (ABI " +
                          candidate->abi_version + ")");
  return lib;
}

bool PluginLibrary::InForkedChild() const {
  return g_forks.load(std::memory_order_relaxed) != fork_generation_;
}

Status PluginLibrary::ForkedChild(const char* entry) const {
  return Status(StatusCode::kFailedPrecondition,
                name_ + ": " + entry + ": this Runtime was created in process " + std::to_string(pid_) +
                    ", before a fork(); its plugin's threads and device state stayed in that process, so "
                    "nothing of it works in this child (" + std::to_string(static_cast<long>(::getpid())) +
                    "): create a new Runtime in the child (tessera.init() in Python), or start children "
                    "with exec or the 'spawn' method");
}

Status PluginLibrary::ToStatus(TsError* error, const char* entry) const {
  if (error == nullptr) return Status::Ok();
  auto code_args = MakeArgs<TsError_GetCode_Args>();
  code_args.error = error;
  auto message_args = MakeArgs<TsError_Message_Args>();
  message_args.error = error;
  // Error_* must not fail; if they do, say so rather than losing the error.
  // Their own error objects are destroyed unread (reading them could fail
  // the same way).
  auto discard = [&](TsError* inner) {
    if (inner == nullptr || inner == error) return;
    auto destroy = MakeArgs<TsError_Destroy_Args>();
    destroy.error = inner;
    table_.Error_Destroy(&destroy);
  };
  std::string broken;  // why the error object itself is not a valid error
  StatusCode code = StatusCode::kInternal;
  if (TsError* inner = table_.Error_GetCode(&code_args)) {
    discard(inner);
    broken = "whose Error_GetCode failed";
  } else {
    // Read as its bytes: a code outside the enum's values, loaded as
    // TsErrorCode, is undefined behaviour (UBSan, fuzz/plugin_fuzzer.cpp).
    std::underlying_type_t<TsErrorCode> raw;
    static_assert(sizeof(raw) == sizeof(code_args.code));
    std::memcpy(&raw, &code_args.code, sizeof(raw));
    if (raw >= TS_ERROR_CANCELLED && raw <= TS_ERROR_ABI_MISMATCH)
      code = static_cast<StatusCode>(raw);
    else
      broken = "whose code is " + std::to_string(raw) +
               (raw == 0 ? " (success), not an error code" : ", not an error code");
  }
  std::string message;
  if (TsError* inner = table_.Error_Message(&message_args)) {
    discard(inner);
    message = "(the plugin's Error_Message failed)";
  } else if (message_args.message == nullptr) {
    message = "(the plugin returned an error without a message)";
  } else {
    // Read up to the NUL within a bound, whatever message_size claims.
    constexpr size_t kMaxMessage = 64 * 1024;
    size_t limit = message_args.message_size < kMaxMessage ? message_args.message_size : kMaxMessage;
    message = BoundedString(message_args.message, limit);
  }
  auto destroy_args = MakeArgs<TsError_Destroy_Args>();
  destroy_args.error = error;
  table_.Error_Destroy(&destroy_args);
  if (!broken.empty()) {
    // A failure all the same: the call returned an error object.  INTERNAL,
    // and the plugin is named, since the fault is its own.
    return Status(StatusCode::kInternal,
                  "plugin '" + name_ + "' (" + path_ + "): " + (entry ? entry : "a call") +
                      " returned an error object " + broken +
                      " (the plugin is broken); its message: " + message);
  }
  return Status(code, std::move(message));
}

Status PluginLibrary::BadAnswer(const char* entry, const std::string& what) const {
  return Status(StatusCode::kInternal, "plugin '" + name_ + "' (" + path_ + "): " + entry +
                                           " returned " + what +
                                           ": the plugin is broken (its answer is not used)");
}

std::vector<CompileTargetInfo> PluginLibrary::ReadCompileTargets() const {
  std::vector<CompileTargetInfo> out;
  if (table_.Compiler_GetTargets == nullptr) return out;
  auto args = MakeArgs<TsCompiler_GetTargets_Args>();
  Status st = ToStatus(table_.Compiler_GetTargets(&args), "Compiler_GetTargets");
  if (!st.ok()) {
    TESSERA_LOG(kDebug, "plugin " + name_ + ": Compiler_GetTargets failed: " + st.ToString());
    return out;
  }
  if (args.targets == nullptr) return out;
  // A plugin's answer is checked, not trusted: counts and strings bounded.
  constexpr size_t kMaxTargets = 64;
  size_t n = args.num_targets < kMaxTargets ? args.num_targets : kMaxTargets;
  auto split = [](const std::string& text) {
    std::vector<std::string> items;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find(',', start);
      if (end == std::string::npos) end = text.size();
      if (end > start) items.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return items;
  };
  for (size_t i = 0; i < n; ++i) {
    const TsCompilerTarget& t = args.targets[i];
    if (t.struct_size < TS_COMPILER_TARGET_MIN_STRUCT_SIZE || t.name == nullptr) continue;
    CompileTargetInfo info;
    info.plugin = name_;
    info.name = BoundedString(t.name, TS_NAME_MAX);
    if (info.name.empty()) continue;
    info.archs = split(BoundedString(t.archs));
    info.default_arch = BoundedString(t.default_arch, TS_NAME_MAX);
    info.executable_format = BoundedString(t.executable_format, TS_NAME_MAX);
    info.emit_kinds = split(BoundedString(t.emit_kinds));
    info.input_levels = t.input_levels;
    info.schedule = BoundedString(t.schedule);
    info.options = CopyOptionInfos(t.options, t.num_options);
    if (TS_FIELD_PRESENT(&t, TsCompilerTarget, build_id))
      info.build_id = BoundedString(t.build_id, TS_NAME_MAX);
    out.push_back(std::move(info));
  }
  return out;
}

Status PluginLibrary::Missing(const char* entry) const {
  return Status(StatusCode::kUnsupported,
                "the '" + name_ + "' plugin (ABI " + VersionText(version_) +
                    ") does not provide " + entry +
                    ": this operation is not supported by that backend");
}

Status PluginLibrary::StackValidation(ValidationCallback report) {
  if (validation_) return Status::Ok();
  auto layer = ValidationLayer::Create(table_, name_, std::move(report));
  if (!layer.ok()) return layer.status();
  validation_ = std::move(*layer);
  table_ = validation_->table();
  return Status::Ok();
}

}  // namespace tessera::detail
