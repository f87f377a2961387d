//===- Pipeline.h - the cpu lowering pipelines ----------------------------===//
#ifndef TESSERA_TARGET_CPU_PIPELINE_H
#define TESSERA_TARGET_CPU_PIPELINE_H

#include <string>

#include "mlir/Pass/PassManager.h"

namespace tessera::cpu {
struct GraphPipelineOptions {
  int64_t tileM = 144, tileN = 4096, tileK = 256;
  /// The register tile; 0: the one for `matmulLanes` (6 x 16 for 8 lanes,
  /// 12 x 32 for 16, as plugins/cpu/compile_targets.hpp's schedules).
  int64_t microM = 0, microN = 0;
  /// Lanes of the matmul micro-kernel's vectors: 8 (AVX2) or 16 (AVX-512F).
  int64_t matmulLanes = 8;
  /// Attention blocks (tessera_schedule.flash_attention), at most.
  int64_t attnBlockQ = 64, attnBlockKV = 64;
  /// The target has F16C: f16 conversions in hardware (else integer code).
  bool hardwareF16 = false;
  /// --tessera-graph-to-schedule options given as text ("tile-m=96
  /// fuse-reductions=0"), applied over the fields above: a schedule to try
  /// without rebuilding (tessera-run --schedule).
  std::string schedule;
};
/// Graph IR -> Schedule IR -> scf/vector kernels (stops before LLVM).
/// Fails (with a message on stderr) when `options.schedule` does not parse.
mlir::LogicalResult buildGraphToLoopsPipeline(mlir::OpPassManager &pm,
                                              const GraphPipelineOptions &options = {});
/// Schedule/Tile IR kernels -> scf/vector kernels (stops before LLVM).
void buildTileToLoopsPipeline(mlir::OpPassManager &pm);
/// scf/vector/memref/math -> LLVM dialect, then the exported ABI wrappers.
void buildLoopsToLLVMPipeline(mlir::OpPassManager &pm);
/// Registers `tessera-cpu-graph-pipeline`, `tessera-cpu-tile-pipeline`
/// (both to the LLVM dialect) with tessera-opt.
void registerCPUPipelines();
}  // namespace tessera::cpu

#endif
