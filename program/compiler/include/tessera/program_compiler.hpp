// Compiling Tessera programs: a .mlir (Graph IR, Schedule IR or Tile IR)
// to a ProgramImage for a plugin's target, by that plugin's compiler.
//
//   #include <tessera/program_compiler.hpp>   // link Tessera::compiler
//   auto program = tessera::CompileProgram({device}, tessera::ProgramSource::File("mlp.mlir"));
//   if (!program.ok()) std::cerr << program.status().message();  // file:line:col diagnostics
//
// What happens (docs/program.md): the module is parsed and verified; the
// function to run is chosen (ProgramCompileOptions::function, or the only
// one); a Graph IR function is lowered by the hardware-neutral passes to
// what the target takes (Schedule IR for a target with TS_IR_LEVEL_SCHEDULE,
// such as cpu; Tile IR kernels and a launch plan for the others), SPMD
// functions are cut into stages at their collectives first; the result goes
// to the plugin's compiler as MLIR bytecode; the kernels it returns and the
// plan become a ProgramImage.
//
// This library links MLIR; running programs does not need it
// (tessera/program.hpp, libtessera).
//
// Thread-safety: every call has its own MLIR context; calls may run in
// parallel (the plugin's compiler serializes what it must).
#ifndef TESSERA_PROGRAM_COMPILER_HPP_
#define TESSERA_PROGRAM_COMPILER_HPP_

#include <string>
#include <vector>

#include "tessera/compiler.hpp"
#include "tessera/program.hpp"

namespace tessera {

// Where a program comes from.
struct ProgramSource {
  static ProgramSource File(std::string path);
  static ProgramSource Text(std::string text, std::string name = "<text>");
  // The file read now, once (a regular file of at most 1 GiB; else an
  // error saying what it is): `path` names it, `text` holds it, and every
  // later step (the program cache's key, the parse, the image's
  // source_sha256) sees these same bytes, however the file changes after.
  static StatusOr<ProgramSource> Read(std::string path);
  std::string path;  // read when set (unless `read`)
  std::string text;  // else this
  std::string name;  // for diagnostics: the path, or the given name
  bool read = false;  // `text` holds the file at `path` (Read)
};

// The SHA-256 of a program's text, as 64 hex digits (ProgramImage::
// source_sha256).
std::string SourceSha256(const std::string& text);

struct ProgramCompileOptions {
  // The function (Graph IR) or kernel (Tile IR) to run; empty: the module's
  // only one (several: an error listing them).
  std::string function;
  // "cpu", "vulkan", "cuda:sm_90a"; empty: the devices' plugin (CompileProgram).
  std::string target;
  // --tessera-graph-to-schedule options applied over the target's own
  // schedule ("tile-m=64 micro-m=4").
  std::string schedule;
  // SPMD programs: a stage whose result goes to an all_reduce is computed
  // in this many row blocks, each block's all_reduce running on a
  // communication stream while the next block computes (docs/spmd.md,
  // "Overlap"); 0 or 1: off.  Results are bitwise the same.
  int64_t overlap_chunks = 0;
  // Placing a program written on global tensors when it is compiled, as
  // jax.jit(in_shardings=..., out_shardings=...) does (docs/spmd.md,
  // "Shardings given at compile time"): the mesh, and per argument and
  // result of the function, per dim the mesh axes the dim is split over
  // (the major first; none: whole). Fewer entries than arguments or
  // results: the rest are replicated. With a mesh, the function (which
  // must declare no shardings of its own) becomes a global-view function
  // with these shardings, and --tessera-shard-propagation places the rest.
  struct MeshAxis {
    std::string name;
    int64_t size = 1;
  };
  std::vector<MeshAxis> mesh;
  using DimAxes = std::vector<std::vector<std::string>>;  // [dim][axis]
  std::vector<DimAxes> in_shardings, out_shardings;
  // Options of the plugin's compiler (tessera-info lists them per target);
  // cache_dir defaults to DefaultCacheDirectory()/<plugin>.
  std::vector<OptionValue> compiler_options;
  // Where to find plugins for CompileProgramImage / EmitProgram.
  RuntimeOptions plugins;
};

// Compiles for `devices` (one per mesh position of an SPMD program; the
// compile is specialised for the first) and loads the result on them.
StatusOr<Program> CompileProgram(const std::vector<Device>& devices, const ProgramSource& source,
                                 const ProgramCompileOptions& options = {});

// The image, for `device` (may be null: ahead of time, for
// options.target; tessera-compile).  `log` (may be null) receives the
// compiler's notes ("cache hit", warnings).
StatusOr<ProgramImage> CompileProgramImage(const ProgramSource& source,
                                           const ProgramCompileOptions& options,
                                           const Device* device = nullptr, std::string* log = nullptr);

// How many devices the program's function needs: the size of its mesh, 1
// without one (what a caller must create before CompileProgram).
StatusOr<int64_t> ProgramDevicesNeeded(const ProgramSource& source, const std::string& function);

// The target's intermediate form (LLVM IR, assembly, SPIR-V, PTX, ...: one
// of the target's emit kinds) of the program's kernels, instead of an
// executable.
StatusOr<CompileOutput> EmitProgram(const ProgramSource& source, const ProgramCompileOptions& options,
                                    const std::string& emit);

// The functions and kernels a module offers (what `function` may name).
StatusOr<std::vector<std::string>> ListProgramFunctions(const ProgramSource& source);

// The command-line form of a placement (tessera-run's and tessera-compile's
// --mesh, --in-sharding, --out-sharding): a mesh "dp=2,tp=2" (axes in order,
// each NAME=SIZE, 1 <= SIZE <= 2^20) and a sharding "dp*tp,-" (per dim the
// axes joined by '*', major first, or '-' for whole). "" on success, else
// what is wrong with the text; names are checked against the program later.
std::string ParseMeshText(const std::string& text, std::vector<ProgramCompileOptions::MeshAxis>* mesh);
std::string ParseShardingText(const std::string& text, ProgramCompileOptions::DimAxes* spec);

}  // namespace tessera

#endif  // TESSERA_PROGRAM_COMPILER_HPP_
