//===- Pipeline.cpp - Graph IR -> GPU kernels + launch plan ---------------===//
#include "tessera/Conversion/GraphToTile/Pipeline.h"

#include "mlir/Pass/PassRegistry.h"
#include "tessera/Conversion/GraphToTile/Passes.h"

using namespace mlir;

tessera::graph::GraphToScheduleOptions tessera::conversion::gpuScheduleOptions() {
  graph::GraphToScheduleOptions o;
  o.tileM = 128;
  o.tileN = 128;
  o.tileK = 16;
  o.microM = 8;
  o.microN = 8;
  o.clampTiles = false;
  o.mergeMatmulChains = false;
  // Attention stays matmul + softmax + matmul by default
  // (`--schedule attention=1`: the flash_attention kernel,
  // AttentionKernel.h). The backward follows: with `attention=1` an
  // attention_grad becomes flash_attention_grad (its three kernels,
  // AttentionGradKernel.h) unless `attention-backward=0`. Their lanes own
  // register blocks (LaneTile.h), which pay with bigger blocks: 64 x 32,
  // halved where the head dims would not fit the 32 KiB of shared memory
  // that lavapipe (and most devices) give a group.
  o.attention = false;
  o.attnBlockQ = 64;
  o.attnBlockKV = 32;
  o.attnSharedKiB = 32;
  return o;
}

LogicalResult tessera::conversion::buildGpuGraphPipeline(OpPassManager &pm, const std::string &backend,
                                                         const std::string &schedule) {
  pm.addPass(graph::createLowerQuantization());
  pm.addPass(graph::createLowerLayouts());
  std::unique_ptr<Pass> s = graph::createGraphToSchedule(gpuScheduleOptions());
  if (!schedule.empty() && failed(s->initializeOptions(schedule))) return failure();
  pm.addPass(std::move(s));
  GraphToTileKernelsOptions k;
  k.backend = backend;
  pm.addPass(createGraphToTileKernels(k));
  return success();
}

namespace {
struct GpuGraphPipelineOptions : public PassPipelineOptions<GpuGraphPipelineOptions> {
  Option<std::string> backend{*this, "backend", llvm::cl::desc("backend named in diagnostics"),
                              llvm::cl::init("gpu")};
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("graph-to-schedule options over the GPU schedule"),
                               llvm::cl::init("")};
};
}  // namespace

void tessera::conversion::registerGpuPipelines() {
  // registerPassPipeline rather than PassPipelineRegistration: a schedule
  // that does not parse must fail the tool, not run an empty pipeline.
  registerPassPipeline(
      "tessera-gpu-graph-pipeline",
      "Graph IR -> Schedule IR (the GPU schedule) -> Tile IR kernels + launch plan",
      [](OpPassManager &pm, StringRef text, function_ref<LogicalResult(const Twine &)> error) {
        GpuGraphPipelineOptions o;
        if (failed(o.parseFromString(text))) return failure();
        // MLIR 16 keeps the braces of a nested option list: schedule={a=1 b=2}.
        StringRef schedule = o.schedule;
        if (schedule.startswith("{") && schedule.endswith("}")) schedule = schedule.drop_front().drop_back();
        if (failed(buildGpuGraphPipeline(pm, o.backend, schedule.str())))
          return error("tessera-gpu-graph-pipeline: schedule '" + schedule +
                       "' is not a list of --tessera-graph-to-schedule options");
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) { handler(GpuGraphPipelineOptions()); });
}
