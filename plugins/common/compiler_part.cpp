#include "compiler_part.hpp"

#include <dlfcn.h>

#include <vector>

#include "build_id.hpp"
#include "plugin_support.hpp"

namespace tessera::plugin_support {

std::vector<std::string> CompilerPart::Candidates() const {
  Dl_info info{};
  std::vector<std::string> candidates;
  if (dladdr(anchor_, &info) && info.dli_fname) {
    std::string dir = info.dli_fname;
    size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? "." : dir.substr(0, slash);
    candidates.push_back(dir + "/compilers/" + file_);
    candidates.push_back(dir + "/tessera/plugins/compilers/" + file_);
  }
  return candidates;
}

const TsCompilerTarget* CompilerPart::Targets(const TsCompilerTarget* table, size_t count, size_t* listed) noexcept {
  std::call_once(targets_once_, [&] {
    // The file Load() would open: its size and modification time tell one
    // build from another without loading it.
    for (const std::string& path : Candidates()) {
      std::string id = FileBuildId(path);
      if (id.empty()) continue;
      build_id_ = std::string(file_) + ":" + id;
      break;
    }
    if (build_id_.empty()) return;  // no part: nothing to compile with
    targets_.assign(table, table + count);
    for (TsCompilerTarget& t : targets_) t.build_id = build_id_.c_str();
  });
  *listed = targets_.size();
  return targets_.empty() ? nullptr : targets_.data();
}

TsError* CompilerPart::Load() noexcept {
  if (api_.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard<std::mutex> lock(load_mu_);
  if (api_.load(std::memory_order_relaxed)) return nullptr;
  if (!load_error_.empty())
    return errorf(TS_ERROR_UNAVAILABLE, "%s: Compiler_Compile: %s", plugin_, load_error_.c_str());
  std::string tried;
  bool out_of_memory = false;
  for (const std::string& path : Candidates()) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) break;
    const char* message = dlerror();  // once: the call clears it
    const std::string e = message ? message : "";
    // The file is there but could not be mapped now (the loader's words
    // for ENOMEM); any other failure (a missing dependency, an undefined
    // symbol, another architecture, a truncated file) lasts.
    out_of_memory = out_of_memory || e.find("Cannot allocate memory") != std::string::npos ||
                    e.find("failed to map segment") != std::string::npos;
    tried += (tried.empty() ? "" : "; ") + path + ": " + (e.empty() ? "dlopen failed" : e);
  }
  if (!handle_) {
    if (out_of_memory)
      return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                    "%s: Compiler_Compile: cannot load the compiler part %s now (%s): free memory (or raise "
                    "the address-space limit) and retry",
                    plugin_, file_, tried.c_str());
    return errorf(TS_ERROR_UNAVAILABLE,
                  "%s: Compiler_Compile: cannot load the compiler part %s (%s); install it in the compilers/ "
                  "folder next to the plugin",
                  plugin_, file_, tried.empty() ? "the plugin's folder is unknown" : tried.c_str());
  }
  using GetApi = const TsPluginApi* (*)(void);
  auto get = reinterpret_cast<GetApi>(dlsym(handle_, TESSERA_PLUGIN_COMPILER_ENTRY_POINT));
  const TsPluginApi* api = get ? get() : nullptr;
  if (!api) {
    load_error_ = std::string(file_) + " does not export " + TESSERA_PLUGIN_COMPILER_ENTRY_POINT +
                  " or it returned NULL";
  } else if (api->abi_version.major != TESSERA_ABI_VERSION_MAJOR ||
             api->struct_size < TS_PLUGIN_API_STRUCT_SIZE || !api->Compiler_Compile ||
             !api->Compilation_Destroy || !api->Error_Destroy || !api->Error_Message ||
             !api->Error_GetCode) {
    load_error_ = std::string(file_) + " is not a compiler part of plugin ABI " +
                  std::to_string(TESSERA_ABI_VERSION_MAJOR) + "." +
                  std::to_string(TESSERA_ABI_VERSION_MINOR) +
                  " (wrong version or missing entries): rebuild it with the plugin";
  } else {
    api_.store(api, std::memory_order_release);
    return nullptr;
  }
  return errorf(TS_ERROR_UNAVAILABLE, "%s: Compiler_Compile: %s", plugin_, load_error_.c_str());
}

TsError* CompilerPart::Forward(TsError* part_error) noexcept {
  if (part_error == nullptr) return nullptr;
  TsError_GetCode_Args code{};
  code.struct_size = TS_ERROR_GETCODE_ARGS_STRUCT_SIZE;
  code.error = part_error;
  TsError_Message_Args msg{};
  msg.struct_size = TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE;
  msg.error = part_error;
  TsErrorCode c = TS_ERROR_INTERNAL;
  std::string text = "(the compiler part returned an error without a message)";
  if (api_.load(std::memory_order_acquire)->Error_GetCode(&code) == nullptr) c = code.code;
  if (api_.load(std::memory_order_acquire)->Error_Message(&msg) == nullptr && msg.message) text.assign(msg.message, msg.message_size);
  TsError_Destroy_Args destroy{};
  destroy.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
  destroy.error = part_error;
  api_.load(std::memory_order_acquire)->Error_Destroy(&destroy);
  return make_error(c, text);
}

TsError* CompilerPart::Compile(TsCompiler_Compile_Args* args) noexcept {
  if (TsError* e = Load()) return e;
  return Forward(api_.load(std::memory_order_acquire)->Compiler_Compile(args));
}

TsError* CompilerPart::CompileWithDefaults(
    TsCompiler_Compile_Args* args, const std::string& target,
    const std::vector<std::pair<std::string, std::string>>& defaults) noexcept {
  std::vector<TsNamedValue> options;
  // The caller's options, bounded as every reader of them is.
  if (args->options && args->num_options <= 1024)
    options.assign(args->options, args->options + args->num_options);
  for (const auto& [name, value] : defaults) {
    bool given = false;
    for (const TsNamedValue& o : options) given |= o.name && name == o.name;
    if (given) continue;
    TsNamedValue v{};
    v.struct_size = TS_NAMED_VALUE_STRUCT_SIZE;
    v.name = name.c_str();
    v.type = TS_VALUE_STRING;  // every reader takes the text form
    v.string_value = value.c_str();
    options.push_back(v);
  }
  TsCompiler_Compile_Args forwarded = *args;
  forwarded.options = options.empty() ? nullptr : options.data();
  forwarded.num_options = options.size();
  if (!target.empty()) forwarded.target = target.c_str();
  forwarded.device = nullptr;  // the part knows no device of the plugin
  TsError* e = Compile(&forwarded);
  // The outputs, into the caller's struct (the one it reads).
  args->compilation = forwarded.compilation;
  args->format = forwarded.format;
  args->data = forwarded.data;
  args->size = forwarded.size;
  args->kernels = forwarded.kernels;
  args->num_kernels = forwarded.num_kernels;
  args->log = forwarded.log;
  return e;
}

TsError* CompilerPart::Destroy(TsCompilation_Destroy_Args* args) noexcept {
  if (args->compilation == nullptr) return nullptr;
  // Without a part nothing was ever compiled: any handle is someone else's.
  if (TsError* e = Load()) {
    TsError_Destroy_Args drop{};
    drop.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
    drop.error = e;
    Error_Destroy(&drop);
    return errorf(TS_ERROR_INVALID_HANDLE,
                  "%s: Compilation_Destroy: %p is not a compilation of this plugin (its compiler part %s is not "
                  "there, so it never compiled anything)",
                  plugin_, static_cast<void*>(args->compilation), file_);
  }
  return Forward(api_.load(std::memory_order_acquire)->Compilation_Destroy(args));
}

}  // namespace tessera::plugin_support
