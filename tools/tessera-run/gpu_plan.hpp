// Graph IR on a GPU backend: tessera-graph-to-tile-kernels turns the program
// into Tile IR kernels plus a launch plan; each kernel is compiled for the
// backend (vulkan: SPIR-V, one spirv.module per kernel) and loaded through
// the runtime; the plan's launches are enqueued in order on one stream.
#ifndef TESSERA_TOOLS_RUN_GPU_PLAN_HPP_
#define TESSERA_TOOLS_RUN_GPU_PLAN_HPP_

#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "tessera/Conversion/GraphToTile/Passes.h"
#include "tessera/Target/CPU/Compiler.h"
#include "tessera/runtime.hpp"

namespace tessera::run {

struct GpuProgram {
  conversion::LaunchPlan plan;
  std::vector<Executable> executables;  // one per launch (kernels may repeat)
  std::vector<Kernel> kernels;          // per launch
  std::vector<Buffer> intermediates;    // plan buffers after the arguments
  // The program's arguments as tessera-run's generic path sees them:
  // the Graph function's inputs, then its results (output = true).
  cpu::KernelInfo info;
  size_t num_kernels = 0;
  size_t spirv_words = 0;
  double compile_ms = 0;
};

// Lowers the Graph IR function `name` (empty: the first one) of `module`
// (not modified) for `dev` with the GPU schedule (`schedule`: graph-to-schedule
// options over it, may be empty), loads its kernels and allocates the
// intermediates. Returns 0, or tessera-run's exit code (1: the program
// cannot be lowered/compiled, with MLIR diagnostics; 2: runtime error),
// with the reason on stderr.
int CompileGraphForGpu(mlir::ModuleOp module, const std::string& name, const Device& dev,
                       const std::string& schedule, GpuProgram* out);

// Enqueues every launch of the plan on `stream`, in order (the stream
// orders them; the Vulkan plugin records them into one command buffer).
// `args`: buffers of the plan's arguments (inputs then outputs).
Status EnqueueGpuProgram(const GpuProgram& program, const Stream& stream,
                         const std::vector<Buffer>& args);

}  // namespace tessera::run

#endif
