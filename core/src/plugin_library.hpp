// One loaded plugin: the mapped shared object (or the embedded CPU plugin)
// and a full-size copy of its function table.
//
// Why a copy: a plugin built against an older MINOR has a shorter table;
// reading past its struct_size would read past the plugin's static data.  At
// load time the entries the plugin provides are copied into a zeroed
// TsPluginApi of this header's size, so every later call is one null check.
//
// Ownership: shared by the Runtime and everything created from it; the shared
// object stays mapped until the last user is gone.  Immutable after Load():
// safe to use from any thread.
#ifndef TESSERA_CORE_PLUGIN_LIBRARY_HPP_
#define TESSERA_CORE_PLUGIN_LIBRARY_HPP_

#include <memory>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "tessera/plugin.h"
#include "tessera/runtime.hpp"
#include "tessera/status.hpp"
#include "validation_layer.hpp"

namespace tessera::detail {

inline constexpr const char* kEmbeddedPath = "<embedded>";

class PluginLibrary {
 public:
  // Opens `path` (or the statically registered plugin of the candidate's
  // name when path == kEmbeddedPath, see RegisterStaticPlugin),
  // calls its entry point and checks the table.  A file is first probed in
  // a child process with `options` (plugin_probe.hpp): one whose probe
  // crashed, hung or exited is never mapped into this process.  On failure
  // fills candidate->state/reason and returns the error.  On success fills
  // the candidate's ABI version, vendor and plugin version.
  static StatusOr<std::shared_ptr<PluginLibrary>> Load(
      PluginCandidate* candidate, const RuntimeOptions& options);
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  TsAbiVersion version() const { return version_; }
  // The full-size table; entries the plugin lacks are null.
  const TsPluginApi& table() const { return table_; }
  // The plugin's own table, as it returned it (for direct-call benchmarks).
  const TsPluginApi* raw_api() const { return raw_; }

  // Stacks the validation layer over the plugin (tessera/validation.hpp):
  // table() then calls the layer, which calls the plugin.  Done once, right
  // after Load and before the first call through table().  Fails (and the
  // plugin is called directly) when the process has no slot left.
  Status StackValidation(ValidationCallback report);
  // The layer, or null when this plugin is called directly.
  ValidationLayer* validation() const { return validation_.get(); }

  // ABI 1.2 and later: Client_Create takes options.
  bool takes_options() const { return takes_options_; }
  // What Compiler_GetTargets says (checked and copied); empty without it.
  std::vector<CompileTargetInfo> ReadCompileTargets() const;

  // Turns a plugin error into a Status and destroys the error.  The error
  // object is checked, not trusted: a code that is no error (0: success, or
  // out of range) becomes INTERNAL naming the plugin, its file and `entry`;
  // the message is read within a bound whatever message_size claims.
  Status ToStatus(TsError* error, const char* entry = nullptr) const;
  // The status for an entry point this plugin does not provide.
  Status Missing(const char* entry) const;
  // The status for an answer that breaks the ABI (a null out-pointer on
  // success, a count past its bound, ...): INTERNAL, naming the plugin, its
  // file and the entry point.  The answer is not used.
  Status BadAnswer(const char* entry, const std::string& what) const;

  // True in a child process fork()ed after this library was loaded: the
  // plugin's threads and device state stayed in the parent (a cpu worker
  // pool, a GPU context), so a call would hang or corrupt it.  Cheap: one
  // atomic load (a pthread_atfork handler counts forks).
  bool InForkedChild() const;
  // FAILED_PRECONDITION for `entry` in such a child, saying what to do.
  Status ForkedChild(const char* entry) const;

 private:
  PluginLibrary() = default;
  std::string name_;
  std::string path_;
  boost::dll::shared_library library_;  // empty for the embedded plugin
  const TsPluginApi* raw_ = nullptr;
  TsPluginApi table_{};
  TsAbiVersion version_{};
  bool takes_options_ = false;
  uint64_t fork_generation_ = 0;  // the process's fork count when loaded
  long pid_ = 0;                  // the process that loaded it
  // Declared last, destroyed first: nothing calls through table() by then.
  std::unique_ptr<ValidationLayer> validation_;
};

// A hint's result (Buffer_Advise, Buffer_Prefetch) that is one of the enum's
// values; anything else is the plugin's BadAnswer. Read as its bytes: an
// out-of-range value loaded as the enum type is undefined behaviour in C++
// (UBSan: "not a valid value for type 'TsHintResult'").
inline StatusOr<TsHintResult> CheckHintResult(const PluginLibrary& lib, const char* entry,
                                              const TsHintResult* result) {
  std::underlying_type_t<TsHintResult> raw;
  static_assert(sizeof(raw) == sizeof(*result));
  std::memcpy(&raw, result, sizeof(raw));
  if (raw == TS_HINT_IGNORED || raw == TS_HINT_EMULATED || raw == TS_HINT_APPLIED)
    return static_cast<TsHintResult>(raw);
  return lib.BadAnswer(entry, "the hint result " + std::to_string(static_cast<long long>(raw)));
}

// A zero-initialised Args struct with struct_size set.
template <typename Args>
inline Args MakeArgs() {
  Args args{};
  args.struct_size = sizeof(Args);
  return args;
}

}  // namespace tessera::detail

// Calls entry point `Entry` of `lib` with `args` (an lvalue Args struct) and
// returns a Status; a missing entry returns UNSUPPORTED without calling.
#define TESSERA_PLUGIN_CALL(lib, Entry, args)                                       \
  ((lib).table().Entry ? ((lib).InForkedChild() ? (lib).ForkedChild(#Entry)           \
                                                : (lib).ToStatus((lib).table().Entry(&(args)), #Entry)) \
                       : (lib).Missing(#Entry))

// TESSERA_PLUGIN_CALL for an entry point whose success promises a non-null
// out-pointer `field` of `args` (a created object): success with a null one
// is the plugin's error (BadAnswer), not a null handle passed on.
#define TESSERA_PLUGIN_CALL_OUT(lib, Entry, args, field)                         \
  ([&]() -> ::tessera::Status {                                                  \
    ::tessera::Status _status = TESSERA_PLUGIN_CALL(lib, Entry, args);           \
    if (_status.ok() && (args).field == nullptr)                                 \
      return (lib).BadAnswer(#Entry, "success without setting its out-pointer '" \
                                     #field "'");                                \
    return _status;                                                              \
  }())

#endif  // TESSERA_CORE_PLUGIN_LIBRARY_HPP_
