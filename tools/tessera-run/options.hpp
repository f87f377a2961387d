// tessera-run's command line: every option, its --help text and the exit
// codes (the docs and a ctest check the help against this list).
#ifndef TESSERA_TOOLS_RUN_OPTIONS_HPP_
#define TESSERA_TOOLS_RUN_OPTIONS_HPP_

#include <string>
#include <vector>

#include "tessera/program_compiler.hpp"
#include "tessera/runtime.hpp"

namespace tessera::run {

// Exit codes.
enum ExitCode {
  kExitOk = 0,           // verified (or --no-check)
  kExitBadInput = 1,     // bad program, arguments or input files; compile error
  kExitRuntime = 2,      // runtime error, or a program the backend cannot run
  kExitMismatch = 3,     // the result differs from the reference
  kExitNotChecked = 4,   // --check asked, but nothing could check the result
  kExitSkip = 77,        // the vulkan backend was asked for and is unavailable (ctest SKIP)
};

struct RunArgs {
  std::string program;                 // .mlir (compiled here) or .tsp (tessera-compile's)
  std::string function;                // --function / --kernel
  std::vector<std::string> inputs, outputs;
  std::vector<double> scalars;
  std::vector<unsigned> grid;
  int iterations = 10;
  int warmup = 1;
  double tolerance = -1;               // < 0: each result type's default
  unsigned seed = 42;
  bool check = true;
  double check_seconds = 300;          // --check-seconds: the Tile IR interpreter's limit (0: none)
  double timeout = 0;                  // --timeout: the whole run's (0: none)
  std::string target;                  // --target / --cpu (cpu:<LLVM cpu>)
  std::string schedule;
  std::vector<OptionValue> compile_options;  // --compile-option NAME=VALUE
  std::string save;                    // --save FILE.tsp
  int overlap_chunks = 0;              // --overlap-chunks N (SPMD)
  // --mesh dp=2,tp=2 with --in-sharding / --out-sharding (one per argument
  // / result, in order): shardings given at compile time
  std::vector<ProgramCompileOptions::MeshAxis> mesh;
  std::vector<ProgramCompileOptions::DimAxes> in_shardings, out_shardings;
  std::string mesh_text;               // --mesh and the shardings as given (every
  std::vector<std::string> sharding_texts;  // process must be given the same)
  int mpi = -1;                        // --mpi 1, --no-mpi 0, -1: when launched by mpirun
  // --autotune: search the schedule first (docs/autotune.md)
  bool autotune = false;
  std::string autotune_space;          // --autotune-space "tile-m=96,144 micro-m=4,6"
  int autotune_trials = 24;            // --autotune-trials N
  double autotune_seconds = 120;       // --autotune-seconds S
  int autotune_repeats = 5;            // --autotune-repeats N
};

// Parses argv; returns false after printing why (or the help) with *exit_code set.
bool ParseArgs(int argc, char** argv, RunArgs* args, int* exit_code);
std::string HelpText();

}  // namespace tessera::run

#endif
