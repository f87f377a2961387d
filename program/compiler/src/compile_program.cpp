// The public entry points of libtessera_compiler: parse, lower, compile
// through the plugin, finish the image.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

#include "autotune_cache.hpp"
#include "build_id.hpp"
#include "plugin_log.hpp"
#include "lower.hpp"
#include "placement.hpp"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "tessera/ir_version.h"
#include "tessera/trace.hpp"

namespace tessera {

ProgramSource ProgramSource::File(std::string path) {
  ProgramSource s;
  s.name = path;
  s.path = std::move(path);
  return s;
}

ProgramSource ProgramSource::Text(std::string text, std::string name) {
  ProgramSource s;
  s.text = std::move(text);
  s.name = std::move(name);
  return s;
}

namespace {

struct Compiled {
  ProgramImage image;
  CompileOutput output;
};

// The compile options: the caller's, and the plugin's cache folder unless
// the caller chose one.
std::vector<OptionValue> CompileOptionsFor(const CompileTargetInfo& target, const ProgramCompileOptions& options) {
  std::vector<OptionValue> out = options.compiler_options;
  bool declares_cache = false, chosen = false;
  for (const OptionInfo& o : target.options) declares_cache |= o.name == "cache_dir";
  for (const OptionValue& v : out) chosen |= v.name == "cache_dir";
  if (declares_cache && !chosen) {
    std::string dir = DefaultCacheDirectory();
    if (!dir.empty()) out.push_back(OptionValue::String("cache_dir", dir + "/" + target.plugin));
  }
  return out;
}

// The program cache: a compiled image is kept next to the plugin's own
// cache (<cache_dir>/programs/<key>.tsp), keyed by everything that decides
// it, so that a warm compile reads one file and parses no MLIR.  A file
// that does not read back (truncated, edited, another version) is compiled
// again and replaced.
// This library's own build (its file's size and modification time): the
// lowering to Tile IR and the plan are made here, so a rebuilt library must
// not be answered from an older one's programs.
const std::string& CompilerLibraryBuildId() {
  static const std::string id =
      plugin_support::BuildIdOfObjectHolding(reinterpret_cast<const void*>(&CompilerLibraryBuildId));
  return id;
}

// The architecture `target_text` compiles for: the one it names; else,
// given a device, the one the plugin says it compiles for there
// (DeviceInfo::compile_arch, checked against the target's list); else the
// target's default.  `warn`: say so when the plugin's arch is not listed.
std::string ArchCompiledFor(const CompileTargetInfo& target, const std::string& target_text, const Device* device,
                            bool warn = true) {
  const size_t colon = target_text.find(':');
  if (colon != std::string::npos) return target_text.substr(colon + 1);
  if (device && device->valid() && !device->info().compile_arch.empty()) {
    const std::string& arch = device->info().compile_arch;
    const bool listed = std::find(target.archs.begin(), target.archs.end(), arch) != target.archs.end() ||
                        std::find(target.archs.begin(), target.archs.end(), "*") != target.archs.end();
    if (listed) return arch;
    if (warn)
      plugin_support::LogWarning("the " + target.plugin + " plugin says device '" + device->info().name +
                               "' compiles for '" + arch + "', which is not one of target '" + target.name +
                               "''s architectures: scheduling for its default, '" + target.default_arch + "'");
  }
  return target.default_arch;
}

// The cache file of the program (empty without a cache) and its key.
std::string ProgramCacheFile(const ProgramSource& source, const ProgramCompileOptions& options,
                             const std::vector<OptionValue>& compile_options, const std::string& plugin,
                             const CompileTargetInfo& target_info, const std::string& target,
                             const Device* device, std::string* key_out) {
  std::string dir;
  for (const OptionValue& v : compile_options)
    if (v.name == "cache_dir") dir = v.string_value;
  if (dir.empty()) return "";
  // The text compiled (the entry points read a file once: ReadOnce).
  const std::string& text = source.text;
  llvm::SHA256 h;
  auto add = [&](const std::string& s) {
    h.update(s);
    h.update(llvm::StringRef("\0", 1));
  };
  add(TESSERA_IR_VERSION);
  add(std::to_string(kProgramFileVersion));
  add(plugin);
  add(target);
  add(target_info.build_id);      // the plugin's compiler build
  add(CompilerLibraryBuildId());  // and this library's
  add(device ? device->info().name + "|" + device->info().driver_version : "");
  add("arch=" + ArchCompiledFor(target_info, target, device, /*warn=*/false));  // what the schedule was for
  add(options.function);
  add(options.schedule);
  add("overlap=" + std::to_string(options.overlap_chunks));
  add(program::PlacementKey(options));
  for (const OptionValue& v : compile_options) add(v.name + "=" + v.ValueText());
  add(source.name);
  add(text);
  std::string key = llvm::toHex(h.final(), true).substr(0, 32);
  *key_out = key;
  return dir + "/programs/" + key + ".tsp";
}

StatusOr<Compiled> Build(const ProgramSource& source, const ProgramCompileOptions& options, const Compiler& compiler,
                         const std::string& target_text, const Device* device, const std::string& emit) {
  // The phases of a compile, as slices of TESSERA_TRACE (docs/runtime.md,
  // "Tracing"); the plugin's compile is Compiler::Compile's own slice.
  TraceScope phase_all("compile", "compile program");
  phase_all.AddArg("source", source.name);
  phase_all.AddArg("target", target_text);
  const CompileTargetInfo* target = compiler.FindTarget(target_text);
  if (!target) return Status(StatusCode::kInvalidArgument, "the " + compiler.plugin() + " plugin has no target '" + target_text + "'");
  const std::vector<OptionValue> compile_options = CompileOptionsFor(*target, options);
  std::string cache_key;
  const std::string cached =
      emit.empty() ? ProgramCacheFile(source, options, compile_options, compiler.plugin(), *target, target_text, device,
                                      &cache_key)
                   : "";
  if (!cached.empty()) {
    TraceScope phase("compile", "program cache lookup");
    auto image = ProgramImage::ReadFile(cached);
    // A well-formed entry of another program (renamed or copied over this
    // one) would run the wrong code: its own key must be this one.
    if (image.ok() && image->cache_key != cache_key)
      image = Status(StatusCode::kFailedPrecondition,
                     "it was written for another program (cache key '" + image->cache_key + "', not '" + cache_key +
                         "')");
    phase.AddArg("hit", image.ok() ? "yes" : "no");
    if (image.ok()) {
      Compiled c;
      c.image = std::move(*image);
      c.image.cache_key.clear();  // the caller's image is the same, hit or miss
      c.output.plugin = compiler.plugin();
      c.output.target = target_text;
      c.output.log = "cache hit (program)\n";
      return c;
    }
    // Missing is the ordinary miss; anything else (cut, edited, an older
    // format, not a regular file) is dropped: compiled again and rewritten.
    if (image.status().code() != StatusCode::kNotFound)
      plugin_support::LogWarning("the cached program " + cached + " is unusable (" +
                                 image.status().message() + "): compiling it again");
  }
  std::optional<TraceScope> phase;
  phase.emplace("compile", "parse and verify");
  auto parsed = program::ParsedModule::Parse(source, &options);
  if (!parsed.ok()) return parsed.status();
  phase.emplace("compile", "lower (graph -> schedule -> tile)");
  // The target's schedule for the architecture compiled for.
  CompileTargetInfo for_arch = *target;
  for_arch.schedule = program::ScheduleForArch(target->schedule, ArchCompiledFor(*target, target_text, device));
  auto lowered = program::Lower(**parsed, options.function, for_arch, options.schedule, options.overlap_chunks, device);
  if (!lowered.ok()) return lowered.status();
  lowered->image.source_sha256 = SourceSha256(source.text);
  if (!options.mesh.empty()) {  // placed here: recorded for the runners' references
    lowered->image.placed = true;
    lowered->image.placed_in = options.in_shardings;
    lowered->image.placed_out = options.out_shardings;
  }
  phase.reset();
  // An SPMD program of collectives alone has nothing for the plugin to compile.
  const bool launches = std::any_of(lowered->image.steps.begin(), lowered->image.steps.end(),
                                    [](const PlanStep& s) { return s.kind == PlanStep::kLaunch; });
  if (!launches && emit.empty()) {
    Compiled c;
    c.image = std::move(lowered->image);
    c.image.target = target_text;
    c.image.ir_version = TESSERA_IR_VERSION;
    c.output.plugin = compiler.plugin();
    c.output.target = target_text;
    TESSERA_RETURN_IF_ERROR(program::FinishImage(&c.image, c.output));
    return c;
  }
  CompileRequest request;
  request.target = target_text;
  request.ir_version = TESSERA_IR_VERSION;
  request.source_name = (*parsed)->name();
  request.options = compile_options;
  request.emit = emit;
  // The module crosses the plugin boundary as bytecode; writing it is timed
  // (into the log, beside the plugin's read) so the boundary's cost shows.
  const auto writeStart = std::chrono::steady_clock::now();
  {
    TraceScope write("compile", "write bytecode");
    llvm::raw_string_ostream os(request.module);
    mlir::writeBytecodeToFile(*lowered->module, os);
  }
  const double writeMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - writeStart).count();
  auto out = compiler.Compile(request, device);
  if (!out.ok()) return out.status();
  {
    char timing[160];
    std::snprintf(timing, sizeof timing, "hand-off: wrote %zu bytes of bytecode in %.3f ms\n",
                  request.module.size(), writeMs);
    out->log = timing + out->log;
  }
  Compiled c;
  c.image = std::move(lowered->image);
  c.image.target = target_text;
  c.image.ir_version = TESSERA_IR_VERSION;
  if (emit.empty()) {
    TESSERA_RETURN_IF_ERROR(program::FinishImage(&c.image, *out));
    ExecutableImage e;
    e.format = out->format;
    e.data = out->data;
    e.kernels = out->kernels;
    c.image.executables.push_back(std::move(e));
  }
  c.output = std::move(*out);
  if (!cached.empty()) {
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(cached));
    // An entry that is not a regular file (a FIFO, a link, a device) is
    // the cache's own name: removed, so the new entry replaces it instead
    // of being written into it.
    struct stat st {};
    if (::lstat(cached.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
      ::unlink(cached.c_str());
    c.image.cache_key = cache_key;  // the entry's; the caller's image names none
    c.image.WriteFile(cached).IgnoreError();  // a cache that cannot be written is no cache
    c.image.cache_key.clear();
  }
  return c;
}

StatusOr<Compiler> CompilerFor(const ProgramCompileOptions& options) {
  if (options.target.empty())
    return Status(StatusCode::kInvalidArgument,
                  "no target given: write one of the targets tessera-info lists (cpu, vulkan, cuda:sm_90a, ...)");
  return Compiler::ForTarget(options.target, options.plugins);
}

}  // namespace

StatusOr<Program> CompileProgram(const std::vector<Device>& devices, const ProgramSource& source,
                                 const ProgramCompileOptions& options) {
  if (devices.empty() || !devices[0].valid())
    return Status(StatusCode::kInvalidArgument, "CompileProgram: give the device (one per mesh position) to compile for");
  auto image = CompileProgramImage(source, options, &devices[0]);
  if (!image.ok()) return image.status();
  return Program::Create(devices, std::move(*image));
}

StatusOr<ProgramImage> CompileProgramImage(const ProgramSource& given, const ProgramCompileOptions& options,
                                           const Device* device, std::string* log) {
  auto once = program::ReadOnce(given);
  if (!once.ok()) return once.status();
  const ProgramSource& source = *once;
  StatusOr<Compiler> compiler = device ? Compiler::ForDevice(*device) : CompilerFor(options);
  if (!compiler.ok()) return compiler.status();
  std::string target = options.target.empty() ? compiler->targets().front().name : options.target;
  // A schedule tessera-run --autotune / tessera.autotune.search chose for
  // this program on this device (docs/autotune.md), unless one is given.
  if (device && options.schedule.empty()) {
    if (const CompileTargetInfo* info = compiler->FindTarget(target)) {
      bool found = false;
      std::string entry_file;
      std::string tuned = program::TunedSchedule(*device, *info, target, source, options, &found, &entry_file);
      if (found) {
        ProgramCompileOptions tuned_options = options;
        tuned_options.schedule = tuned.empty() ? " " : tuned;  // " ": the default won
        auto built = Build(source, tuned_options, *compiler, target, device, "");
        if (built.ok()) {
          if (log) *log = "autotuned schedule \"" + tuned + "\"\n" + built->output.log;
          return std::move(built->image);
        }
        // A cache entry the user did not write must not break the compile
        // (an edited or foreign .tat whose schedule the pass refuses): say
        // which file, then compile as if there were none (docs/autotune.md).
        plugin_support::LogWarning("the autotune cache entry " + entry_file + " is ignored: its schedule \"" + tuned +
                                   "\" does not compile (" + built.status().message() +
                                   "); compiling with the default schedule");
      }
    }
  }
  auto built = Build(source, options, *compiler, target, device, "");
  if (!built.ok()) return built.status();
  if (log) *log = built->output.log;
  return std::move(built->image);
}

StatusOr<int64_t> ProgramDevicesNeeded(const ProgramSource& source, const std::string& function) {
  auto parsed = program::ParsedModule::Parse(source);
  if (!parsed.ok()) return parsed.status();
  return program::DevicesNeeded(**parsed, function);
}

StatusOr<CompileOutput> EmitProgram(const ProgramSource& source, const ProgramCompileOptions& options,
                                    const std::string& emit) {
  auto compiler = CompilerFor(options);
  if (!compiler.ok()) return compiler.status();
  auto once = program::ReadOnce(source);
  if (!once.ok()) return once.status();
  auto built = Build(*once, options, *compiler, options.target, nullptr, emit);
  if (!built.ok()) return built.status();
  return std::move(built->output);
}

StatusOr<std::vector<std::string>> ListProgramFunctions(const ProgramSource& source) {
  auto parsed = program::ParsedModule::Parse(source);
  if (!parsed.ok()) return parsed.status();
  return program::Candidates((*parsed)->module());
}

}  // namespace tessera
