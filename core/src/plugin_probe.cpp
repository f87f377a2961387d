#include "plugin_probe.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "child_process.hpp"
#include "log.hpp"
#include "plugin_library.hpp"

// The sanitizer this file is built with: GCC defines __SANITIZE_ADDRESS__ /
// __SANITIZE_THREAD__, Clang (14) only answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_PROBE_ASAN 1
#elif defined(__SANITIZE_THREAD__)
#define TESSERA_PROBE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_PROBE_ASAN 1
#elif __has_feature(thread_sanitizer)
#define TESSERA_PROBE_TSAN 1
#endif
#endif

extern char** environ;

namespace fs = std::filesystem;

namespace tessera::detail {

namespace {

constexpr double kDefaultTimeoutSeconds = 20;

std::atomic<void (*)(ProbeStep)> g_observer{nullptr};

// <dir of libtessera_core.so>/tessera/tessera-plugin-probe: the same place in
// the build tree (build/lib) and in an install (<prefix>/lib).
std::string HelperPath() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&HelperPath), &info) || info.dli_fname == nullptr)
    return "";
  return (fs::path(info.dli_fname).parent_path() / "tessera" / "tessera-plugin-probe").string();
}

bool IsolationOn(const RuntimeOptions& options) {
  if (!options.isolate_plugins) return false;
  if (options.read_environment) {
    if (const char* env = std::getenv("TESSERA_PLUGIN_ISOLATION")) {
      std::string v = env;
      if (v == "off" || v == "0") return false;
      if (!v.empty() && v != "on" && v != "1") {
        static std::once_flag once;
        std::call_once(once, [&] {
          TESSERA_LOG(kWarning, "TESSERA_PLUGIN_ISOLATION=" + v +
                                    " is neither on nor off; plugins are probed (on)");
        });
      }
    }
  }
  return true;
}

double TimeoutSeconds(const RuntimeOptions& options) {
  if (options.plugin_probe_timeout > 0) return options.plugin_probe_timeout;
  if (options.read_environment) {
    if (const char* env = std::getenv("TESSERA_PLUGIN_PROBE_TIMEOUT")) {
      char* end = nullptr;
      double seconds = std::strtod(env, &end);
      if (end != env && *end == 0 && seconds > 0 && seconds < 86400) return seconds;
      static std::once_flag once;
      std::call_once(once, [&] {
        TESSERA_LOG(kWarning, std::string("TESSERA_PLUGIN_PROBE_TIMEOUT=") + env +
                                  " is not a number of seconds; using " +
                                  std::to_string(static_cast<int>(kDefaultTimeoutSeconds)));
      });
    }
  }
  return kDefaultTimeoutSeconds;
}

// "name=type:value", what tessera-plugin-probe parses back.
std::string OptionSpec(const OptionValue& v) {
  std::string text;
  switch (v.type) {
    case TS_VALUE_STRING: text = "string:" + v.string_value; break;
    case TS_VALUE_INT64: text = "int64:" + std::to_string(v.int64_value); break;
    case TS_VALUE_FLOAT64: {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.17g", v.float64_value);
      text = std::string("float64:") + buffer;
      break;
    }
    case TS_VALUE_BOOL: text = v.bool_value ? "bool:true" : "bool:false"; break;
  }
  return v.name + "=" + text;
}

std::vector<std::string> HelperArguments(const std::string& helper, const PluginCandidate& c,
                                         const RuntimeOptions& options) {
  std::vector<std::string> argv = {helper, "--name", c.name, "--file", c.path};
  if (!options.read_environment) argv.push_back("--no-environment");
  auto add = [&](const char* flag, const auto& map) {
    auto it = map.find(c.name);
    if (it == map.end()) return;
    for (const OptionValue& v : it->second) {
      argv.push_back(flag);
      argv.push_back(OptionSpec(v));
    }
  };
  add("--option", options.plugin_options);
  add("--default", options.plugin_option_defaults);
  return argv;
}

// The file's identity, the helper's arguments and the environment (the
// plugin reads it: drivers, TESSERA_<PLUGIN>_* options).
std::string VerdictKey(const std::string& path, const std::vector<std::string>& argv) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  std::string key = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
                    std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec);
  for (const std::string& a : argv) key += '\0' + a;
  key += '\1';
  for (char** e = environ; e && *e; ++e) key += std::string(*e) + '\0';
  return key;
}

// The last non-empty line of what the plugin printed, bounded.
std::string LastWords(const std::string& output) {
  size_t end = output.find_last_not_of("\r\n \t");
  if (end == std::string::npos) return "";
  size_t start = output.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  std::string line = output.substr(start, end + 1 - start);
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  for (char& ch : line)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  return line;
}

ProbeVerdict Judge(const PluginCandidate& c, const ChildResult& r, double timeout) {
  ProbeVerdict verdict;
  bool done = false;
  int last_step = -1;
  bool has_open = false;
  int open_state = 0, open_code = 0;
  size_t start = 0;
  while (start < r.report.size()) {
    size_t end = r.report.find('\n', start);
    if (end == std::string::npos) break;  // a line cut short is no answer
    std::string line = r.report.substr(start, end - start);
    start = end + 1;
    if (line == "done") done = true;
    if (line.rfind("step ", 0) == 0) last_step = std::atoi(line.c_str() + 5);
    if (line.rfind("open-failed ", 0) == 0 &&
        std::sscanf(line.c_str() + 12, "%d %d", &open_state, &open_code) == 2)
      has_open = true;
    if (line.rfind("open-reason ", 0) == 0) verdict.open_reason = line.substr(12);
    if (line.rfind("open-message ", 0) == 0) verdict.open_message = line.substr(13);
  }
  if (last_step < 0 || last_step > static_cast<int>(ProbeStep::kUnload)) last_step = 0;
  verdict.step = static_cast<ProbeStep>(last_step);
  const std::string where = std::string(" while ") + ProbeStepName(verdict.step);
  const std::string file = "plugin file " + c.path;
  if (done && !r.timed_out && r.signal == 0 && (r.exit_code == 0 || r.exit_code == -1)) {
    // A clean failure of a step after loading is reused (see ProbeVerdict);
    // anything malformed is not, and this process opens the plugin itself.
    verdict.open_failed = has_open && open_state >= 0 && open_state <= static_cast<int>(PluginState::kNotProbed) &&
                          open_code > 0 && open_code <= static_cast<int>(StatusCode::kAbiMismatch);
    if (verdict.open_failed) {
      verdict.open_state = static_cast<PluginState>(open_state);
      verdict.open_code = static_cast<StatusCode>(open_code);
    }
    return verdict;
  }
  verdict.survived = false;
  if (r.timed_out) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout);
    verdict.reason = file + " hangs: its probe process did not finish within " + seconds +
                     " s" + where + " and was killed (TESSERA_PLUGIN_PROBE_TIMEOUT sets the limit)";
  } else if (r.signal != 0) {
    verdict.reason = file + " crashed its probe process (" + SignalName(r.signal) + ")" + where;
  } else if (!done) {
    verdict.reason = file + " ended its probe process with exit status " +
                     std::to_string(r.exit_code) + where + " (a plugin must not call exit())";
  } else {
    verdict.step = ProbeStep::kUnload;
    verdict.reason = file + " made its probe process exit with status " +
                     std::to_string(r.exit_code) + " after it was unloaded";
  }
  std::string words = LastWords(r.output);
  if (!words.empty()) verdict.reason += "; its last output: " + words;
  verdict.reason += "; it is not loaded into this process";
  return verdict;
}

}  // namespace

const char* ProbeStepName(ProbeStep step) {
  switch (step) {
    case ProbeStep::kLoad: return "loading it (its library constructors)";
    case ProbeStep::kEntryPoint: return "calling its entry point " TESSERA_PLUGIN_ENTRY_POINT "()";
    case ProbeStep::kGetInfo: return "in Plugin_GetInfo or Compiler_GetTargets";
    case ProbeStep::kClientCreate: return "in Client_Create";
    case ProbeStep::kDevices: return "in Client_GetDevices or Device_GetProperties";
    case ProbeStep::kClientDestroy: return "in Client_Destroy";
    case ProbeStep::kUnload: return "unloading it (its library destructors)";
  }
  return "?";
}

void NoteProbeStep(ProbeStep step) {
  if (auto* observer = g_observer.load(std::memory_order_relaxed)) observer(step);
}

void SetProbeStepObserver(void (*observer)(ProbeStep)) { g_observer.store(observer); }

std::string NotAPluginFileReason(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // dlopen says why
  if (S_ISREG(st.st_mode)) return "";
  const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                     : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  return std::string("not a plugin: the path is ") + kind +
         ", not a shared object file (it is not opened)";
}

ProbeVerdict ProbePluginFile(const PluginCandidate& candidate, const RuntimeOptions& options) {
  if (!IsolationOn(options)) return {};
  const std::string helper = HelperPath();
  if (helper.empty() || ::access(helper.c_str(), X_OK) != 0) {
    static std::once_flag once;
    std::call_once(once, [&] {
      TESSERA_LOG(kWarning, "the plugin probe helper " + (helper.empty() ? "?" : helper) +
                                " is missing: plugins are loaded without isolation (a "
                                "crashing plugin takes this process down)");
    });
    return {};
  }
  std::vector<std::string> argv = HelperArguments(helper, candidate, options);
  const std::string key = VerdictKey(candidate.path, argv);
  static std::mutex mutex;
  static std::map<std::string, ProbeVerdict> verdicts;
  if (!key.empty()) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = verdicts.find(key);
    if (it != verdicts.end()) return it->second;
  }
  const double timeout = TimeoutSeconds(options);
  ChildOptions child;
#if defined(TESSERA_PROBE_ASAN) || defined(TESSERA_PROBE_TSAN)
  // A sanitizer build's probe would catch the plugin's SIGSEGV itself and
  // exit with a report (AddressSanitizer: exit 1; ThreadSanitizer: exit 66,
  // "nested bug in the same thread"), hiding the signal the verdict names:
  // let fatal signals end the probe as they do in a release build.
  {
#if defined(TESSERA_PROBE_ASAN)
    const char* name = "ASAN_OPTIONS";
#else
    const char* name = "TSAN_OPTIONS";
#endif
    const char* value = std::getenv(name);
    child.env.push_back({name, std::string(value ? value : "") +
                                   ":handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:"
                                   "handle_abort=0"});
  }
#endif
  ChildResult r = RunChild(argv, timeout, child);
  ProbeVerdict verdict;
  if (!r.started) {
    TESSERA_LOG(kWarning, "cannot probe plugin file " + candidate.path + ": " + r.error +
                              "; it is loaded without isolation");
    return verdict;  // not remembered: the next try may work
  }
  verdict = Judge(candidate, r, timeout);
  TESSERA_LOG(kDebug, "probe of " + candidate.path + " took " +
                          std::to_string(static_cast<int>(r.seconds * 1000)) + " ms: " +
                          (verdict.survived ? std::string("ok") : verdict.reason));
  if (!key.empty()) {
    std::lock_guard<std::mutex> lock(mutex);
    verdicts[key] = verdict;
  }
  return verdict;
}

void ProbePluginFiles(const std::vector<const PluginCandidate*>& candidates,
                      const RuntimeOptions& options) {
  if (!IsolationOn(options)) return;
  std::vector<const PluginCandidate*> files;
  for (const PluginCandidate* c : candidates)
    if (c && c->path != kEmbeddedPath && c->state != PluginState::kShadowed &&
        NotAPluginFileReason(c->path).empty())
      files.push_back(c);
  if (files.size() < 2) return;  // nothing to overlap: probed when loaded
  // One thread per file; a thread that cannot start (out of memory or of
  // threads) leaves its file to be probed when it is loaded, as a single
  // file is.  (The vector's joinable threads, destroyed by the exception,
  // called std::terminate: Runtime::Create aborted the process.)
  std::vector<std::thread> threads;
  try {
    for (const PluginCandidate* c : files)
      threads.emplace_back([c, &options] { ProbePluginFile(*c, options); });
  } catch (const std::system_error& e) {
    TESSERA_LOG(kDebug, std::string("plugin probes overlap less: a probe thread did not start (") + e.what() +
                            "); the rest are probed when loaded");
  } catch (const std::bad_alloc&) {
    TESSERA_LOG(kDebug, "plugin probes overlap less: out of memory starting a probe thread");
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace tessera::detail
