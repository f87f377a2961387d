// The warp-specialized Hopper GEMM (mma=wgmma warp-specialize=1,
// WgmmaGemmKernel.h) as Tile IR, run by the reference interpreter, which
// models its stage protocol: a copy is visible to a lane once its stage's
// commit has come and the lane waits for it; a producer's acquire returns
// once every consumer lane has released the stage; a wait or acquire of
// the wrong phase, or one nothing will ever satisfy, is an error naming
// the op. No GPU here runs the kernel (only cuda sm_90a lowers it), so
// this is its functional check: the product against a plain one, and
// the protocol's failure modes (a missing acquire overwrites a stage
// that is still being read; a missing release never lets the producer
// go on).
#include <gtest/gtest.h>

#include "TestContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "tessera/Conversion/GraphToTile/Pipeline.h"
#include "tessera/Conversion/TileToGPU/KernelLowering.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "tessera/InitAll.h"
#include "tessera/Reference/TileInterpreter.h"

namespace tessera::reference {
namespace {

constexpr int64_t kM = 128, kN = 128, kK = 320;

const char kMatmul[] = R"mlir(
func.func @mm(%a: tensor<128x320xf16>, %b: tensor<320x128xf16>) -> tensor<128x128xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<128x320xf16>, tensor<320x128xf16> -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}
)mlir";

class WarpSpecializedGemmTest : public ::testing::Test {
 protected:
  WarpSpecializedGemmTest() : context_(unittest::NewContext(&diagnostics_)) {}

  /// The GEMM kernel of kMatmul under `schedule`, or null.
  mlir::func::FuncOp Build(const std::string &schedule) {
    module_ = mlir::parseSourceString<mlir::ModuleOp>(kMatmul, context_.get());
    if (!module_) return {};
    mlir::PassManager pm(context_.get());
    if (mlir::failed(conversion::buildGpuGraphPipeline(pm, "cuda", schedule)) || mlir::failed(pm.run(*module_)))
      return {};
    for (auto f : module_->getOps<mlir::func::FuncOp>())
      if (f->hasAttr("tessera_tile.group_size")) return f;
    return {};
  }

  /// Runs `kernel` on A (rows i: values (7i + 3k) % 9 - 4) and B; returns
  /// the interpreter's error and puts C in *c.
  std::string Run(mlir::func::FuncOp kernel, std::vector<double> *c) {
    std::vector<TileArgument> args(3);
    args[0].values.resize(kM * kK);
    args[1].values.resize(kK * kN);
    args[2].values.assign(kM * kN, 0.0);
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t k = 0; k < kK; ++k) args[0].values[i * kK + k] = double((7 * i + 3 * k) % 9) - 4;
    for (int64_t k = 0; k < kK; ++k)
      for (int64_t j = 0; j < kN; ++j) args[1].values[k * kN + j] = double((5 * k + 2 * j) % 7) - 3;
    TileLaunch launch;
    llvm::ArrayRef<int64_t> grid = kernel->getAttrOfType<mlir::DenseI64ArrayAttr>("tessera_tile.grid").asArrayRef();
    llvm::ArrayRef<int64_t> group =
        kernel->getAttrOfType<mlir::DenseI64ArrayAttr>("tessera_tile.group_size").asArrayRef();
    for (size_t d = 0; d < grid.size(); ++d) launch.grid[d] = static_cast<uint32_t>(grid[d]);
    for (size_t d = 0; d < group.size(); ++d) launch.group_size[d] = static_cast<uint32_t>(group[d]);
    launch.subgroup_size = 32;
    std::string e = RunTileKernel(kernel, launch, &args);
    *c = args[2].values;
    return e;
  }

  static std::vector<double> Expected() {
    std::vector<double> c(kM * kN, 0.0);
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t j = 0; j < kN; ++j)
        for (int64_t k = 0; k < kK; ++k)
          c[i * kN + j] += (double((7 * i + 3 * k) % 9) - 4) * (double((5 * k + 2 * j) % 7) - 3);
    return c;
  }

  /// Runs `kernel` and compares C with Expected(), element by element.
  void ExpectThePlainProduct(mlir::func::FuncOp kernel) {
    std::vector<double> c;
    ASSERT_EQ(Run(kernel, &c), "");
    const std::vector<double> want = Expected();
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(c[i], want[i]) << "element " << i;
  }

  template <class Op>
  int Count(mlir::func::FuncOp f) {
    int n = 0;
    f.walk([&](Op) { ++n; });
    return n;
  }

  std::string diagnostics_;  // before context_: its handler writes here
  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

TEST_F(WarpSpecializedGemmTest, ProducerAndConsumersComputeTheProduct) {
  // 128 x 64 tiles: two consumer warpgroups and the producer (384 lanes);
  // K = 320 is five slices over two stages, so each stage is refilled
  // (acquired) twice, with both phases.
  mlir::func::FuncOp k = Build("mma=wgmma tile-m=128 tile-n=64 stages=2 warp-specialize=1");
  ASSERT_TRUE(k) << diagnostics_;
  EXPECT_EQ(k->getAttrOfType<mlir::DenseI64ArrayAttr>("tessera_tile.group_size")[0], 384);
  EXPECT_EQ(Count<tile::TileLoadAcquireOp>(k), 1);
  EXPECT_EQ(Count<tile::TileLoadReleaseOp>(k), 1);
  EXPECT_EQ(Count<tile::SetMaxRegistersOp>(k), 2);
  // The consumers keep one multiply in flight and wait for the last one.
  int inFlight = 0;
  k.walk([&](tile::WarpgroupMmaOp op) { inFlight += op.getPending() == 1; });
  EXPECT_EQ(inFlight, 1);
  EXPECT_EQ(Count<tile::WarpgroupMmaWaitOp>(k), 1);
  ExpectThePlainProduct(k);
}

TEST_F(WarpSpecializedGemmTest, OneConsumerKeepsTheLaunchRegisters) {
  // 64-row tiles: one consumer (256 lanes, 255 registers each at launch):
  // no register budgets; three stages.
  mlir::func::FuncOp k = Build("mma=wgmma tile-m=64 tile-n=128 stages=3 warp-specialize=1");
  ASSERT_TRUE(k) << diagnostics_;
  EXPECT_EQ(k->getAttrOfType<mlir::DenseI64ArrayAttr>("tessera_tile.group_size")[0], 256);
  EXPECT_EQ(Count<tile::SetMaxRegistersOp>(k), 0);
  ExpectThePlainProduct(k);
}

TEST_F(WarpSpecializedGemmTest, WithoutTheAcquireTheProducerOverwritesAStageBeingRead) {
  // The interpreter runs lane 0 (the producer) first: without its acquire
  // it refills every stage before any consumer has read the slice there.
  mlir::func::FuncOp k = Build("mma=wgmma tile-m=128 tile-n=64 stages=2 warp-specialize=1");
  ASSERT_TRUE(k) << diagnostics_;
  llvm::SmallVector<mlir::Operation *> acquires;
  k.walk([&](tile::TileLoadAcquireOp op) { acquires.push_back(op); });
  for (mlir::Operation *op : acquires) op->erase();
  std::vector<double> c;
  ASSERT_EQ(Run(k, &c), "");
  EXPECT_NE(c, Expected());
}

TEST_F(WarpSpecializedGemmTest, WithoutTheReleaseTheProducerWaitsForever) {
  mlir::func::FuncOp k = Build("mma=wgmma tile-m=128 tile-n=64 stages=2 warp-specialize=1");
  ASSERT_TRUE(k) << diagnostics_;
  llvm::SmallVector<mlir::Operation *> releases;
  k.walk([&](tile::TileLoadReleaseOp op) { releases.push_back(op); });
  for (mlir::Operation *op : releases) op->erase();
  std::vector<double> c;
  const std::string e = Run(k, &c);
  EXPECT_NE(e.find("waits forever at tile_load_acquire of stage 0"), std::string::npos) << e;
  EXPECT_NE(e.find("deadlock"), std::string::npos) << e;
}

TEST_F(WarpSpecializedGemmTest, AWaitOfTheWrongPhaseIsAnError) {
  // Every consumer waits with phase 0: its second wait of stage 0 (slice
  // 2) expects phase 1, which on hardware returns at once (a race).
  mlir::func::FuncOp k = Build("mma=wgmma tile-m=128 tile-n=64 stages=2 warp-specialize=1");
  ASSERT_TRUE(k) << diagnostics_;
  k.walk([&](tile::TileLoadWaitOp op) {
    mlir::OpBuilder b(op);
    op.getPhaseMutable().assign(b.create<mlir::arith::ConstantIndexOp>(op.getLoc(), 0));
  });
  std::vector<double> c;
  const std::string e = Run(k, &c);
  EXPECT_NE(e.find("phase 0 of stage 0, but this is lane 128's wait number 1 of the stage: its phase is 1"),
            std::string::npos)
      << e;
}

TEST_F(WarpSpecializedGemmTest, OtherTargetsNameTheOpTheyCannotLower) {
  // Without a tensor-copy engine a single-lane copy is seen by its lane
  // only: the per-lane lowering refuses the pipeline.
  mlir::func::FuncOp k = Build("mma=wgmma tile-m=128 tile-n=64 stages=2 warp-specialize=1");
  ASSERT_TRUE(k) << diagnostics_;
  EXPECT_TRUE(mlir::failed(gpu_lowering::expandTileLoads(k)));
  EXPECT_NE(diagnostics_.find("belongs to a warp-specialized pipeline, which needs a tensor-copy engine"),
            std::string::npos)
      << diagnostics_;
}

}  // namespace
}  // namespace tessera::reference
