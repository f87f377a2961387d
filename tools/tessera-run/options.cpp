#include "options.hpp"

#include "tessera/output_file.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tessera::run {

std::string HelpText() {
  return R"(usage: tessera-run PROGRAM [options]

Compiles PROGRAM (a .mlir of Graph IR, Schedule IR or Tile IR) for the
selected backend through its plugin's compiler -- or loads PROGRAM compiled
ahead of time by tessera-compile (.tsp) -- runs it on generated or given
inputs, checks the results against the reference interpreter and reports
the time per iteration.

Program:
  --function NAME        the function or kernel to run (--kernel NAME too);
                         required when the module has several
  --target T             compile for T (cpu:<LLVM cpu> on the cpu backend);
                         default: the selected backend's own target
  --cpu NAME             same as --target cpu:NAME
  --schedule "OPTIONS"   --tessera-graph-to-schedule options over the
                         target's schedule, e.g. "tile-m=64 micro-m=4";
                         keys: tile-m tile-n tile-k micro-m micro-n
                         clamp-tiles row-tile vector-width fuse fuse-reductions
                         merge-matmul-chains attention attn-block-q
                         attn-block-kv mma stages warp-specialize
                         micro-layout
  --compile-option N=V   an option of the plugin's compiler (tessera-info
                         lists them per target), e.g. opt_level=2
  --save FILE.tsp        also write the compiled program (tessera-run and
                         Program::Load run it without compiling)
  --mesh A=N,B=M         place a program on global tensors that declares no
                         shardings on this mesh (docs/spmd.md, "Shardings
                         given at compile time"), with
  --in-sharding S        per argument, in order (repeat), and
  --out-sharding S       per result: per dim, comma-separated, the mesh axis
                         it is split over, several joined by '*' (the major
                         first), '-' for whole: "dp*tp,-"; missing: replicated
  --overlap-chunks N     SPMD: compute a stage feeding an all_reduce in N row
                         blocks and reduce block i on a communication stream
                         while block i+1 computes (docs/spmd.md "Overlap");
                         results are bitwise the same (default 0: off)
Autotuning (docs/autotune.md):
  --autotune             search the schedule first: compile and time each
                         point of the space on the device (median of the
                         repeats), keep the fastest in the autotune cache
                         (TESSERA_CACHE_DIR/autotune), then run with it; a
                         cached choice is reused without a search
  --autotune-space "S"   the values to try, "tile-m=96,144 micro-m=4,6"
                         (default: a space of the target's tile keys)
  --autotune-trials N    at most N trials, the default schedule's included
                         (24)
  --autotune-seconds S   start no trial after S seconds (120; 0: no limit)
  --autotune-repeats N   timed runs per trial, scored by their median (5)
Data:
  --input FILE.npy       the next input, in order (SPMD: the global tensor)
  --output FILE.npy      write the next result (Tile IR kernel: its last
                         buffer) to FILE
  --scalar V             the next scalar argument of a Tile IR kernel (1.5)
  --grid X[,Y,Z]         launch a Tile IR kernel over this grid
  --seed S               seed of the generated inputs (42)
Checking and timing:
  --check                check against the reference interpreter (default)
  --no-check             run without checking (--no-verify too)
  --check-seconds S      give the Tile IR interpreter at most S seconds
                         for a kernel (300; 0: no limit); past them the
                         kernel is not run (a loop that never ends?)
  --tolerance T          relative tolerance (default: per result type,
                         f32 1e-3, f16 4e-3, bf16 1.6e-2, fp8 0.25, ints 0)
  --warmup N             untimed runs after the checked one (1)
  --iterations N         timed runs (10)
  --timeout S            end the whole run after S seconds, saying what it
                         was doing, with exit code 2 (default: no limit)
Processes (SPMD over MPI, docs/spmd.md "Across processes"):
  --mpi                  one process per part of the mesh over MPI; the
                         default when launched by mpirun
                         (OMPI_COMM_WORLD_SIZE or PMI_SIZE is set)
  --no-mpi               ignore mpirun: this process runs every device
  Without MPI (docs/spmd.md "Without MPI"): start N processes any way with
  TESSERA_COORDINATOR=HOST:PORT (where process 0 listens),
  TESSERA_NUM_PROCESSES=N and TESSERA_PROCESS_ID=0..N-1; they meet over TCP.
  -h, --help             this text

Environment: TESSERA_BACKEND picks the backend (cpu, vulkan, ...),
TESSERA_<PLUGIN>_<OPTION> configures a plugin (TESSERA_CPU_DEVICES: an SPMD
program gets as many cpu devices as its mesh needs unless this is set),
TESSERA_CACHE_DIR the compile cache, TESSERA_LOG=debug every decision.

Exit codes: 0 checked and equal (or --no-check); 1 bad program, arguments or
input files, or a compile error; 2 runtime error or a program the backend
cannot run; 3 the result differs from the reference; 4 checking was asked
but nothing could check the result; 77 the vulkan backend was asked for and
is unavailable.
)";
}

namespace {
bool Fail(const std::string& why, int* exit_code) {
  std::fprintf(stderr, "tessera-run: %s\n(tessera-run --help lists the options)\n", why.c_str());
  *exit_code = kExitBadInput;
  return false;
}

bool ParseNumber(const char* text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text, &end);
  return end != text && *end == '\0';
}
bool ParseUnsigned(const char* text, unsigned long long max, unsigned long long* out) {
  if (!*text || *text == '-') return false;
  char* end = nullptr;
  errno = 0;
  *out = std::strtoull(text, &end, 10);
  return errno == 0 && *end == '\0' && *out <= max;
}
}  // namespace

bool ParseArgs(int argc, char** argv, RunArgs* a, int* exit_code) {
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    unsigned long long n = 0;
    double d = 0;
    if (s == "-h" || s == "--help") {
      std::fputs(HelpText().c_str(), stdout);
      *exit_code = kExitOk;
      return false;
    } else if (s == "--check") {
      a->check = true;
    } else if (s == "--no-check" || s == "--no-verify") {
      a->check = false;
    } else if (s == "--autotune") {
      a->autotune = true;
    } else if (s == "--autotune-space" || s == "--autotune-trials" || s == "--autotune-seconds" ||
               s == "--autotune-repeats") {
      if (!(v = value())) return Fail(s + " needs a value", exit_code);
      a->autotune = true;
      if (s == "--autotune-space") {
        a->autotune_space = v;
      } else if (s == "--autotune-seconds") {
        if (!ParseNumber(v, &d) || !(d >= 0) || d > 1e9)  // !(d >= 0): NaN too
          return Fail(s + " " + v + ": not a number of seconds", exit_code);
        a->autotune_seconds = d;
      } else {
        if (!ParseUnsigned(v, 1000000, &n) || n == 0) return Fail(s + " " + v + ": not a count", exit_code);
        (s == "--autotune-trials" ? a->autotune_trials : a->autotune_repeats) = static_cast<int>(n);
      }
    } else if (s == "--check-seconds" || s == "--timeout") {
      if (!(v = value())) return Fail(s + " needs a value", exit_code);
      if (!ParseNumber(v, &d) || !(d >= 0) || d > 1e9)  // !(d >= 0): NaN too
        return Fail(s + " " + v + ": not a number of seconds from 0 to 1e9", exit_code);
      (s == "--timeout" ? a->timeout : a->check_seconds) = d;
    } else if (s == "--mpi" || s == "--no-mpi") {
      a->mpi = s == "--mpi" ? 1 : 0;
    } else if (s == "--input" || s == "--output" || s == "--function" || s == "--kernel" ||
               s == "--iterations" || s == "--warmup" || s == "--scalar" || s == "--tolerance" ||
               s == "--seed" || s == "--cpu" || s == "--target" || s == "--schedule" || s == "--grid" ||
               s == "--compile-option" || s == "--save" || s == "--overlap-chunks" || s == "--mesh" ||
               s == "--in-sharding" || s == "--out-sharding") {
      if (!(v = value())) return Fail(s + " needs a value", exit_code);
      if (s == "--input") a->inputs.push_back(v);
      else if (s == "--output") a->outputs.push_back(v);
      else if (s == "--function" || s == "--kernel") a->function = v;
      else if (s == "--schedule") a->schedule = v;
      else if (s == "--target") a->target = v;
      else if (s == "--cpu") a->target = std::string("cpu:") + v;
      else if (s == "--save") a->save = v;
      else if (s == "--mesh") {
        if (std::string why = ParseMeshText(v, &a->mesh); !why.empty()) return Fail(s + " " + v + ": " + why, exit_code);
        a->mesh_text = v;
      } else if (s == "--in-sharding" || s == "--out-sharding") {
        ProgramCompileOptions::DimAxes spec;
        if (std::string why = ParseShardingText(v, &spec); !why.empty()) return Fail(s + " " + v + ": " + why, exit_code);
        (s == "--in-sharding" ? a->in_shardings : a->out_shardings).push_back(std::move(spec));
        a->sharding_texts.push_back(s + " " + v);
      }
      else if (s == "--overlap-chunks") {
        if (!ParseUnsigned(v, 4096, &n)) return Fail(s + " " + v + ": not a count from 0 to 4096", exit_code);
        a->overlap_chunks = static_cast<int>(n);
      }
      else if (s == "--iterations" || s == "--warmup") {
        if (!ParseUnsigned(v, 1000000, &n)) return Fail(s + " " + v + ": not a count", exit_code);
        (s == "--iterations" ? a->iterations : a->warmup) = static_cast<int>(n);
        if (s == "--iterations" && n == 0) a->iterations = 1;
      } else if (s == "--seed") {
        if (!ParseUnsigned(v, 0xffffffffull, &n)) return Fail("--seed " + std::string(v) + ": not a 32-bit unsigned number", exit_code);
        a->seed = static_cast<unsigned>(n);
      } else if (s == "--scalar" || s == "--tolerance") {
        if (!ParseNumber(v, &d)) return Fail(s + " " + v + ": not a number", exit_code);
        if (s == "--tolerance" && !(d >= 0 && d < INFINITY))  // a NaN or negative one checked nothing
          return Fail(s + " " + v + ": a tolerance is a finite number >= 0", exit_code);
        if (s == "--scalar") a->scalars.push_back(d);
        else a->tolerance = d;
      } else if (s == "--grid") {
        a->grid.clear();
        std::string text = v;
        size_t start = 0;
        while (start <= text.size()) {
          size_t end = text.find(',', start);
          if (end == std::string::npos) end = text.size();
          if (!ParseUnsigned(text.substr(start, end - start).c_str(), 0xffffffffull, &n) || n == 0)
            return Fail("--grid " + text + ": write X[,Y,Z] with whole numbers from 1 to 4294967295", exit_code);
          a->grid.push_back(static_cast<unsigned>(n));
          start = end + 1;
        }
        if (a->grid.size() > 3) return Fail("--grid " + text + ": at most three dimensions", exit_code);
      } else if (s == "--compile-option") {
        std::string text = v;
        size_t eq = text.find('=');
        if (eq == std::string::npos || eq == 0)
          return Fail("--compile-option " + text + ": write NAME=VALUE", exit_code);
        a->compile_options.push_back(OptionValue::String(text.substr(0, eq), text.substr(eq + 1)));
      }
    } else if (!s.empty() && s[0] != '-' && a->program.empty()) {
      a->program = s;
    } else {
      return Fail("unknown or repeated argument '" + s + "'", exit_code);
    }
  }
  if (a->program.empty()) return Fail("no program given", exit_code);
  // No output may overwrite the program or an input (`--save a.mlir` of
  // a.mlir replaced the source the check then read).
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!a->save.empty()) outputs.push_back({"--save", a->save});
  for (const std::string& o : a->outputs) outputs.push_back({"--output", o});
  for (const auto& [option, path] : outputs) {
    if (SameFile(path, a->program))
      return Fail(option + " " + path + " is the program " + a->program + ": choose another file name", exit_code);
    for (const std::string& in : a->inputs)
      if (SameFile(path, in))
        return Fail(option + " " + path + " is the --input " + in + ": choose another file name", exit_code);
  }
  if (a->autotune && !a->schedule.empty())
    return Fail("--autotune searches the schedule: give the values to try with --autotune-space, not --schedule", exit_code);
  if (a->autotune && (a->program.size() < 5 || a->program.compare(a->program.size() - 5, 5, ".mlir") != 0))
    return Fail("--autotune compiles the program: give its .mlir, not " + a->program, exit_code);
  return true;
}

}  // namespace tessera::run
