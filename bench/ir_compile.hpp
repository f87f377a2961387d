// The Tessera IR compiler as tessera-bench uses it: Graph IR text in, a
// cached elf-native shared object and its launch description out; Tile IR
// text in, SPIR-V for the vulkan backend out.  This
// header has no MLIR types, so the benchmark files need no LLVM flags;
// ir_compile.cpp (built only when the TesseraIR target exists) links the
// same compiler library as tessera-run (TesseraCPUCompiler).
#ifndef TESSERA_BENCH_IR_COMPILE_HPP_
#define TESSERA_BENCH_IR_COMPILE_HPP_

#include <cstdint>
#include <string>
#include <vector>

namespace tessera_bench {

struct IrProgram {
  std::string so_path;
  std::string kernel;              // first kernel's name
  uint32_t grid[3] = {1, 1, 1};
  uint32_t group[3] = {1, 1, 1};
  std::vector<bool> output;        // per argument: written by the kernel
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> dtypes;  // per argument: f32, bf16, ... (MLIR spelling)
  double compile_ms = 0;
  bool cache_hit = false;
};

struct IrCompileOptions {
  bool use_cache = true;
  std::string cache_dir;           // empty: the compiler's default
};

// False (and *error) on a parse or compile failure.
bool CompileGraphIR(const std::string& text, const IrCompileOptions& options,
                    IrProgram* out, std::string* error);

// A Tile IR kernel compiled to SPIR-V by Tessera's own code generator
// (tessera::spv::compileForVulkan, as tessera-run and tessera-cts-compile
// do): the words for Executable_Load("spirv") and its launch description.
struct SpirvKernel {
  std::string name;
  std::vector<uint32_t> words;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t group[3] = {1, 1, 1};
  double compile_ms = 0;
};

// Compiles the Tile IR kernel `kernel` (empty: the first) of `text`.
bool CompileTileIRForVulkan(const std::string& text, const std::string& kernel,
                            SpirvKernel* out, std::string* error);

}  // namespace tessera_bench

#endif  // TESSERA_BENCH_IR_COMPILE_HPP_
