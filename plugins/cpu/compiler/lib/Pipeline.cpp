//===- Pipeline.cpp - the cpu lowering pipelines --------------------------===//
#include "tessera/cpu/Pipeline.h"

#include <mutex>

#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Schedule/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/cpu/Passes.h"

using namespace mlir;

LogicalResult tessera::cpu::buildGraphToLoopsPipeline(OpPassManager &pm,
                                                      const GraphPipelineOptions &o) {
  pm.addPass(graph::createLowerQuantization());
  pm.addPass(graph::createLowerLayouts());
  graph::GraphToScheduleOptions gs;
  gs.tileM = o.tileM;
  gs.tileN = o.tileN;
  gs.tileK = o.tileK;
  gs.microM = o.microM ? o.microM : o.matmulLanes == 16 ? 12 : 6;
  gs.microN = o.microN ? o.microN : o.matmulLanes == 16 ? 32 : 16;
  // Row tiles (elementwise, softmax, reductions) in the target's vectors
  // too: a 2048 x 1024 softmax took 1.31 ms in 8 lanes against 0.92 ms in
  // 16 on an AVX-512 host (medians of 5 alternated runs of 200 iterations).
  gs.vectorWidth = o.matmulLanes;
  gs.attnBlockQ = o.attnBlockQ;
  gs.attnBlockKV = o.attnBlockKV;
  std::unique_ptr<Pass> schedule = graph::createGraphToSchedule(gs);
  if (!o.schedule.empty() && failed(schedule->initializeOptions(o.schedule))) return failure();
  pm.addPass(std::move(schedule));
  ScheduleToCPUOptions sc;
  sc.hardwareF16 = o.hardwareF16;
  sc.matmulLanes = o.matmulLanes;
  pm.addPass(createScheduleToCPU(sc));
  // Vector exps (the online softmax) become polynomials, not libm calls.
  pm.addPass(createExpandVectorExp());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return success();
}

void tessera::cpu::buildTileToLoopsPipeline(OpPassManager &pm) {
  pm.addPass(schedule::createScheduleToTile());
  pm.addNestedPass<func::FuncOp>(tile::createPromoteBF16());
  pm.addNestedPass<func::FuncOp>(tile::createWorkItemLoops());
  pm.addPass(createTileToCPU());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void tessera::cpu::buildLoopsToLLVMPipeline(OpPassManager &pm) {
  // Bare pointers for memrefs: kernels take static shapes, and the ABI
  // wrapper (tessera-cpu-kernel-abi) passes the launch context's pointers.
  // The upstream passes are named in text: register them once in this
  // process unless a tool (tessera-opt) already did.
  static std::once_flag registered;
  std::call_once(registered, [] {
    registerAllPasses();  // the same pass twice is allowed (same TypeID)
  });
  static const char kPipeline[] =
      "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      "convert-vector-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
      "convert-memref-to-llvm,"
      "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
      "convert-cf-to-llvm,reconcile-unrealized-casts";
  if (failed(parsePassPipeline(kPipeline, pm, llvm::errs())))
    llvm::report_fatal_error("tessera: upstream passes are not registered");
  pm.addPass(createCPUKernelABI());
  pm.addPass(createCanonicalizerPass());
}

void tessera::cpu::registerCPUPipelines() {
  PassPipelineRegistration<>(
      "tessera-cpu-graph-pipeline",
      "Graph IR -> Schedule IR -> vector loops -> LLVM dialect with kernel ABI",
      [](OpPassManager &pm) {
        (void)buildGraphToLoopsPipeline(pm);  // no schedule text: cannot fail
        buildLoopsToLLVMPipeline(pm);
      });
  PassPipelineRegistration<>(
      "tessera-cpu-tile-pipeline",
      "Schedule/Tile IR -> work-item loops -> LLVM dialect with kernel ABI",
      [](OpPassManager &pm) {
        buildTileToLoopsPipeline(pm);
        buildLoopsToLLVMPipeline(pm);
      });
}
