// The register blocks of the hand-built attention kernels (LaneTile.h): the
// grid a block gets, and block products built with it, run by the Tile IR
// reference interpreter over blocks that the lane grid does not divide,
// against a plain product. Every element of the block is written once.
#include <gtest/gtest.h>

#include <cmath>

#include "Conversion/GraphToTile/LaneTile.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "tessera/InitAll.h"
#include "tessera/Reference/TileInterpreter.h"

namespace tessera::conversion::build {
namespace {

TEST(LaneTileTest, ChoosesTheGridWithTheLeastWorkPerLane) {
  // 64 lanes over 64 x 32: 8 x 8 lanes of 8 x 4 (12 loads for 32 FMAs per
  // step), not a row of lanes with 1 x 32 (33 loads).
  LaneTile t = LaneTile::choose(64, 32, 64);
  EXPECT_EQ(t.lm * t.ln, 64);
  EXPECT_EQ(t.rm * t.rn, 32);
  EXPECT_EQ(t.rm + t.rn, 12);
  // Blocks smaller than the group: each lane one element or a clamped copy.
  t = LaneTile::choose(2, 3, 64);
  EXPECT_EQ(t.rm, 1);
  EXPECT_EQ(t.rn, 1);
  EXPECT_GE(t.lm, 2);
  EXPECT_GE(t.ln, 3);
}

class LaneTileProductTest : public ::testing::TestWithParam<std::array<int64_t, 4>> {
 protected:
  LaneTileProductTest() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    context_ = std::make_unique<mlir::MLIRContext>(registry);
    context_->loadAllAvailableDialects();
  }
  std::unique_ptr<mlir::MLIRContext> context_;
};

// C[m x n] = A[m x k] B[k x n] over one group, row-major flat buffers.
TEST_P(LaneTileProductTest, MatchesThePlainProduct) {
  const auto [m, n, k, lanes] = GetParam();
  mlir::OpBuilder b(context_.get());
  mlir::Location l = b.getUnknownLoc();
  auto module = mlir::ModuleOp::create(l);
  b.setInsertionPointToEnd(module.getBody());
  auto f32 = b.getF32Type();
  auto ty = [&](int64_t size) { return mlir::MemRefType::get({size}, f32); };
  auto fn = b.create<mlir::func::FuncOp>(l, "product", b.getFunctionType({ty(m * k), ty(k * n), ty(m * n)}, {}));
  fn->setAttr("tessera_tile.group_size", b.getDenseI64ArrayAttr({lanes}));
  fn->setAttr("tessera_tile.grid", b.getDenseI64ArrayAttr({1}));
  mlir::OpBuilder kb = mlir::OpBuilder::atBlockBegin(fn.addEntryBlock());
  B x{kb, l};
  mlir::Value A = fn.getArgument(0), Bm = fn.getArgument(1), C = fn.getArgument(2);
  mlir::Value lane = kb.create<tile::LaneIdOp>(l, kb.getIndexType(), uint64_t{0});
  const LaneTileIds ids = laneTileIds(x, LaneTile::choose(m, n, lanes), lane);
  llvm::SmallVector<mlir::Value> zeros(ids.size(), x.f(0.0));
  llvm::SmallVector<mlir::Value> acc = blockedProduct(
      kb, l, ids, k, zeros, [&](B &u, int64_t i, mlir::Value kk) { return u.load(A, u.add(u.mul(ids.rows[i], k), kk)); },
      [&](B &u, mlir::Value kk, int64_t j) { return u.load(Bm, u.add(u.mul(kk, n), ids.cols[j])); });
  // Adds rather than stores: an element written twice shows.
  forOwned(kb, l, ids, [&](B &u, int64_t i, int64_t j) {
    mlir::Value at = u.add(u.mul(ids.rows[i], n), ids.cols[j]);
    u.store(u.fadd(u.load(C, at), acc[i * ids.shape.rn + j]), C, at);
  });
  kb.create<mlir::func::ReturnOp>(l);

  std::vector<double> a(m * k), bv(k * n), want(m * n, 0.0);
  for (int64_t i = 0; i < m * k; ++i) a[i] = double((i * 7) % 11) - 5;
  for (int64_t i = 0; i < k * n; ++i) bv[i] = double((i * 5) % 13) - 6;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t kk = 0; kk < k; ++kk) want[i * n + j] += a[i * k + kk] * bv[kk * n + j];
  std::vector<reference::TileArgument> args = {{a}, {bv}, {std::vector<double>(m * n, 0.0)}};
  reference::TileLaunch launch;
  launch.grid = {1, 1, 1};
  launch.group_size = {uint32_t(lanes), 1, 1};
  ASSERT_EQ(reference::RunTileKernel(fn, launch, &args), "");
  for (int64_t i = 0; i < m * n; ++i) EXPECT_EQ(args[2].values[i], want[i]) << "element " << i;
  module->erase();
}

// (m, n, k, lanes): the attention blocks (64 x 32 over 64 lanes), blocks the
// grid does not divide, smaller than the group, and one row.
INSTANTIATE_TEST_SUITE_P(Blocks, LaneTileProductTest,
                         ::testing::Values(std::array<int64_t, 4>{64, 32, 5, 64}, std::array<int64_t, 4>{7, 5, 3, 4},
                                           std::array<int64_t, 4>{33, 17, 4, 16}, std::array<int64_t, 4>{2, 3, 2, 64},
                                           std::array<int64_t, 4>{1, 40, 3, 8}));

}  // namespace
}  // namespace tessera::conversion::build
