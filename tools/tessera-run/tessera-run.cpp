// tessera-run: compile a Tessera program for the selected backend (or load
// one tessera-compile made), run it on generated or given inputs, check it
// against the reference interpreter, report the time per iteration.
// A thin main over libtessera (Program), libtessera_compiler
// (CompileProgram) and the reference interpreter (ir/lib/Reference);
// `tessera-run --help` lists the options and exit codes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.hpp"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "npy.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "training.hpp"
#include "tune.hpp"
#include "watchdog.hpp"
#include "tessera/Dialect/Graph/Transforms/Grad.h"
#include "tessera/Dialect/Graph/Transforms/ShardPropagation.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "tessera/InitAll.h"
#include "tessera/element_types.hpp"
#include "tessera/program_compiler.hpp"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "tessera/tcp.hpp"
#ifdef TESSERA_HAVE_MPI
#include "tessera/mpi.hpp"
#endif

using namespace tessera;
using namespace tessera::run;

namespace {

// Across processes (--mpi): this process's rank, and whether a failure is
// one every rank reached the same way (they end together, cleanly) rather
// than one that may leave the others waiting in a collective (MPI_Abort).
std::shared_ptr<ProcessGroup> g_processes;
int g_rank = 0;
bool g_consistent_failure = false;

int Fail(int rc, const std::string& what) {
  if (g_processes) std::fprintf(stderr, "tessera-run (rank %d): %s\n", g_rank, what.c_str());
  else std::fprintf(stderr, "tessera-run: %s\n", what.c_str());
  return rc;
}
// A failure every process finds alike (rank 0 says it).
int FailAll(int rc, const std::string& what) {
  g_consistent_failure = true;
  if (g_rank == 0) std::fprintf(stderr, "tessera-run: %s\n", what.c_str());
  return rc;
}

// The MPI world size when launched by mpirun (Open MPI, or a PMI launcher),
// else 0.
int LaunchedProcesses() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* e = std::getenv(v)) return std::atoi(e);
  return 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A number as given (1.5, 1e+20, 4294967296): enough digits to tell it.
std::string FormatNumber(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.15g", v);
  return text;
}

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + (s[i] < 0 ? std::string("?") : std::to_string(s[i]));
  return r + "]";
}

std::string ShardingText(const Sharding& s, const ProgramImage& im) {
  std::string r;
  for (size_t d = 0; d < s.dim_axes.size(); ++d) {
    if (s.dim_axes[d].empty()) continue;
    r += (r.empty() ? "" : ", ") + ("dim " + std::to_string(d) + " over ");
    for (size_t k = 0; k < s.dim_axes[d].size(); ++k) r += (k ? " x " : "") + im.mesh_axes[s.dim_axes[d][k]];
  }
  for (int a : s.partial_sum_axes) r += (r.empty() ? "" : ", ") + ("partial sums over " + im.mesh_axes[a]);
  return r.empty() ? "replicated" : r;
}

bool RequestsVulkan() {
  const char* env = std::getenv("TESSERA_BACKEND");
  return env && std::strstr(env, "vulkan");
}

// The source module the reference runs on (null when there is none).
mlir::OwningOpRef<mlir::ModuleOp> ParseSource(const ProgramSource& source, mlir::MLIRContext* ctx,
                                              const ProgramCompileOptions& placement) {
  llvm::SourceMgr files;  // its locations name the file
  files.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source.text, source.name), llvm::SMLoc());
  auto m = mlir::parseSourceFile<mlir::ModuleOp>(files, ctx);
  // The program as it is compiled: declared gradients built, calls inlined,
  // placed on the --mesh given.
  if (m && mlir::failed(tessera::graph::expandGradients(*m))) return nullptr;
  if (m && !tessera::program::PlaceOnMesh(*m, source.name, placement).ok()) return nullptr;
  if (m && mlir::failed(tessera::graph::propagateGlobalViewShardings(*m))) return nullptr;
  return m;
}

// The source of a compiled image for its reference: read once, and only
// when it is still the text compiled (source_sha256); else *why says what.
StatusOr<ProgramSource> SourceOfImage(const ProgramImage& im) {
  if (!EndsWith(im.source_name, ".mlir"))
    return Status(StatusCode::kNotFound, "no source of " + im.function + " (" + im.source_name + ") to run the reference on");
  auto source = ProgramSource::Read(im.source_name);
  if (!source.ok()) {
    std::string why = source.status().message();
    if (why.rfind(im.source_name + ": ", 0) == 0) why = why.substr(im.source_name.size() + 2);
    return Status(StatusCode::kNotFound, "no source of " + im.function + " (" + im.source_name +
                                             ") to run the reference on (" + why + ")");
  }
  if (!im.source_sha256.empty() && SourceSha256(source->text) != im.source_sha256)
    return Status(StatusCode::kFailedPrecondition,
                  "the source of " + im.function + " (" + im.source_name +
                      ") changed after it was compiled: no reference to run (compile it again, or restore it)");
  return source;
}

}  // namespace

/// Host bytes of `shape` x `element_size`, or -1 when it overflows int64.
int64_t HostBytes(const std::vector<int64_t>& shape, size_t element_size) {
  int64_t n = static_cast<int64_t>(element_size);
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

// One setting every process of a run must share: its name as the user
// knows it and its value as text (files by their contents).
struct Setting {
  std::string name, value;
  std::string shown = "";  // what a message shows ("": the value); not compared
};

// The --input files, each read once: what the processes compare is what
// runs.
struct LoadedInput {
  NpyArray array;
  std::string error;  // ReadNpy's, "" when read
  std::string digest;  // of dtype, shape and bytes; "unreadable" on error
};

std::vector<Setting> AgreedSettings(const RunArgs& a, const std::string& program_digest,
                                    const std::vector<LoadedInput>& loaded_inputs) {
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  std::vector<std::string> inputs, options, scalars, grid;
  for (const LoadedInput& in : loaded_inputs) inputs.push_back(in.digest);
  for (const OptionValue& o : a.compile_options) options.push_back(o.name + "=" + o.ValueText());
  for (double v : a.scalars) scalars.push_back(FormatNumber(v));
  for (unsigned g : a.grid) grid.push_back(std::to_string(g));
  const std::string program = "contents " + program_digest;
  std::vector<Setting> settings = {{"the program", program, a.program + " (" + program + ")"},
          {"--function", a.function},
          {"--input", join(inputs)},
          {"--scalar", join(scalars)},
          {"--grid", join(grid)},
          {"--seed", std::to_string(a.seed)},
          {"--iterations", std::to_string(a.iterations)},
          {"--warmup", std::to_string(a.warmup)},
          {"--check", a.check ? "on" : "off (--no-check)"},
          {"--tolerance", a.tolerance < 0 ? "" : FormatNumber(a.tolerance)},
          {"--target", a.target},
          {"--schedule", a.schedule},
          {"--compile-option", join(options)},
          {"--mesh", a.mesh_text},
          {"the shardings", join(a.sharding_texts)},
          {"--overlap-chunks", std::to_string(a.overlap_chunks)},
          {"the number of --output files", std::to_string(a.outputs.size())},
          {"--autotune", a.autotune ? a.autotune_space + " trials " + std::to_string(a.autotune_trials) + " seconds " +
                                          FormatNumber(a.autotune_seconds) + " repeats " +
                                          std::to_string(a.autotune_repeats)
                                    : ""}};
  for (Setting& x : settings) {  // one line each
    std::replace(x.value.begin(), x.value.end(), '\n', ' ');
    std::replace(x.shown.begin(), x.shown.end(), '\n', ' ');
  }
  return settings;
}

std::vector<Setting> ParseSettings(const std::string& text) {
  std::vector<Setting> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t a = text.find('\n', at);
    if (a == std::string::npos) break;
    const size_t b = text.find('\n', a + 1);
    if (b == std::string::npos) break;
    const size_t c = text.find('\n', b + 1);
    if (c == std::string::npos) break;
    out.push_back({text.substr(at, a - at), text.substr(a + 1, b - a - 1), text.substr(b + 1, c - b - 1)});
    at = c + 1;
  }
  return out;
}

int Run(int argc, char** argv) {
  RunArgs a;
  int rc = 0;
  if (!ParseArgs(argc, argv, &a, &rc)) return rc;
  if (a.timeout > 0) StartWatchdog(a.timeout, kExitRuntime);
  const bool compiled_file = !EndsWith(a.program, ".mlir");

  // ---- processes: MPI when launched by mpirun (or --mpi); TCP when the
  // coordinator variables say so (jax.distributed's three: where process 0
  // listens, how many, which one this is).
  const int launched = LaunchedProcesses();
  const bool use_mpi = a.mpi == 1 || (a.mpi == -1 && launched > 0);
  const char* coordinator = std::getenv("TESSERA_COORDINATOR");
  int processes = 1;
  if (!use_mpi && coordinator && *coordinator) {
    const char* n = std::getenv("TESSERA_NUM_PROCESSES");
    const char* id = std::getenv("TESSERA_PROCESS_ID");
    char* end = nullptr;
    const long np = n ? std::strtol(n, &end, 10) : 0;
    const bool np_ok = n && *n && *end == 0;
    const long me = id ? std::strtol(id, &end, 10) : -1;
    const bool me_ok = id && *id && *end == 0;
    // At most 65536 processes: a larger count was truncated to an int
    // (4294967298 joined a group of 2).
    if (!np_ok || !me_ok || np < 1 || np > 65536 || me < 0 || me >= np)
      return Fail(kExitBadInput, "TESSERA_COORDINATOR is set: TESSERA_NUM_PROCESSES (N from 1 to 65536) and "
                                 "TESSERA_PROCESS_ID (0..N-1) must be set too, each a whole number (got '" +
                                     std::string(n ? n : "") + "' and '" + std::string(id ? id : "") + "')");
    auto where = tcp::UniqueId::FromAddress(coordinator);
    if (!where.ok()) return Fail(kExitBadInput, "TESSERA_COORDINATOR: " + where.status().message());
    auto group = tcp::Join(*where, static_cast<int>(np), static_cast<int>(me));
    if (!group.ok())
      return Fail(kExitRuntime, "joining the processes at " + std::string(coordinator) + ": " + group.status().ToString());
    g_processes = *group;
    g_rank = g_processes->rank();
    processes = g_processes->size();
    if (g_rank != 0 && !std::freopen("/dev/null", "w", stdout)) return Fail(kExitRuntime, "cannot silence stdout");
  } else if (!use_mpi && (std::getenv("TESSERA_NUM_PROCESSES") || std::getenv("TESSERA_PROCESS_ID"))) {
    // Half a multi-process setup runs the whole mesh here: say so.
    std::fprintf(stderr,
                 "tessera-run: TESSERA_NUM_PROCESSES / TESSERA_PROCESS_ID are set but TESSERA_COORDINATOR is not: "
                 "this process runs every device (set TESSERA_COORDINATOR=HOST:PORT to run across processes)\n");
  }
  if (use_mpi) {
#ifdef TESSERA_HAVE_MPI
    auto world = mpi::World();
    if (!world.ok()) return Fail(kExitRuntime, "starting MPI: " + world.status().ToString());
    g_processes = *world;
    g_rank = g_processes->rank();
    processes = g_processes->size();
    if (g_rank != 0 && !std::freopen("/dev/null", "w", stdout)) return Fail(kExitRuntime, "cannot silence stdout");
#else
    return Fail(kExitRuntime,
                std::string(launched > 0 ? "launched by mpirun (" + std::to_string(launched) + " processes)" : "--mpi asked") +
                    ", but this tessera-run was built without MPI: install libopenmpi-dev openmpi-bin and configure "
                    "with -DTESSERA_WITH_MPI=ON, or run it without mpirun (--no-mpi: one process runs every device)");
#endif
  }

  // ---- what it needs: the compiled image, or how many devices the source's mesh has.
  // Every file is read once: the program (its source, or the compiled
  // image) and each --input; what the processes compare, what is compiled
  // and what the reference runs on are these bytes.
  ProgramImage loaded;
  ProgramSource source_text;  // a .mlir program, read
  int64_t need = 1;
  if (!compiled_file) {
    auto read = ProgramSource::Read(a.program);
    if (!read.ok()) return Fail(kExitBadInput, read.status().message());
    source_text = std::move(*read);
  }
  if (compiled_file) {
    if (!a.mesh.empty() || !a.in_shardings.empty() || !a.out_shardings.empty())
      return Fail(kExitBadInput, "--mesh, --in-sharding and --out-sharding place a program when it is compiled; " +
                                     a.program + " is compiled already (its placement, if any, is in the file): "
                                     "give them to tessera-compile (or tessera-run --save), or run the .mlir source");
    auto image = ProgramImage::ReadFile(a.program);
    if (!image.ok()) return Fail(kExitBadInput, image.status().message());
    loaded = std::move(*image);
    // How to compile, given for a compiled file: ignored silently before.
    std::string how;
    if (!a.schedule.empty()) how += " --schedule";
    if (!a.compile_options.empty()) how += " --compile-option";
    if (a.overlap_chunks) how += " --overlap-chunks";
    if (!a.target.empty() && a.target != loaded.target) how += " --target " + a.target;
    if (!how.empty())
      return Fail(kExitBadInput, "these options choose how a program is compiled:" + how + "; " + a.program +
                                     " is compiled already (for " + loaded.target +
                                     "): give them to tessera-compile, or run the .mlir source");
    need = static_cast<int64_t>(loaded.devices());
  } else if (!a.mesh.empty()) {
    for (const auto& axis : a.mesh)  // --mesh: the program is placed on it
      if (__builtin_mul_overflow(need, axis.size, &need) || need > kMaxProgramDevices)
        return Fail(kExitBadInput, "--mesh: " + std::to_string(a.mesh.size()) +
                                       " axes whose sizes multiply to more than a program runs on (" +
                                       std::to_string(kMaxProgramDevices) + " devices)");
  } else {
    auto n = ProgramDevicesNeeded(source_text, a.function);
    if (!n.ok()) return Fail(kExitBadInput, n.status().message());
    need = *n;
  }
  std::vector<LoadedInput> inputs(a.inputs.size());
  for (size_t k = 0; k < a.inputs.size(); ++k) {
    LoadedInput& in = inputs[k];
    in.error = ReadNpy(a.inputs[k], &in.array);
    if (processes == 1) continue;  // nothing to agree on
    if (!in.error.empty()) {
      in.digest = "unreadable";
      continue;
    }
    llvm::SHA256 h;  // over the bytes in place: no second copy of the data
    std::string header = in.array.dtype + "\n" + in.array.descr + "\n";
    for (int64_t d : in.array.shape) header += std::to_string(d) + ",";
    h.update(header + "\n");
    h.update(llvm::ArrayRef<uint8_t>(in.array.bytes.data(), in.array.bytes.size()));
    in.digest = "contents " + llvm::toHex(h.final(), /*LowerCase=*/true);
  }
  if (processes > 1) {
    if (processes > need)
      return FailAll(kExitRuntime, std::string(use_mpi ? "mpirun started " : "TESSERA_NUM_PROCESSES starts ") +
                                       std::to_string(processes) + " processes, but the program's mesh has " +
                                       std::to_string(need) + " device" + (need == 1 ? "" : "s") + ": start at most " +
                                       std::to_string(need) + " (one process per device, or fewer with several devices each)");
    if (need % processes != 0)
      return FailAll(kExitRuntime, "the program's mesh has " + std::to_string(need) + " devices, which " +
                                       std::to_string(processes) + " processes cannot share equally: start a number of "
                                       "processes that divides " + std::to_string(need));
    // Every process must run the same program, on the same inputs, with
    // the same settings: a rank with other --iterations waited forever in
    // a collective (MPI) or exited 0 early (TCP), other inputs or
    // placements gave wrong results with exit 0.
    // The bytes read once above: the source's text, or the image's.
    const std::string program_digest = SourceSha256(compiled_file ? loaded.Serialize() : source_text.text);
    const std::vector<Setting> mine = AgreedSettings(a, program_digest, inputs);
    std::string text;
    for (const Setting& s : mine) text += s.name + '\n' + s.value + '\n' + s.shown + '\n';
    auto all = g_processes->AllGather(text);
    if (!all.ok()) return Fail(kExitRuntime, all.status().ToString());
    std::string diff;
    const std::vector<Setting> first = ParseSettings((*all)[0]);
    auto show = [](const std::vector<Setting>& v, size_t k) -> std::string {
      if (k >= v.size()) return "?";
      const std::string& t = v[k].shown.empty() ? v[k].value : v[k].shown;
      return t.empty() ? "not given" : "'" + t + "'";
    };
    for (size_t p = 1; p < all->size(); ++p) {
      const std::vector<Setting> theirs = ParseSettings((*all)[p]);
      for (size_t k = 0; k < mine.size(); ++k)
        if (k >= first.size() || k >= theirs.size() || first[k].value != theirs[k].value)
          diff += "; " + mine[k].name + " is " + show(first, k) + " on rank 0, " + show(theirs, k) + " on rank " +
                  std::to_string(p);
    }
    if (!diff.empty())
      return FailAll(kExitBadInput, "the processes disagree on the program, its inputs or its settings" + diff);
  }
  const int64_t mesh_devices = need;
  need /= processes;  // this process's devices

  // ---- the runtime; the cpu plugin gets as many devices as the mesh needs
  // (a default of its option: TESSERA_CPU_DEVICES, when set, wins)
  RuntimeOptions ro;
  if (need > 1) ro.plugin_option_defaults["cpu"].push_back(OptionValue::Int("devices", need));
  auto rt = Runtime::Create(ro);
  if (!rt.ok()) {
    std::fprintf(stderr, "tessera-run: %s\n", rt.status().ToString().c_str());
    // The cpu plugin's devices= came from here, not from the user: say why.
    if (need > 1 && rt.status().message().find("devices=" + std::to_string(need)) != std::string::npos &&
        !std::getenv("TESSERA_CPU_DEVICES"))
      std::fprintf(stderr,
                   "tessera-run: (devices=%lld is what tessera-run asked the cpu plugin for: one device per "
                   "position of the program's mesh%s; use a smaller mesh%s)\n",
                   static_cast<long long>(need), processes > 1 ? " in this process" : "",
                   processes > 1 ? " or more processes" : ", or run it across processes (--mpi, TESSERA_COORDINATOR)");
    if (RequestsVulkan() && (rt.status().code() == StatusCode::kUnavailable || rt.status().code() == StatusCode::kNotFound))
      return Fail(kExitSkip, "vulkan backend unavailable: skipped");
    return kExitRuntime;
  }
  std::vector<Device> devices = rt->devices();
  if (devices.empty()) return Fail(rt->backend() == "vulkan" ? kExitSkip : kExitRuntime, "backend " + rt->backend() + " has no device");
  if (static_cast<int64_t>(devices.size()) < need)
    return FailAll(kExitRuntime, "the program's mesh needs " + std::to_string(mesh_devices) + " devices" +
                                     (processes > 1 ? ", " + std::to_string(need) + " in each of " + std::to_string(processes) + " processes" : "") +
                                     "; backend " + rt->backend() + " has " + std::to_string(devices.size()) +
                                     (rt->backend() == "cpu" ? " (set TESSERA_CPU_DEVICES=" + std::to_string(need) + " for the cpu backend)" : ""));
  devices.resize(static_cast<size_t>(need));

  // ---- compile (or take the file's image), then load
  auto t0 = std::chrono::steady_clock::now();
  std::string log;
  if (!compiled_file) {
    ProgramCompileOptions co;
    co.function = a.function;
    co.target = a.target;
    co.schedule = a.schedule;
    co.overlap_chunks = a.overlap_chunks;
    co.compiler_options = a.compile_options;
    co.mesh = a.mesh;
    co.in_shardings = a.in_shardings;
    co.out_shardings = a.out_shardings;
    if (a.autotune) {
      SetPhase("autotuning");
      const int rc = Autotune(a, source_text, devices, &co);  // one per mesh position
      if (rc != kExitOk) return rc;
      t0 = std::chrono::steady_clock::now();  // the compile's time, not the search's
    }
    SetPhase("compiling");
    auto image = CompileProgramImage(source_text, co, &devices[0], &log);
    if (!image.ok()) {
      std::fprintf(stderr, "%s\n", image.status().message().c_str());
      return image.status().code() == StatusCode::kUnavailable ? kExitRuntime : kExitBadInput;
    }
    loaded = std::move(*image);
  } else if (!a.function.empty() && a.function != loaded.function) {
    return Fail(kExitBadInput, a.program + " runs " + loaded.function + ", not " + a.function);
  }
  const double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto program = Program::Create(devices, loaded, g_processes);
  if (!program.ok()) {
    // A compiled file's messages name the source it came from: say which
    // file was run.
    Status st = program.status();
    if (compiled_file) st.Annotate("running " + a.program);
    return Fail(kExitRuntime, st.ToString());
  }
  const size_t first = program->first_device();
  const ProgramImage& im = program->image();
  const auto& params = program->params();
  size_t launches = 0, collectives = 0, kernels = 0;
  for (const PlanStep& s : im.steps) (s.kind == PlanStep::kLaunch ? launches : collectives)++;
  for (const ExecutableImage& e : im.executables) kernels += e.kernels.size();
  // Across processes: whose collectives move the data (docs/spmd.md).
  std::string moved;
  if (processes > 1)
    if (auto own = UsePluginCollectives(rt->devices()); own.ok() && *own)
      moved = "; data moved by the " + rt->backend() + " plugin";
  std::printf("%s %s: %s for %s (%s): %zu kernel%s, %zu launch%s%s in %.1f ms%s\n",
              compiled_file ? "loaded" : "compiled", a.program.c_str(), im.function.c_str(), im.target.c_str(),
              rt->backend().c_str(), kernels, kernels == 1 ? "" : "s", launches, launches == 1 ? "" : "es",
              collectives ? (", " + std::to_string(collectives) + " collectives on " + std::to_string(mesh_devices) + " devices" +
                             (processes > 1 ? " in " + std::to_string(processes) + " processes (" + g_processes->provider() + moved + ")" : ""))
                                .c_str()
                          : "",
              compile_ms, log.find("cache hit") != std::string::npos ? " (cache hit)" : "");
  if (!a.save.empty()) {
    if (Status st = program->Save(a.save); !st.ok()) return Fail(kExitBadInput, st.message());
    std::printf("wrote %s\n", a.save.c_str());
  }

  // ---- arguments: --input files (global tensors for SPMD) in input order,
  // random values otherwise; --scalar values; outputs zero
  // Every process makes the inputs of every device (the same seed), so
  // rank 0 can check and assemble all of them; each runs its own devices.
  const size_t P = static_cast<size_t>(mesh_devices), L = devices.size();
  std::mt19937 rng(a.seed);
  std::vector<std::vector<NpyArray>> host(P, std::vector<NpyArray>(params.size()));
  // The host copies of every tensor must fit together (each alone did: three
  // 8 GiB outputs passed on a 23.5 GiB machine), in the memory this
  // process may use: the physical memory, or less under an address-space
  // limit (ulimit -v).
  int64_t host_have = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  if (struct rlimit as{}; getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
                          as.rlim_cur < static_cast<rlim_t>(host_have))
    host_have = static_cast<int64_t>(as.rlim_cur);
  int64_t host_total = 0;
  size_t next_input = 0, next_scalar = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& p = params[i];
    const size_t es = elements::DtypeSize(p.dtype);
    if (p.role == ParamRole::kScalar) {
      const bool given = next_scalar < a.scalars.size();
      double v = given ? a.scalars[next_scalar++] : elements::IsFloatDtype(p.dtype) ? 1.5 : 1;
      // An integer argument takes a whole number its type holds: 2.9 or
      // 1e20 would be truncated or wrapped into another value silently.
      if (given && !elements::IsFloatDtype(p.dtype) && p.dtype != "i1" &&
          (v != std::trunc(v) || elements::RoundTo(v, p.dtype) != v))
        return Fail(kExitBadInput, "--scalar " + FormatNumber(v) + ": argument " + std::to_string(i) + " of " +
                                       im.function + " is " + p.dtype + "; give a whole number it holds");
      // A float argument takes a value its type holds: 1e300 as an f32
      // became inf silently (the Python API refuses it too).
      if (given && elements::IsFloatDtype(p.dtype) && std::isfinite(v) &&
          !std::isfinite(elements::RoundTo(v, p.dtype)))
        return Fail(kExitBadInput, "--scalar " + FormatNumber(v) + ": argument " + std::to_string(i) + " of " +
                                       im.function + " is " + p.dtype +
                                       ", whose largest value is smaller: it would become inf; give a value the "
                                       "type holds (inf itself is accepted)");
      for (auto& h : host) {
        h[i].dtype = p.dtype;
        h[i].shape = {1};
        h[i].bytes.assign(p.bytes, 0);
        elements::Encode(v, h[i].bytes.data(), p.dtype);
      }
      continue;
    }
    std::vector<int64_t> global_shape = P > 1 ? program->GlobalShape(i) : p.shape;
    // A dimension of any length (memref<?xf32>: a kernel sized by its
    // caller) takes its extent from the argument's --input file; before, it
    // "needed more than 2^63 bytes".
    const bool dynamic = std::any_of(global_shape.begin(), global_shape.end(), [](int64_t d) { return d < 0; });
    if (dynamic) {
      const std::string what = "argument " + std::to_string(i) + " of " + im.function + " (" + p.dtype + " " +
                               ShapeText(global_shape) + ") has a dimension of any length";
      if (P > 1) return Fail(kExitBadInput, what + ": tessera-run runs such a program on one device only");
      if (p.role == ParamRole::kOutput || next_input >= a.inputs.size() || !inputs[next_input].error.empty())
        return Fail(kExitBadInput,
                    what + ": give its contents with --input FILE.npy (the file's shape sizes it)" +
                        (next_input < a.inputs.size() && !inputs[next_input].error.empty()
                             ? "; " + inputs[next_input].error
                             : std::string()));
      const std::vector<int64_t>& file = inputs[next_input].array.shape;
      bool fits = file.size() == global_shape.size();
      for (size_t k = 0; fits && k < file.size(); ++k) fits = global_shape[k] < 0 || global_shape[k] == file[k];
      if (!fits)
        return Fail(kExitBadInput, a.inputs[next_input] + ": " + what + ", and the file holds " +
                                       ShapeText(file) + ", which does not fit its other dimensions");
      global_shape = file;
    }
    // The host copies (and the reference's) must fit this machine: refuse
    // before allocating rather than die in std::bad_alloc.
    const int64_t need = HostBytes(global_shape, es);
    const int64_t have = host_have;
    if (need < 0 || need > have)
      return Fail(kExitBadInput, "argument " + std::to_string(i) + " of " + im.function + " (" + p.dtype + " " +
                                     ShapeText(global_shape) + ") needs " +
                                     (need < 0 ? std::string("more than 2^63") : std::to_string(need)) +
                                     " bytes of host memory; this machine has " + std::to_string(have) +
                                     ": make the tensors smaller");
    // Kept: each device's local copy (one device: the global tensor itself).
    // While several devices' are made: the global tensor and the scattered
    // parts too.
    const int64_t kept = P > 1 ? static_cast<int64_t>(P) * static_cast<int64_t>(p.bytes) : need;
    const int64_t making = P > 1 ? need + kept : 0;
    host_total += kept;  // each term at most P x `have`: no overflow
    if (host_total + making > have)
      return Fail(kExitBadInput, "the arguments of " + im.function + " up to " + std::to_string(i) + " need " +
                                     std::to_string(host_total + making) +
                                     " bytes of host memory together; this process can use " + std::to_string(have) +
                                     ": make the tensors smaller");
    int64_t count = need / static_cast<int64_t>(es);
    NpyArray global;
    global.dtype = p.dtype;
    global.shape = global_shape;
    global.bytes.assign(static_cast<size_t>(count) * es, 0);
    if (p.role != ParamRole::kOutput && next_input < a.inputs.size()) {
      if (!inputs[next_input].error.empty()) return Fail(kExitBadInput, inputs[next_input].error);
      NpyArray in = std::move(inputs[next_input].array);
      // fp8 files are raw bytes ('|u1'), read as f8E4M3FN: they hold either
      // fp8 type's bits.
      if (in.dtype == "f8E4M3FN" && p.dtype == "f8E5M2") in.dtype = p.dtype;
      // Dtypes numpy writes alike ('<u2': bf16 or ui16, '<i4': i32, si32, i24).
      if (in.dtype != p.dtype && !in.descr.empty() && in.descr == NpyDescr(p.dtype)) in.dtype = p.dtype;
      if (in.dtype != p.dtype || in.shape != global_shape)
        return Fail(kExitBadInput, a.inputs[next_input] + ": argument " + std::to_string(i) + " of " + im.function +
                                       " expects " + (P > 1 ? "the global " : "") + p.dtype + " " + ShapeText(global_shape) +
                                       (P > 1 ? " (local " + ShapeText(p.shape) + ", " + ShardingText(p.sharding, im) + ")" : "") +
                                       ", the file holds " + in.dtype + " " + ShapeText(in.shape));
      global = std::move(in);
      ++next_input;
    } else if (p.role != ParamRole::kOutput) {
      for (int64_t k = 0; k < count; ++k)
        elements::Encode(elements::RandomValue(rng, p.dtype), &global.bytes[k * es], p.dtype);
    }
    if (P == 1) {  // the global tensor is the local one: no copy
      host[0][i].dtype = p.dtype;
      host[0][i].shape = dynamic ? global_shape : p.shape;
      host[0][i].bytes = std::move(global.bytes);
      if (!dynamic) host[0][i].bytes.resize(p.bytes, 0);
      continue;
    }
    std::vector<std::string> locals = program->ScatterGlobal(i, std::string(global.bytes.begin(), global.bytes.end()));
    for (size_t d = 0; d < P; ++d) {
      host[d][i].dtype = p.dtype;
      host[d][i].shape = p.shape;
      host[d][i].bytes.assign(locals[d].begin(), locals[d].end());
      host[d][i].bytes.resize(p.bytes, 0);
    }
  }
  if (next_input < a.inputs.size())
    return Fail(kExitBadInput, std::to_string(a.inputs.size()) + " --input files given, " + im.function + " takes " +
                                   std::to_string(next_input));
  if (next_scalar < a.scalars.size())
    return Fail(kExitBadInput, std::to_string(a.scalars.size()) + " --scalar values given, " + im.function +
                                   " takes " + std::to_string(next_scalar) + " scalar argument" +
                                   (next_scalar == 1 ? "" : "s"));
  std::vector<size_t> result_params;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].role == ParamRole::kOutput) result_params.push_back(i);
  if (result_params.empty())
    for (size_t i = params.size(); i-- > 0;)
      if (params[i].is_buffer()) { result_params.push_back(i); break; }
  if (a.outputs.size() > result_params.size())
    return Fail(kExitBadInput, std::to_string(a.outputs.size()) + " --output files given, " + im.function + " has " +
                                   std::to_string(result_params.size()) + " result" + (result_params.size() == 1 ? "" : "s"));

  // The source the reference runs on, parsed once here: the text compiled,
  // or a compiled image's source when it is still the text it was compiled
  // from.
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext source_ctx(registry);
  source_ctx.getDiagEngine().registerHandler([](mlir::Diagnostic&) { return mlir::success(); });
  // Placed as the program was: by --mesh here, or as the .tsp records.
  ProgramCompileOptions placement;
  if (!compiled_file) {
    placement.function = a.function;
    placement.mesh = a.mesh;
    placement.in_shardings = a.in_shardings;
    placement.out_shardings = a.out_shardings;
  } else if (im.placed) {
    placement.function = im.function;
    for (size_t i = 0; i < im.mesh_axes.size() && i < im.mesh_shape.size(); ++i)
      placement.mesh.push_back({im.mesh_axes[i], im.mesh_shape[i]});
    placement.in_shardings = im.placed_in;
    placement.out_shardings = im.placed_out;
  }
  std::string no_source;  // why there is no reference source
  mlir::OwningOpRef<mlir::ModuleOp> source;
  if (compiled_file) {
    auto read = SourceOfImage(im);
    if (read.ok()) source_text = std::move(*read);
    else no_source = read.status().message();
  }
  if (no_source.empty()) {
    source = ParseSource(source_text, &source_ctx, placement);
    if (!source)
      no_source = "the source of " + im.function + " (" + source_text.name +
                  ") does not parse, verify and place as it was compiled: no reference to run";
  }
  // Training programs: results that replace arguments after each run (the
  // image records them: a compiled program trains without its source).
  const std::vector<ProgramImage::StateUpdate>& updates = im.state_updates;
  const int step_ok = im.step_ok_param;  // the param of the result marked tessera.step_ok

  // ---- device buffers and streams
  std::vector<std::vector<Buffer>> buffers(L, std::vector<Buffer>(params.size()));
  std::vector<std::vector<KernelArg>> args(L);
  std::vector<Stream> streams;
  for (size_t d = 0; d < L; ++d) {
    const size_t g = first + d;  // its mesh position
    // A plugin need not have default streams (Device_GetDefaultStream is
    // optional): then a stream of its own.
    Stream s = devices[d].default_stream();
    if (!s.valid()) {
      auto made = devices[d].create_stream();
      if (!made.ok()) return Fail(kExitRuntime, "device " + std::to_string(d) + " has no default stream (the plugin "
                                                "has no Device_GetDefaultStream) and creating one failed: " +
                                                    made.status().ToString());
      s = *made;
    }
    streams.push_back(s);
    for (size_t i = 0; i < params.size(); ++i) {
      if (!params[i].is_buffer()) {
        uint64_t raw = 0;
        std::memcpy(&raw, host[g][i].bytes.data(), std::min<size_t>(8, host[g][i].bytes.size()));
        args[d].push_back(params[i].bytes == 4 ? KernelArg::scalar(static_cast<uint32_t>(raw))
                          : params[i].bytes == 2 ? KernelArg::scalar(static_cast<uint16_t>(raw))
                          : params[i].bytes == 1 ? KernelArg::scalar(static_cast<uint8_t>(raw))
                                                 : KernelArg::scalar(raw));
        continue;
      }
      // A buffer of any length is as long as its input file.
      auto b = devices[d].allocate(std::max<uint64_t>({params[i].bytes, host[g][i].bytes.size(), 1}));
      // Named: which argument or result did not fit, of what size.
      if (!b.ok())
        return Fail(kExitRuntime, Status(b.status())
                                      .Annotate(std::string(ParamRoleName(params[i].role)) + " " + params[i].name +
                                                " of " + im.function + " (" + params[i].dtype + " " +
                                                ShapeText(host[g][i].shape) + ", " +
                                                std::to_string(std::max<uint64_t>(params[i].bytes, host[g][i].bytes.size())) +
                                                " bytes) on device " + std::to_string(d))
                                      .ToString());
      buffers[d][i] = *b;
      if (Status st = copy(buffers[d][i], host[g][i].bytes.data(), host[g][i].bytes.size()); !st.ok())
        return Fail(kExitRuntime, st.ToString());
    }
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].is_buffer()) args[d].insert(args[d].begin() + i, KernelArg::buffer(buffers[d][i]));
  }
  RunOptions run_options;
  if (!a.grid.empty()) {
    run_options.grid = TsDim3{a.grid[0], a.grid.size() > 1 ? a.grid[1] : 1, a.grid.size() > 2 ? a.grid[2] : 1};
  }
  auto once = [&]() -> bool {
    Status st = program->Run(streams, args, run_options);
    for (size_t d = 0; st.ok() && d < L; ++d) st = streams[d].synchronize();
    if (!st.ok()) std::fprintf(stderr, "tessera-run: %s\n", st.ToString().c_str());
    return st.ok();
  };

  // A Tile IR kernel (a user's own): the interpreter runs it first, so that
  // a kernel that reads or writes out of bounds is refused before the
  // device runs it (the cpu plugin runs kernels in this process: such a
  // kernel crashed it or corrupted its heap).  Its values are the check's.
  const TsDim3 check_grid =
      run_options.grid.x ? run_options.grid : im.steps.empty() ? TsDim3{0, 0, 0} : im.steps.front().grid;
  std::optional<TileReference> tile_ref;
  if (a.check && L == 1 && processes == 1 && source) {
    auto fn = source->lookupSymbol<mlir::func::FuncOp>(im.function);
    if (fn && fn->hasAttr(tessera::tile::kGroupSizeAttr)) {
      SetPhase("checking the kernel on the Tile IR interpreter");
      tile_ref = RunTileReference(*program, *source, host[first], check_grid, devices[0].info().subgroup_size,
                                  a.check_seconds);
      if (tile_ref->out_of_bounds)
        return Fail(kExitBadInput, "the Tile IR interpreter found " + im.function +
                                       " accessing memory out of bounds, so it was not run on " + devices[0].backend() +
                                       ": " + tile_ref->error + " (--no-check runs it unchecked)");
      // A barrier not every lane reaches hangs a GPU or corrupts its
      // shared memory (undefined behaviour): not run either.
      if (tile_ref->divergent)
        return Fail(kExitBadInput, "the Tile IR interpreter found " + im.function +
                                       " with lanes that do not all reach the same barrier or subgroup op, so it "
                                       "was not run on " + devices[0].backend() + ": " + tile_ref->error +
                                       " (move the barrier out of lane-dependent control flow; --no-check runs "
                                       "it unchecked)");
      // A loop that never ends would hang the device as it did the
      // interpreter: not run either.
      if (tile_ref->limit)
        return Fail(kExitBadInput, "the Tile IR interpreter did not finish " + im.function +
                                       " within --check-seconds, so it was not run on " +
                                       devices[0].backend() + ": " + tile_ref->error +
                                       " (a larger --check-seconds allows longer; --no-check with --timeout runs it unchecked)");
    }
  }

  // ---- one checked run
  SetPhase("running on the device");
  if (!once()) return kExitRuntime;
  std::vector<std::vector<NpyArray>> results = host;
  for (size_t d = 0; d < L; ++d)
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].is_buffer())
        if (Status st = copy(results[first + d][i].bytes.data(), buffers[d][i], results[first + d][i].bytes.size()); !st.ok())
          return Fail(kExitRuntime, st.ToString());
  if (processes > 1) {
    // Rank 0 gathers every device's results (it checks and assembles them).
    std::string mine;
    for (size_t d = 0; d < L; ++d)
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i].is_buffer()) mine.append(results[first + d][i].bytes.begin(), results[first + d][i].bytes.end());
    auto all = g_processes->AllGather(mine);
    if (!all.ok()) return Fail(kExitRuntime, all.status().ToString());
    for (size_t p = 0; p < all->size(); ++p) {
      size_t at = 0;
      for (size_t d = 0; d < L; ++d)
        for (size_t i = 0; i < params.size(); ++i)
          if (params[i].is_buffer()) {
            auto& b = results[p * L + d][i].bytes;
            if (at + b.size() > (*all)[p].size()) return Fail(kExitRuntime, "rank " + std::to_string(p) + " sent short results");
            std::memcpy(b.data(), (*all)[p].data() + at, b.size());
            at += b.size();
          }
    }
  }
  rc = kExitOk;
  if (a.check && g_rank == 0) {
    // A program of no steps (a hand-made image) checks with no grid.
    const bool have_tile_ref = tile_ref && tile_ref->error.empty();
    SetPhase("checking the results");
    rc = CheckResults(*program, source ? *source : mlir::ModuleOp(), no_source, host, results, check_grid,
                      devices[0].info().subgroup_size, a, have_tile_ref ? &tile_ref->values : nullptr);
  }
  if (processes > 1) {  // every rank ends with rank 0's verdict
    auto verdicts = g_processes->AllGather(std::to_string(rc));
    if (!verdicts.ok()) return Fail(kExitRuntime, verdicts.status().ToString());
    rc = std::atoi((*verdicts)[0].c_str());
    g_consistent_failure = true;
  }

  // ---- warm-up, then timed iterations (a training program: each run is
  // a step; its updates feed the next, and its loss is printed)
  int step = 1, skipped = 0;
  auto next = [&]() -> bool {
    if (updates.empty()) return true;
    // A step whose tessera.step_ok result is false keeps the old state
    // (every device holds the same flag: the gradient's all-reduced one).
    bool ok = true;
    if (step_ok >= 0) {
      unsigned char flag = 0;
      if (Status st = copy(&flag, buffers[0][static_cast<size_t>(step_ok)], 1); !st.ok()) {
        std::fprintf(stderr, "tessera-run: %s\n", st.ToString().c_str());
        return false;
      }
      ok = flag != 0;
    }
    if (!ok) {
      ++skipped;
      if (g_rank == 0) std::printf("step %d: skipped (tessera.step_ok is false: non-finite gradients)\n", step);
    } else if (Status st = ApplyStateUpdates(updates, params, buffers, streams); !st.ok()) {
      std::fprintf(stderr, "tessera-run: %s\n", st.ToString().c_str());
      return false;
    }
    const int total = 1 + a.warmup + a.iterations;
    if (g_rank == 0 && (step <= 3 || step % 10 == 0 || step == total)) {
      std::vector<unsigned char> loss(params[result_params[0]].bytes);
      if (Status st = copy(loss.data(), buffers[0][result_params[0]], loss.size()); !st.ok()) {
        std::fprintf(stderr, "tessera-run: %s\n", st.ToString().c_str());
        return false;
      }
      std::printf("step %d: result 0 = %.6g\n", step, elements::Decode(loss.data(), params[result_params[0]].dtype));
    }
    ++step;
    return true;
  };
  if (!next()) return kExitRuntime;
  SetPhase("timing on the device");
  for (int it = 0; it < a.warmup; ++it)
    if (!once() || !next()) return kExitRuntime;
  auto t1 = std::chrono::steady_clock::now();
  for (int it = 0; it < a.iterations; ++it)
    if (!once() || !next()) return kExitRuntime;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count() / a.iterations;
  if (skipped > 0 && g_rank == 0)
    std::printf("skipped %d of %d steps (tessera.step_ok false: their updates were not applied)\n", skipped,
                1 + a.warmup + a.iterations);
  std::printf("time: %.3f ms per iteration over %d iterations after %d warm-up (%zu launch%s, %zu device%s, %s%s)", ms,
              a.iterations, a.warmup, launches, launches == 1 ? "" : "es", P, P == 1 ? "" : "s", rt->backend().c_str(),
              processes > 1 ? (", " + std::to_string(processes) + " processes, rank 0's time").c_str() : "");
  std::printf("\n");

  // ---- global results (SPMD: assembled from every device; copies that
  // disagree are worth a warning), then the --output files
  std::vector<NpyArray> globals;
  for (size_t k = 0; k < result_params.size(); ++k) {
    const size_t i = result_params[k];
    NpyArray out;
    out.dtype = params[i].dtype;
    if (P > 1) {
      std::vector<std::string> locals;
      for (size_t d = 0; d < P; ++d) locals.emplace_back(results[d][i].bytes.begin(), results[d][i].bytes.end());
      double diff = 0;
      std::string g = program->GatherGlobal(i, locals, &diff);
      if (diff > 0)
        std::printf("warning: result %zu is replicated over some mesh axes (%s) but the devices hold values that differ "
                    "by up to %.3g: declare how it is sharded\n",
                    k, ShardingText(params[i].sharding, im).c_str(), diff);
      out.shape = program->GlobalShape(i);
      out.bytes.assign(g.begin(), g.end());
    } else {
      // The host copy's shape: a buffer of any length has its file's.
      out.shape = results[0][i].shape;
      out.bytes = results[0][i].bytes;
      int64_t n = 1;
      for (int64_t d : out.shape) n *= d;
      out.bytes.resize(static_cast<size_t>(n) * elements::DtypeSize(out.dtype));
    }
    globals.push_back(std::move(out));
  }
  g_consistent_failure = true;  // from here on only rank 0 works
  for (size_t k = 0; g_rank == 0 && k < a.outputs.size(); ++k) {
    if (std::string e = WriteNpy(a.outputs[k], globals[k]); !e.empty()) return Fail(kExitBadInput, e);
    if (P > 1)
      std::printf("wrote %s: global result %zu, %s %s\n", a.outputs[k].c_str(), k, globals[k].dtype.c_str(),
                  ShapeText(globals[k].shape).c_str());
  }
  return rc;
}

int main(int argc, char** argv) {
  // A last resort for allocations this tool does not size itself (the
  // compiler's, the reference's): a clean error and an exit code, not an
  // abort from an uncaught exception.
  int rc = kExitRuntime;
  try {
    rc = Run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "tessera-run: out of host memory (the program's tensors, or the copies the reference check "
                 "makes, are too large for this machine or its address-space limit; --no-check skips the "
                 "reference)\n");
    rc = kExitRuntime;
  }
  if (g_processes) {
    // A failure of this process alone may leave the others waiting in a
    // collective: end them all (MPI: mpirun reports it and exits non-zero;
    // TCP: this process exits, and the others' calls fail as its
    // connections close).
    if (rc != kExitOk && !g_consistent_failure) g_processes->Abort(rc);
    g_processes.reset();
#ifdef TESSERA_HAVE_MPI
    mpi::Finalize();
#endif
  }
  return rc;
}
