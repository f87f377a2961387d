//===- Pipeline.h - Graph IR -> GPU kernels + launch plan -------*- C++ -*-===//
#ifndef TESSERA_CONVERSION_GRAPHTOTILE_PIPELINE_H
#define TESSERA_CONVERSION_GRAPHTOTILE_PIPELINE_H

#include <string>

#include "mlir/Pass/PassManager.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"

namespace tessera::conversion {

/// The schedule the GPU kernels are built for: 128x128 GEMM tiles of 16x16
/// lanes with 8x8 registers each and BK = 16, not clamped (a small problem
/// keeps the lane grid and guards); softmax and reduce with their fused
/// epilogues as on cpu; attention as matmul + softmax + matmul unless
/// `attention=1` asks for the flash_attention kernel (16-row query blocks,
/// 32-row key/value blocks); one tile per kernel (no MLP merge).
graph::GraphToScheduleOptions gpuScheduleOptions();

/// Graph IR -> lower-layouts -> graph-to-schedule (gpuScheduleOptions, then
/// `schedule`: options as text, "tile-m=64 micro-m=4") ->
/// graph-to-tile-kernels: Tile IR kernels and a launch plan for `backend`.
/// Fails (with a message on stderr) when `schedule` does not parse.
mlir::LogicalResult buildGpuGraphPipeline(mlir::OpPassManager &pm, const std::string &backend,
                                          const std::string &schedule = "");

/// Registers `tessera-gpu-graph-pipeline{backend=NAME}` with tessera-opt.
void registerGpuPipelines();

}  // namespace tessera::conversion

#endif
