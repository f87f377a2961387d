// The Tessera compiler as tessera-bench uses it: the program layer
// (libtessera_compiler, CompileProgramImage through the plugin's compiler)
// that tessera-run uses, and, for the compile-time comparison only, the cpu
// code generator called directly (what the compile was before the plugin
// boundary).  This header has no MLIR types, so the benchmark files need no
// LLVM flags; ir_compile.cpp is built only when the IR is.
#ifndef TESSERA_BENCH_IR_COMPILE_HPP_
#define TESSERA_BENCH_IR_COMPILE_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/program.hpp"

namespace tessera_bench {

struct IrProgram {
  tessera::Program program;         // loaded on the device it was compiled for
  std::string kernel;               // the first launch's kernel
  uint32_t grid[3] = {1, 1, 1};     // the first launch's grid and group
  uint32_t group[3] = {1, 1, 1};
  std::vector<bool> output;         // per parameter: a result
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> dtypes;  // per parameter: f32, bf16, ... (MLIR spelling)
  double compile_ms = 0;
  bool cache_hit = false;
  // The plugin boundary's share of compile_ms (from the compile log): the
  // module written as bytecode by the core and read back by the plugin.
  double handoff_ms = 0;
  double handoff_bytes = 0;
};

struct IrCompileOptions {
  bool use_cache = true;
  std::string schedule;             // --schedule options over the target's ("": its own)
  std::string cache_dir;            // empty: the default cache folder
};

// Graph IR (or Tile IR) text -> a Program on `device`, through the
// plugin's compiler.  False (and *error) on a parse or compile failure.
bool CompileGraphIR(const std::string& text, const tessera::Device& device,
                    const IrCompileOptions& options, IrProgram* out, std::string* error);

// The same Graph IR compiled by tessera::cpu::compileForCPU directly: no
// program layer, no bytecode hand-off, no plugin boundary (the reference of
// the compile-time benchmark).
bool CompileGraphIRDirect(const std::string& text, const IrCompileOptions& options, double* ms,
                          bool* cache_hit, std::string* error);

// A Tile IR kernel compiled by the vulkan plugin's compiler (ahead of time,
// target vulkan): its SPIR-V module for Executable_Load("spirv") and its
// launch description.
struct SpirvKernel {
  std::string name;
  std::vector<uint32_t> words;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t group[3] = {1, 1, 1};
  double compile_ms = 0;
};

// Compiles the Tile IR kernel `kernel` (empty: the only one) of `text`.
bool CompileTileIRForVulkan(const std::string& text, const std::string& kernel,
                            SpirvKernel* out, std::string* error);

}  // namespace tessera_bench

#endif  // TESSERA_BENCH_IR_COMPILE_HPP_
