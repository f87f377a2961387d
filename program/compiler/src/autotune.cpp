// Autotuning (tessera/autotune.hpp, docs/autotune.md): trials of schedules
// measured on the device, and the cache of the winners.
//
// A cache entry (<cache>/autotune/<key>.tat) is a small text file:
//   tessera-autotune 1
//   key <hex>            the file's own key
//   device <name>|<driver>|<api>
//   plugin <name>|<version>|<compiler build>
//   target <target>
//   program <sha256 of the text>
//   function <name>
//   options <compiler options>
//   shapes <parameter shapes>
//   schedule <the winner's options>
//   time_ms <median>
//   default_ms <the default schedule's median>
//   trials <n>
//   checksum <fnv-1a 64 of every line above>
// written by rename (plugin_support::WriteFileAtomically).  An entry whose
// header, checksum or fields do not match what is looked up (another
// version, an edit, a cut, a file copied from another machine) is ignored
// with a warning and replaced by the next search.
#include "tessera/autotune.hpp"

#include <mutex>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>

#include "autotune_cache.hpp"
#include "parse.hpp"
#include "schedule_check.hpp"
#include "file_io.hpp"
#include "plugin_log.hpp"
#include "tessera/ir_version.h"
#include "tessera/printable.hpp"
#include "mlir/Pass/Pass.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"

namespace tessera {
namespace {

constexpr const char* kHeader = "tessera-autotune 1";

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string Hex64(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

std::string Sha256Hex(const std::string& s) {
  llvm::SHA256 h;
  h.update(s);
  return llvm::toHex(h.final(), true);
}

StatusOr<std::string> SourceText(const ProgramSource& source) {
  auto once = program::ReadOnce(source);
  if (!once.ok()) return once.status();
  return std::move(once->text);
}

std::string OptionsText(const ProgramCompileOptions& options) {
  std::string s;
  for (const OptionValue& v : options.compiler_options)
    if (v.name != "cache_dir") s += (s.empty() ? "" : " ") + v.name + "=" + v.ValueText();
  return s;
}

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// The device's plugin's own version (Plugin_GetInfo), "" when it does not say.
std::string PluginVersion(const Device& device) {
  const TsPluginApi* api = device.runtime().plugin_api();
  if (!api || !api->Plugin_GetInfo) return "";
  TsPlugin_GetInfo_Args args;
  std::memset(&args, 0, sizeof args);
  args.struct_size = TS_PLUGIN_GETINFO_ARGS_MIN_STRUCT_SIZE;
  if (TsError* e = api->Plugin_GetInfo(&args)) {
    if (api->Error_Destroy) {
      TsError_Destroy_Args d;
      std::memset(&d, 0, sizeof d);
      d.struct_size = sizeof d;
      d.error = e;
      api->Error_Destroy(&d);
    }
    return "";
  }
  return args.plugin_version ? args.plugin_version : "";
}

}  // namespace

namespace program {

// The fields that name an entry, in file order.
std::vector<std::pair<std::string, std::string>> AutotuneKeyFields(const Device& device,
                                                                   const CompileTargetInfo& target,
                                                                   const std::string& target_text,
                                                                   const std::string& program_text,
                                                                   const ProgramCompileOptions& options) {
  const DeviceInfo& info = device.info();
  return {
      {"device", OneLine(info.name + "|" + info.driver_version + "|" + info.api_version)},
      {"plugin", OneLine(target.plugin + "|" + PluginVersion(device) + "|" + target.build_id)},
      {"target", OneLine(target_text)},
      {"program", Sha256Hex(std::string(TESSERA_IR_VERSION) + "\n" + program_text)},
      {"function", OneLine(options.function)},
      {"options", OneLine(OptionsText(options))},
  };
}

std::string AutotuneCacheFile(const std::vector<std::pair<std::string, std::string>>& fields, std::string* key) {
  std::string dir = DefaultCacheDirectory();
  std::string all;
  for (const auto& f : fields) all += f.first + " " + f.second + "\n";
  *key = Sha256Hex(all).substr(0, 32);
  if (dir.empty()) return "";
  return dir + "/autotune/" + *key + ".tat";
}

// Reads an entry; NOT_FOUND when missing, DATA_LOSS (with the reason) when
// it is unusable.
StatusOr<AutotuneResult> ReadAutotuneEntry(const std::string& file, const std::string& key,
                                           const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string text;
  auto r = plugin_support::ReadBoundedFile(file, 1 << 16, &text);
  if (!r.ok()) {
    if (r.status == plugin_support::FileReadStatus::kCannotOpen && !llvm::sys::fs::exists(file))
      return Status(StatusCode::kNotFound, "no entry");
    return Status(StatusCode::kDataLoss, r.message);
  }
  std::vector<std::string> lines;
  llvm::SmallVector<llvm::StringRef, 16> parts;
  llvm::StringRef(text).split(parts, '\n', -1, false);
  for (auto p : parts) lines.push_back(p.str());
  if (lines.empty() || lines[0] != kHeader)
    return Status(StatusCode::kDataLoss, "not a version-1 autotune entry (first line '" +
                                             (lines.empty() ? std::string() : Printable(lines[0], 40)) + "')");
  // The checksum covers every line before it.
  std::string body;
  std::map<std::string, std::string> values;
  bool checked = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind("checksum ", 0) == 0) {
      if (l.substr(9) != Hex64(Fnv1a(body)))
        return Status(StatusCode::kDataLoss, "its checksum does not match its contents");
      checked = true;
      if (i + 1 != lines.size()) return Status(StatusCode::kDataLoss, "lines after its checksum");
      break;
    }
    body += l + "\n";
    size_t sp = l.find(' ');
    if (i > 0) values[l.substr(0, sp)] = sp == std::string::npos ? "" : l.substr(sp + 1);
  }
  if (!checked) return Status(StatusCode::kDataLoss, "no checksum (cut short?)");
  if (values["key"] != key) return Status(StatusCode::kDataLoss, "it is the entry of another key (" + values["key"] + ")");
  for (const auto& f : fields)
    if (values[f.first] != f.second)
      return Status(StatusCode::kDataLoss, "it was tuned for another " + f.first + " ('" + values[f.first] +
                                               "', this is '" + f.second + "')");
  AutotuneResult out;
  out.schedule = values["schedule"];
  out.time_ms = std::atof(values["time_ms"].c_str());
  out.default_ms = std::atof(values["default_ms"].c_str());
  out.from_cache = true;
  out.cache_file = file;
  return out;
}

std::string WriteAutotuneEntry(const std::string& file, const std::string& key,
                               const std::vector<std::pair<std::string, std::string>>& fields,
                               const std::string& shapes, const AutotuneResult& result) {
  std::string body = std::string(kHeader) + "\n";
  body += "key " + key + "\n";
  for (const auto& f : fields) body += f.first + " " + f.second + "\n";
  char num[64];
  body += "shapes " + OneLine(shapes) + "\n";
  body += "schedule " + OneLine(result.schedule) + "\n";
  std::snprintf(num, sizeof num, "%.6f", result.time_ms);
  body += std::string("time_ms ") + num + "\n";
  std::snprintf(num, sizeof num, "%.6f", result.default_ms);
  body += std::string("default_ms ") + num + "\n";
  body += "trials " + std::to_string(result.trials.size()) + "\n";
  body += "checksum " + Hex64(Fnv1a(body)) + "\n";
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(file));
  return plugin_support::WriteFileAtomically(file, body.data(), body.size());
}

bool AutotuneReuseEnabled() {
  const char* e = std::getenv("TESSERA_AUTOTUNE");
  if (!e) return true;
  std::string v = e;
  if (v == "off" || v == "0" || v == "false" || v == "no") return false;
  if (!(v.empty() || v == "on" || v == "1" || v == "true" || v == "yes")) {
    static std::once_flag warned;  // once per process, not per compile
    std::call_once(warned, [&] {
      plugin_support::LogWarning("TESSERA_AUTOTUNE=" + v + " is neither on (on, 1, true, yes) nor off (off, 0, " +
                                 "false, no): the autotune cache is used");
    });
  }
  return true;
}

std::string TunedSchedule(const Device& device, const CompileTargetInfo& target, const std::string& target_text,
                          const ProgramSource& source, const ProgramCompileOptions& options, bool* found,
                          std::string* entry_file) {
  *found = false;
  if (!AutotuneReuseEnabled() || !options.schedule.empty()) return "";
  const auto start = Clock::now();
  auto text = SourceText(source);
  if (!text.ok()) return "";
  auto fields = AutotuneKeyFields(device, target, target_text, *text, options);
  std::string key;
  std::string file = AutotuneCacheFile(fields, &key);
  if (file.empty()) return "";
  auto entry = ReadAutotuneEntry(file, key, fields);
  if (!entry.ok()) {
    if (entry.status().code() != StatusCode::kNotFound)
      plugin_support::LogWarning("the autotune cache entry " + file + " is ignored: " + entry.status().message());
    return "";
  }
  *found = true;
  *entry_file = file;
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3f", MsSince(start));
  plugin_support::LogDebug("autotune cache hit for " + source.name + (options.function.empty() ? "" : ":" + options.function) +
                           " on " + device.info().name + ": schedule \"" + entry->schedule + "\" (" + file +
                           ", looked up in " + ms + " ms)");
  return entry->schedule;
}

}  // namespace program

AutotuneSpace DefaultAutotuneSpace(const std::string& target, const std::string& target_schedule) {
  if (target.rfind("cpu", 0) == 0) {
    // The register tiles around the target's own: 16-lane (AVX-512) tiles
    // where the plugin schedules 32 columns, 8-lane (AVX2) ones otherwise.
    // The schedule's own micro-n (a token "micro-n=V"): 32 and up are zmm tiles.
    long micro_n = 0;
    llvm::SmallVector<llvm::StringRef, 8> tokens;
    llvm::StringRef(target_schedule).split(tokens, ' ', -1, false);
    for (llvm::StringRef t : tokens)
      if (t.consume_front("micro-n=")) t.getAsInteger(10, micro_n);
    const bool zmm = micro_n >= 32;
    return {{"tile-m", {"72", "96", "144", "192", "288"}},
            {"tile-n", {"1024", "2048", "4096"}},
            {"tile-k", {"128", "256", "384", "512"}},
            {"micro-m", zmm ? std::vector<std::string>{"6", "8", "12"} : std::vector<std::string>{"4", "6"}},
            {"micro-n", zmm ? std::vector<std::string>{"16", "32", "48"} : std::vector<std::string>{"8", "16"}},
            {"row-tile", {"32", "64", "128"}}};
  }
  AutotuneSpace gpu = {{"tile-m", {"32", "64", "128"}},
                       {"tile-n", {"32", "64", "128"}},
                       {"tile-k", {"8", "16", "32"}},
                       {"micro-m", {"1", "2", "4"}},
                       {"micro-n", {"1", "2", "4"}}};
  // A target whose schedule picks matmul units (cuda: mma=sync, and
  // sm_90a:mma=wgmma; hip: gfx90a:mma=mfma, gfx1100:mma=wmma) also tries the lanes' FMAs
  // instead, and the wgmma pipeline's depth and warp specialization.
  if (target_schedule.find("mma=") != std::string::npos) {
    std::vector<std::string> units = {"none"};
    for (const char* unit : {"sync", "wgmma", "mfma", "wmma"})
      if (target_schedule.find(std::string("mma=") + unit) != std::string::npos) units.push_back(unit);
    if (target_schedule.find("mma=wgmma") != std::string::npos) gpu.push_back({"stages", {"2", "3", "4", "6"}});
    // cuda sm_90a: the warp-specialized form against the one where every
    // warpgroup waits, issues the next copy and multiplies.
    if (target_schedule.find("warp-specialize=") != std::string::npos) gpu.push_back({"warp-specialize", {"1", "0"}});
    gpu.insert(gpu.begin(), {"mma", units});
  }
  return gpu;
}

namespace {

// One point of a space, "key=value": "" when the compiler takes it as a
// --tessera-graph-to-schedule option and value, else why not.  A typo
// (tile_m for tile-m) failed every trial, and the default it then chose was
// cached as the answer; a value with a space added an option of its own.
std::string CheckSpacePoint(const std::string& key, const std::string& value) {
  if (key.empty() || value.empty() || key.find_first_of(" =") != std::string::npos ||
      value.find_first_of(" ,=") != std::string::npos)
    return "'" + key + "=" + value + "': a key and a value, neither empty, without spaces, '=' or ','";
  const std::string point = key + "=" + value;
  // Checked first: MLIR's parser prints its own complaint to stderr.
  if (std::string e = program::CheckSchedule(point); !e.empty()) return e;
  std::unique_ptr<mlir::Pass> pass = graph::createGraphToSchedule(graph::GraphToScheduleOptions{});
  if (mlir::failed(pass->initializeOptions(point)))
    return point +
           " is not a --tessera-graph-to-schedule option and value (tessera-run --help lists the keys: "
           "tile-m, micro-m, ...)";
  return "";
}

}  // namespace

StatusOr<AutotuneSpace> ParseAutotuneSpace(const std::string& text) {
  AutotuneSpace space;
  llvm::SmallVector<llvm::StringRef, 8> items;
  llvm::StringRef(text).split(items, ' ', -1, false);
  for (llvm::StringRef item : items) {
    auto [key, values] = item.split('=');
    if (key.empty() || values.empty())
      return Status(StatusCode::kInvalidArgument,
                    "autotune space '" + text + "': write KEY=V1,V2,... separated by spaces (tile-m=96,144)");
    std::vector<std::string> vs;
    llvm::SmallVector<llvm::StringRef, 8> parts;
    values.split(parts, ',', -1, false);
    for (auto v : parts) {
      if (std::string e = CheckSpacePoint(key.str(), v.str()); !e.empty())
        return Status(StatusCode::kInvalidArgument, "autotune space '" + text + "': " + e);
      vs.push_back(v.str());
    }
    space.push_back({key.str(), vs});
  }
  return space;
}

StatusOr<AutotuneResult> LookupAutotuneCache(const Device& device, const ProgramSource& source,
                                             const ProgramCompileOptions& options) {
  const auto start = Clock::now();
  auto compiler = Compiler::ForDevice(device);
  if (!compiler.ok()) return compiler.status();
  std::string target = options.target.empty() ? compiler->targets().front().name : options.target;
  const CompileTargetInfo* info = compiler->FindTarget(target);
  if (!info) return Status(StatusCode::kInvalidArgument, "the " + compiler->plugin() + " plugin has no target '" + target + "'");
  auto text = SourceText(source);
  if (!text.ok()) return text.status();
  auto fields = program::AutotuneKeyFields(device, *info, target, *text, options);
  std::string key;
  std::string file = program::AutotuneCacheFile(fields, &key);
  if (file.empty()) return Status(StatusCode::kNotFound, "no cache folder (TESSERA_CACHE_DIR, XDG_CACHE_HOME, HOME unset)");
  auto entry = program::ReadAutotuneEntry(file, key, fields);
  if (!entry.ok()) {
    if (entry.status().code() == StatusCode::kNotFound)
      return Status(StatusCode::kNotFound, "no autotune cache entry for " + source.name);
    plugin_support::LogWarning("the autotune cache entry " + file + " is ignored: " + entry.status().message());
    return Status(StatusCode::kNotFound, "the autotune cache entry " + file + " is unusable: " + entry.status().message());
  }
  entry->lookup_ms = MsSince(start);
  return entry;
}

namespace {

// Buffers for every parameter, filled with small deterministic values.
struct Workspace {
  std::vector<Buffer> buffers;
  std::vector<KernelArg> args;
};

StatusOr<Workspace> MakeWorkspace(const Device& device, const Program& program) {
  Workspace w;
  w.buffers.reserve(program.params().size());
  for (const ParamSpec& p : program.params()) {
    if (!p.is_buffer())
      return Status(StatusCode::kUnsupported, "autotune: parameter " + p.name +
                                                  " is a scalar (a Tile IR kernel: its schedule is its own, nothing to tune)");
    auto b = device.allocate(std::max<uint64_t>(p.bytes, 1));
    if (!b.ok()) return b.status();
    std::string host(b->size(), '\0');
    if (p.dtype == "f32") {
      float* f = reinterpret_cast<float*>(host.data());
      for (size_t i = 0; i < host.size() / 4; ++i) f[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * 0.0625f;
    } else if (p.dtype == "f64") {
      double* f = reinterpret_cast<double*>(host.data());
      for (size_t i = 0; i < host.size() / 8; ++i) f[i] = static_cast<double>(static_cast<int>(i % 17) - 8) * 0.0625;
    }
    TESSERA_RETURN_IF_ERROR(copy(MemoryRef(*b), MemoryRef(static_cast<const void*>(host.data())), host.size()));
    w.buffers.push_back(std::move(*b));
  }
  for (const Buffer& b : w.buffers) w.args.push_back(KernelArg::buffer(b));
  return w;
}

std::string ShapesText(const Program& program) {
  std::string s;
  for (const ParamSpec& p : program.params()) {
    s += (s.empty() ? "" : ",") + p.name + ":" + p.dtype + "[";
    for (size_t i = 0; i < p.shape.size(); ++i) s += (i ? "x" : "") + std::to_string(p.shape[i]);
    s += "]";
  }
  return s;
}

}  // namespace

StatusOr<AutotuneResult> Autotune(const Device& device, const ProgramSource& source,
                                  const ProgramCompileOptions& options, const AutotuneOptions& autotune) {
  return Autotune(std::vector<Device>{device}, source, options, autotune);
}

StatusOr<AutotuneResult> Autotune(const std::vector<Device>& all_devices, const ProgramSource& given,
                                  const ProgramCompileOptions& options, const AutotuneOptions& autotune) {
  if (all_devices.empty() || !all_devices.front().valid())
    return Status(StatusCode::kInvalidArgument, "autotune: no device");
  // Read once: every trial compiles, and the cache entry is keyed by, the
  // same text.
  auto once = program::ReadOnce(given);
  if (!once.ok()) return once.status();
  const ProgramSource& source = *once;
  const Device& device = all_devices.front();
  if (!options.schedule.empty())
    return Status(StatusCode::kInvalidArgument,
                  "autotune: the schedule is what is searched; give the values to try as the space, not options.schedule");
  // Every point of a space given is checked before anything else, the
  // cache's answer included (a space with a typo is an error, never the
  // cached choice).
  for (const auto& [key, values] : autotune.space) {
    if (values.empty()) return Status(StatusCode::kInvalidArgument, "autotune: no values to try for " + key);
    for (const std::string& v : values)
      if (std::string e = CheckSpacePoint(key, v); !e.empty())
        return Status(StatusCode::kInvalidArgument, "autotune space: " + e);
  }
  if (autotune.use_cache) {
    auto hit = LookupAutotuneCache(device, source, options);
    if (hit.ok()) return hit;
  }
  const auto start = Clock::now();
  // An SPMD program runs on one device per mesh position.
  auto needed = ProgramDevicesNeeded(source, options.function);
  if (!needed.ok()) return needed.status();
  if (static_cast<size_t>(*needed) > all_devices.size())
    return Status(StatusCode::kInvalidArgument,
                  "autotune: the program's mesh needs " + std::to_string(*needed) + " devices; " +
                      std::to_string(all_devices.size()) + " given");
  const std::vector<Device> devices(all_devices.begin(), all_devices.begin() + *needed);
  auto compiler = Compiler::ForDevice(device);
  if (!compiler.ok()) return compiler.status();
  const std::string target = options.target.empty() ? compiler->targets().front().name : options.target;
  std::string target_schedule;
  for (const CompileTargetInfo& t : compiler->targets())
    if (target == t.name || target.rfind(t.name + ":", 0) == 0) target_schedule = t.schedule;
  AutotuneSpace space = autotune.space.empty() ? DefaultAutotuneSpace(target, target_schedule) : autotune.space;
  for (const auto& [key, values] : space)
    if (values.empty()) return Status(StatusCode::kInvalidArgument, "autotune: no values to try for " + key);

  // Counts a search can finish: warmup + repeats overflowed an int at
  // 2^31 - 1 (no run was timed, and the median of none crashed).
  constexpr int kMaxRuns = 100000;
  for (const auto& [name, value] : {std::pair<const char*, int>{"repeats", autotune.repeats},
                                    {"warmup", autotune.warmup},
                                    {"confirm", autotune.confirm}})
    if (value > kMaxRuns)
      return Status(StatusCode::kInvalidArgument, std::string("autotune: ") + name + " " + std::to_string(value) +
                                                      ": give at most " + std::to_string(kMaxRuns));
  const int repeats = std::max(1, autotune.repeats);
  const int max_trials = std::max(1, autotune.max_trials);
  const bool random = autotune.strategy == "random";
  if (!random && autotune.strategy != "coordinate")
    return Status(StatusCode::kInvalidArgument,
                  "autotune: strategy '" + autotune.strategy + "': write coordinate or random");
  AutotuneResult result;
  result.time_ms = -1;
  std::vector<Workspace> workspaces;  // one per device, made at the first compile
  std::string shapes;
  std::vector<Stream> streams;
  for (const Device& d : devices) {
    auto stream = d.create_stream();
    if (!stream.ok()) return stream.status();
    streams.push_back(std::move(*stream));
  }
  std::map<std::string, double> measured;  // schedule -> median (< 0 failed)
  std::map<std::string, std::string> compiled;  // the kernels' digest -> the schedule measured with them
  std::set<std::string> twins;                  // schedules whose kernels were measured under another
  auto out_of_budget = [&] {
    return static_cast<int>(result.trials.size()) >= max_trials ||
           (autotune.max_seconds > 0 && !result.trials.empty() && MsSince(start) > autotune.max_seconds * 1000);
  };
  auto median = [](std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  };
  auto run_once = [&](const Program& program) -> StatusOr<double> {
    const auto t0 = Clock::now();
    if (devices.size() == 1) {
      TESSERA_RETURN_IF_ERROR(program.Run(streams[0], workspaces[0].args));
    } else {
      std::vector<std::vector<KernelArg>> args;
      for (const Workspace& w : workspaces) args.push_back(w.args);
      TESSERA_RETURN_IF_ERROR(program.Run(streams, args));
    }
    for (const Stream& s : streams) TESSERA_RETURN_IF_ERROR(s.synchronize());
    return MsSince(t0);
  };
  // One trial: compile, warm up, time `repeats` runs; the median.  An error
  // of the default schedule is the program's own (returned); of another,
  // a failed trial.
  auto measure = [&](const std::string& schedule) -> StatusOr<double> {
    if (auto it = measured.find(schedule); it != measured.end()) return it->second;
    AutotuneTrial trial;
    trial.schedule = schedule;
    trial.time_ms = -1;
    ProgramCompileOptions o = options;
    o.schedule = schedule.empty() ? " " : schedule;  // " ": the default, never the cached choice
    auto program = CompileProgram(devices, source, o);
    Status st = program.status();
    if (st.ok() && program->devices().size() != devices.size())
      return Status(StatusCode::kInternal, "autotune: the program was loaded on " +
                                               std::to_string(program->devices().size()) + " devices, not " +
                                               std::to_string(devices.size()));
    if (st.ok()) {
      // Options that change nothing (a tile clamped to the problem, a key's
      // default value) compile to the same kernels: not measured again, and
      // never a winner over their twin (whose time is all noise apart).
      std::string digest;
      for (const ExecutableImage& e : program->image().executables) digest += e.format + Hex64(Fnv1a(e.data));
      auto [it, fresh] = compiled.emplace(digest, schedule);
      if (!fresh) {
        trial.duplicate = true;
        trial.same_as = it->second;
        trial.time_ms = measured.at(it->second);
        measured[schedule] = trial.time_ms;
        twins.insert(schedule);
        result.trials.push_back(trial);
        return trial.time_ms;
      }
    }
    if (st.ok() && workspaces.empty()) {
      // SPMD: params() are each device's local parts; every device gets
      // its own buffers of them.
      for (const Device& d : devices) {
        auto w = MakeWorkspace(d, *program);
        if (!w.ok()) return w.status();
        workspaces.push_back(std::move(*w));
      }
      shapes = ShapesText(*program);
    }
    std::vector<double> times;
    const int warmup = std::max(0, autotune.warmup);
    for (int i = 0; st.ok() && i < warmup + repeats; ++i) {
      auto t = run_once(*program);
      if (!t.ok()) st = t.status();
      else if (i >= warmup) times.push_back(*t);
      // The budget holds inside a trial too, once one run is timed.
      if (autotune.max_seconds > 0 && !times.empty() && MsSince(start) > autotune.max_seconds * 1000) break;
    }
    if (st.ok() && times.empty()) st = Status(StatusCode::kInternal, "autotune: no run of the trial was timed");
    if (!st.ok()) {
      if (schedule.empty()) return st;
      trial.error = st.message();
    } else {
      trial.time_ms = median(times);
    }
    measured[schedule] = trial.time_ms;
    result.trials.push_back(trial);
    if (schedule.empty()) result.default_ms = trial.time_ms;
    if (trial.time_ms >= 0 && (result.time_ms < 0 || trial.time_ms < result.time_ms)) {
      result.time_ms = trial.time_ms;
      result.schedule = schedule;
    }
    return trial.time_ms;
  };
  auto text_of = [&](const std::vector<int>& choice) {  // -1: the key left at the target's default
    std::string s;
    for (size_t k = 0; k < space.size(); ++k)
      if (choice[k] >= 0) s += (s.empty() ? "" : " ") + space[k].first + "=" + space[k].second[choice[k]];
    return s;
  };

  // The target's own schedule first.
  if (auto t = measure(""); !t.ok()) return t.status();
  if (random) {
    // Points of the space in a seeded order.
    uint64_t points = 1;
    for (const auto& kv : space) points = std::min<uint64_t>(points * kv.second.size(), uint64_t{1} << 20);
    std::vector<uint64_t> order(points);
    for (uint64_t i = 0; i < points; ++i) order[i] = i;
    std::mt19937_64 rng(autotune.seed);
    std::shuffle(order.begin(), order.end(), rng);
    for (uint64_t idx : order) {
      if (out_of_budget()) break;
      std::vector<int> choice(space.size());
      for (size_t k = 0; k < space.size(); ++k) {
        choice[k] = static_cast<int>(idx % space[k].second.size());
        idx /= space[k].second.size();
      }
      if (auto t = measure(text_of(choice)); !t.ok()) return t.status();
    }
  } else {
    // Coordinate descent from the default: each key in turn takes each of
    // its values with the others at the best so far; passes repeat while
    // one improves.
    std::vector<int> best(space.size(), -1);
    double best_ms = result.time_ms;
    for (bool improved = true; improved && !out_of_budget();) {
      improved = false;
      for (size_t k = 0; k < space.size() && !out_of_budget(); ++k) {
        for (int v = 0; v < static_cast<int>(space[k].second.size()) && !out_of_budget(); ++v) {
          std::vector<int> choice = best;
          choice[k] = v;
          auto t = measure(text_of(choice));
          if (!t.ok()) return t.status();
          if (*t >= 0 && *t < best_ms) {
            best_ms = *t;
            best = choice;
            improved = true;
          }
        }
      }
    }
  }

  // Confirmation: the best few and the default again, run in turns (one
  // run each per round), so that a change of load between their trials
  // does not decide; the medians of these rounds are the result.
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [schedule, ms] : measured)
    if (ms >= 0 && !schedule.empty() && !twins.count(schedule)) ranked.push_back({ms, schedule});
  if (autotune.confirm > 0 && !ranked.empty()) {
    std::sort(ranked.begin(), ranked.end());
    std::vector<std::string> finalists{""};
    for (size_t i = 0; i < ranked.size() && static_cast<int>(i) < autotune.confirm; ++i)
      finalists.push_back(ranked[i].second);
    std::vector<Program> programs;  // compiled again: program cache hits
    for (const std::string& schedule : finalists) {
      ProgramCompileOptions o = options;
      o.schedule = schedule.empty() ? " " : schedule;
      auto program = CompileProgram(devices, source, o);
      if (!program.ok()) return program.status();
      programs.push_back(std::move(*program));
    }
    for (size_t f = 0; f < finalists.size(); ++f)  // warm again
      for (int i = 0; i < autotune.warmup; ++i)
        if (auto t = run_once(programs[f]); !t.ok()) return t.status();
    std::vector<std::vector<double>> times(finalists.size());
    for (int r = 0; r < repeats; ++r)
      for (size_t f = 0; f < finalists.size(); ++f) {
        auto t = run_once(programs[f]);
        if (!t.ok()) return t.status();
        times[f].push_back(*t);
      }
    result.default_ms = median(times[0]);
    result.time_ms = result.default_ms;
    result.schedule = "";
    for (size_t f = 1; f < finalists.size(); ++f) {
      const double ms = median(times[f]);
      if (ms < result.time_ms) {
        result.time_ms = ms;
        result.schedule = finalists[f];
      }
    }
  }
  // The default stays unless the winner is faster by min_gain: a gain
  // within the noise is no reason to leave the target's own schedule.
  if (!result.schedule.empty() && result.default_ms > 0 &&
      result.time_ms > result.default_ms * (1 - std::max(0.0, autotune.min_gain))) {
    result.schedule = "";
    result.time_ms = result.default_ms;
  }
  result.search_seconds = MsSince(start) / 1000;
  if (autotune.write_cache) {
    const CompileTargetInfo* info = compiler->FindTarget(target);
    auto text = SourceText(source);
    if (info && text.ok()) {
      auto fields = program::AutotuneKeyFields(device, *info, target, *text, options);
      std::string key;
      std::string file = program::AutotuneCacheFile(fields, &key);
      if (!file.empty()) {
        std::string err = program::WriteAutotuneEntry(file, key, fields, shapes, result);
        if (err.empty()) result.cache_file = file;
        else plugin_support::LogWarning("autotune: the cache entry " + file + " was not written: " + err);
      }
    }
  }
  return result;
}

}  // namespace tessera
