// The Tile IR reference interpreter on kernels written for the test: the
// values it computes, subgroup semantics for two subgroup sizes, and the
// kernels it must refuse (divergent barriers, out-of-bounds accesses,
// arguments of the wrong size, ops it does not know) with a message that
// names the op and its location. Also the Graph IR reference on compare and
// select built with their C++ builders (the API passes that build them use).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Reference/GraphInterpreter.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "tessera/InitAll.h"
#include "tessera/Reference/TileInterpreter.h"

namespace tessera::reference {
namespace {

class TileInterpreterTest : public ::testing::Test {
 protected:
  TileInterpreterTest() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    context_ = std::make_unique<mlir::MLIRContext>(registry);
    context_->getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
  }
  mlir::func::FuncOp Parse(const std::string &text) {
    module_ = mlir::parseSourceString<mlir::ModuleOp>(text, context_.get());
    EXPECT_TRUE(module_) << text;
    return module_ ? *module_->getOps<mlir::func::FuncOp>().begin() : mlir::func::FuncOp();
  }
  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

std::vector<double> Ramp(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return v;
}

TEST_F(TileInterpreterTest, ComputesEveryLaneOfEveryGroup) {
  auto fn = Parse(R"(
func.func @axpb(%a: f32, %x: memref<64xf32>, %y: memref<64xf32>)
    attributes {tessera_tile.group_size = array<i64: 16>, tessera_tile.grid = array<i64: 4>} {
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %c16 = arith.constant 16 : index
  %base = arith.muli %g, %c16 : index
  %i = arith.addi %base, %l : index
  %v = memref.load %x[%i] : memref<64xf32>
  %one = arith.constant 1.0 : f32
  %m = arith.mulf %a, %v : f32
  %r = arith.addf %m, %one : f32
  memref.store %r, %y[%i] : memref<64xf32>
  return
})");
  std::vector<TileArgument> args = {{{2.0}}, {Ramp(64)}, {std::vector<double>(64, 0)}};
  TileLaunch launch;
  launch.grid = {4, 1, 1};
  launch.group_size = {16, 1, 1};
  ASSERT_EQ(RunTileKernel(fn, launch, &args), "");
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(args[2].values[i], 2.0 * i + 1) << i;
}

// A butterfly sum over the subgroup with xor shuffles, then lane 0 of each
// subgroup writes it: the result depends on the subgroup size, as it does
// on hardware.
const char kButterfly[] = R"(
func.func @butterfly(%x: memref<16xf32>, %out: memref<16xf32>)
    attributes {tessera_tile.group_size = array<i64: 16>, tessera_tile.grid = array<i64: 1>} {
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<16xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %a1 = tessera_tile.shuffle xor %v, %c1 : f32
  %s1 = arith.addf %v, %a1 : f32
  %a2 = tessera_tile.shuffle xor %s1, %c2 : f32
  %s2 = arith.addf %s1, %a2 : f32
  %a4 = tessera_tile.shuffle xor %s2, %c4 : f32
  %s4 = arith.addf %s2, %a4 : f32
  memref.store %s4, %out[%l] : memref<16xf32>
  return
})";

TEST_F(TileInterpreterTest, ShufflesStayWithinTheSubgroup) {
  auto fn = Parse(kButterfly);
  for (uint32_t sg : {8u, 1u}) {
    std::vector<TileArgument> args = {{Ramp(16)}, {std::vector<double>(16, 0)}};
    TileLaunch launch;
    launch.group_size = {16, 1, 1};
    launch.subgroup_size = sg;
    ASSERT_EQ(RunTileKernel(fn, launch, &args), "");
    for (size_t l = 0; l < 16; ++l) {
      // Subgroups of 8: each lane ends with the sum of its subgroup (0..7:
      // 28, 8..15: 92).  Subgroups of 1: every shuffle reads the lane's own
      // value, so each step doubles it.
      double want = sg == 8 ? (l < 8 ? 28 : 92) : 8.0 * l;
      EXPECT_EQ(args[1].values[l], want) << "subgroup " << sg << " lane " << l;
    }
  }
}

TEST_F(TileInterpreterTest, BarrierOrdersSharedMemory) {
  // Lane i writes shared[i]; after the barrier lane i reads shared[15 - i].
  auto fn = Parse(R"(
func.func @reverse(%x: memref<16xf32>, %out: memref<16xf32>)
    attributes {tessera_tile.group_size = array<i64: 16>, tessera_tile.grid = array<i64: 1>} {
  %s = tessera_tile.shared_alloc : memref<16xf32, 3>
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<16xf32>
  memref.store %v, %s[%l] : memref<16xf32, 3>
  tessera_tile.barrier
  %c15 = arith.constant 15 : index
  %j = arith.subi %c15, %l : index
  %w = memref.load %s[%j] : memref<16xf32, 3>
  memref.store %w, %out[%l] : memref<16xf32>
  return
})");
  std::vector<TileArgument> args = {{Ramp(16)}, {std::vector<double>(16, 0)}};
  TileLaunch launch;
  launch.group_size = {16, 1, 1};
  ASSERT_EQ(RunTileKernel(fn, launch, &args), "");
  for (size_t l = 0; l < 16; ++l) EXPECT_EQ(args[1].values[l], 15.0 - l);
}

TEST_F(TileInterpreterTest, DivergentBarrierIsAnError) {
  auto fn = Parse(R"(
func.func @divergent(%x: memref<16xf32>)
    attributes {tessera_tile.group_size = array<i64: 16>, tessera_tile.grid = array<i64: 1>} {
  %l = tessera_tile.lane_id 0 : index
  %c8 = arith.constant 8 : index
  %low = arith.cmpi ult, %l, %c8 : index
  scf.if %low {
    tessera_tile.barrier
  }
  return
})");
  std::vector<TileArgument> args = {{Ramp(16)}};
  TileLaunch launch;
  launch.group_size = {16, 1, 1};
  std::string e = RunTileKernel(fn, launch, &args);
  EXPECT_NE(e.find("a barrier that not every lane of the group reaches"), std::string::npos) << e;
}

TEST_F(TileInterpreterTest, OutOfBoundsAccessIsAnErrorNamingTheOp) {
  auto fn = Parse(R"(
func.func @overrun(%x: memref<16xf32>)
    attributes {tessera_tile.group_size = array<i64: 17>, tessera_tile.grid = array<i64: 1>} {
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<16xf32>
  return
})");
  std::vector<TileArgument> args = {{Ramp(16)}};
  TileLaunch launch;
  launch.group_size = {17, 1, 1};
  std::string e = RunTileKernel(fn, launch, &args);
  EXPECT_NE(e.find("'memref.load': index 16 out of bounds for dimension 0 of size 16"), std::string::npos) << e;
  EXPECT_EQ(e.rfind("-:5:8: ", 0), 0u) << "the location: " << e;
}

TEST_F(TileInterpreterTest, AccessPastTheBufferThroughAViewIsOutOfBounds) {
  // The view's own shape allows [0, 8); its offset puts elements 4..7 past
  // the 8-element buffer: the storage check must report it as out of bounds
  // (tessera-run refuses to run such a kernel on a device).
  auto fn = Parse(R"(
func.func @view(%x: memref<8xf32>)
    attributes {tessera_tile.group_size = array<i64: 1>, tessera_tile.grid = array<i64: 1>} {
  %c7 = arith.constant 7 : index
  %v = memref.subview %x[4] [8] [1] : memref<8xf32> to memref<8xf32, strided<[1], offset: 4>>
  %e = memref.load %v[%c7] : memref<8xf32, strided<[1], offset: 4>>
  return
})");
  std::vector<TileArgument> args = {{Ramp(8)}};
  TileFailure failure = TileFailure::kNone;
  std::string e = RunTileKernel(fn, TileLaunch(), &args, &failure);
  EXPECT_NE(e.find("access at element 11 out of bounds of its buffer of 8"), std::string::npos) << e;
  EXPECT_EQ(failure, TileFailure::kOutOfBounds);
}

// A loop whose condition never ends it: the limits report it, naming the
// loop, instead of hanging the caller.
constexpr const char *kEndlessWhile = R"(
func.func @endless(%x: memref<1xf32>)
    attributes {tessera_tile.group_size = array<i64: 2>, tessera_tile.grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.while (%i = %c0) : (index) -> index {
    %go = arith.cmpi sge, %i, %c0 : index
    scf.condition(%go) %i : index
  } do {
  ^bb0(%j: index):
    %n = arith.addi %j, %c1 : index
    scf.yield %n : index
  }
  return
})";

TEST_F(TileInterpreterTest, EndlessLoopStopsAtTheOperationLimitNamingTheLoop) {
  auto fn = Parse(kEndlessWhile);
  std::vector<TileArgument> args = {{{5}}};
  TileLaunch launch;
  launch.group_size = {2, 1, 1};
  launch.max_operations = 100000;
  TileFailure failure = TileFailure::kNone;
  std::string e = RunTileKernel(fn, launch, &args, &failure);
  EXPECT_EQ(failure, TileFailure::kLimit);
  EXPECT_NE(e.find("stopped after 100001 operations, a limit of 100000 operations, in the scf.while at -:6:"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("(group 0,0,0)"), std::string::npos) << e;
  EXPECT_EQ(args[0].values, (std::vector<double>{5})) << "nothing written back after a failure";
}

TEST_F(TileInterpreterTest, EndlessLoopStopsAtTheTimeLimit) {
  auto fn = Parse(kEndlessWhile);
  std::vector<TileArgument> args = {{{5}}};
  TileLaunch launch;
  launch.group_size = {2, 1, 1};
  launch.max_seconds = 0.2;
  TileFailure failure = TileFailure::kNone;
  std::string e = RunTileKernel(fn, launch, &args, &failure);
  EXPECT_EQ(failure, TileFailure::kLimit);
  EXPECT_NE(e.find("a limit of 0.2 s, in the scf.while"), std::string::npos) << e;
}

TEST_F(TileInterpreterTest, HugeGridOfAnEmptyKernelStopsAtTheLimit) {
  // No op but the return: each group counts as one operation.
  auto fn = Parse(R"(
func.func @nothing(%x: memref<1xf32>)
    attributes {tessera_tile.group_size = array<i64: 1>, tessera_tile.grid = array<i64: 1>} {
  return
})");
  std::vector<TileArgument> args = {{{5}}};
  TileLaunch launch;
  launch.grid = {4294967295u, 4294967295u, 4294967295u};
  launch.max_operations = 1000;
  TileFailure failure = TileFailure::kNone;
  std::string e = RunTileKernel(fn, launch, &args, &failure);
  EXPECT_EQ(failure, TileFailure::kLimit) << e;
  EXPECT_NE(e.find("stopped after 1001 operations"), std::string::npos) << e;
  EXPECT_NE(e.find("(group 1000,0,0)"), std::string::npos) << e;
}

TEST_F(TileInterpreterTest, LimitsLeaveAFinishingKernelAlone) {
  auto fn = Parse(kButterfly);
  std::vector<TileArgument> args = {{Ramp(16)}, {std::vector<double>(16, -1)}};
  TileLaunch launch;
  launch.group_size = {16, 1, 1};
  launch.max_operations = 1000000;
  launch.max_seconds = 60;
  TileFailure failure = TileFailure::kOther;
  ASSERT_EQ(RunTileKernel(fn, launch, &args, &failure), "");
  EXPECT_EQ(failure, TileFailure::kNone);
}

TEST_F(TileInterpreterTest, LoopNearInt64MaxEndsInsteadOfOverflowing) {
  // i += step would pass INT64_MAX after the first iteration (2^62 + 2^62;
  // the bounds are exact in a double, as the interpreter holds them): one
  // iteration, then the end (no signed overflow, no endless loop).
  auto fn = Parse(R"(
func.func @far(%x: memref<1xf32>)
    attributes {tessera_tile.group_size = array<i64: 1>, tessera_tile.grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %lb = arith.constant 4611686018427387904 : index
  %ub = arith.constant 6917529027641081856 : index
  %step = arith.constant 4611686018427387904 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %lb to %ub step %step {
    %v = memref.load %x[%c0] : memref<1xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%c0] : memref<1xf32>
  }
  return
})");
  std::vector<TileArgument> args = {{{0}}};
  TileLaunch launch;
  launch.max_operations = 1000;
  ASSERT_EQ(RunTileKernel(fn, launch, &args), "");
  EXPECT_EQ(args[0].values, (std::vector<double>{1}));
}

TEST_F(TileInterpreterTest, I64ArithmeticPastTwoTo63WrapsWithoutUndefinedBehaviour) {
  // 2^62 * 4 = 2^64 wraps to 0; INT64_MIN % -1 is 0.  The interpreter holds
  // integers as doubles and converted 2^64 to int64 directly (undefined
  // behaviour: UBSan's float-cast-overflow), and computed INT64_MIN % -1
  // (an overflow trap on x86).
  auto fn = Parse(R"(
func.func @wide(%x: memref<2xi64>)
    attributes {tessera_tile.group_size = array<i64: 1>, tessera_tile.grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %big = arith.constant 4611686018427387904 : i64
  %four = arith.constant 4 : i64
  %p = arith.muli %big, %four : i64
  %q = arith.addi %p, %big : i64
  memref.store %q, %x[%c0] : memref<2xi64>
  %min = arith.constant -9223372036854775808 : i64
  %m1 = arith.constant -1 : i64
  %r = arith.remsi %min, %m1 : i64
  memref.store %r, %x[%c1] : memref<2xi64>
  return
})");
  std::vector<TileArgument> args = {{{7, 7}}};
  ASSERT_EQ(RunTileKernel(fn, TileLaunch(), &args), "");
  EXPECT_EQ(args[0].values, (std::vector<double>{4611686018427387904.0, 0}));
}

TEST_F(TileInterpreterTest, ArgumentsOfTheWrongSizeAreRefusedBeforeAnyWrite) {
  auto fn = Parse(kButterfly);
  std::vector<TileArgument> args = {{Ramp(8)}, {std::vector<double>(16, -1)}};
  TileLaunch launch;
  launch.group_size = {16, 1, 1};
  std::string e = RunTileKernel(fn, launch, &args);
  EXPECT_NE(e.find("argument 0 holds 8 values; the kernel's memref has 16"), std::string::npos) << e;
  for (double v : args[1].values) EXPECT_EQ(v, -1);
}

TEST_F(TileInterpreterTest, UnknownOpIsAnErrorNamingIt) {
  auto fn = Parse(R"(
func.func @bits(%x: memref<4xf32>)
    attributes {tessera_tile.group_size = array<i64: 1>, tessera_tile.grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %b = arith.bitcast %v : f32 to i32
  return
})");
  std::vector<TileArgument> args = {{Ramp(4)}};
  TileLaunch launch;
  std::string e = RunTileKernel(fn, launch, &args);
  EXPECT_NE(e.find("'arith.bitcast': not supported by the Tile IR reference interpreter"), std::string::npos) << e;
}

TEST_F(TileInterpreterTest, F32ArithmeticRoundsLikeFloat) {
  // 1 + 2^-30 is 1 in f32: the interpreter must not keep double precision.
  auto fn = Parse(R"(
func.func @round(%x: memref<1xf32>)
    attributes {tessera_tile.group_size = array<i64: 1>, tessera_tile.grid = array<i64: 1>} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %tiny = arith.constant 9.31322574615478515625e-10 : f32
  %s = arith.addf %one, %tiny : f32
  %d = arith.subf %s, %one : f32
  memref.store %d, %x[%c0] : memref<1xf32>
  return
})");
  std::vector<TileArgument> args = {{{5.0}}};
  TileLaunch launch;
  ASSERT_EQ(RunTileKernel(fn, launch, &args), "");
  EXPECT_EQ(args[0].values[0], 0.0);
}

TEST_F(TileInterpreterTest, RoundToBF16GivesTheIntegerRoundingsBits) {
  // Each lane rounds x[lane]; the bits are stored as i16 (signed values).
  auto fn = Parse(R"(
func.func @bits(%x: memref<6xf32>, %y: memref<6xi16>)
    attributes {tessera_tile.group_size = array<i64: 6>, tessera_tile.grid = array<i64: 1>} {
  %l = tessera_tile.lane_id 0 : index
  %v = memref.load %x[%l] : memref<6xf32>
  %b = tessera_tile.round_to_bf16 %v
  memref.store %b, %y[%l] : memref<6xi16>
  return
})");
  auto f32 = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<double>(f);
  };
  // 1.0; a tie rounding down to even (0x3f80 8000 -> 0x3f80); a tie rounding
  // up to even (0x3f81 8000 -> 0x3f82); just above a tie; -inf; a negative
  // signalling NaN (quieted, sign kept: 0xffa0 | 0x40).
  std::vector<TileArgument> args = {
      {{f32(0x3f800000), f32(0x3f808000), f32(0x3f818000), f32(0x3f808001), f32(0xff800000), 0.0}},
      {std::vector<double>(6, 0.0)}};
  // A double NaN loses its payload: write the f32 NaN's value as the
  // interpreter reads a buffer (float), through a float.
  float nan;
  const uint32_t nanBits = 0xffa00001u;
  std::memcpy(&nan, &nanBits, sizeof nan);
  args[0].values[5] = static_cast<double>(nan);
  TileLaunch launch;
  launch.group_size = {6, 1, 1};
  ASSERT_EQ(RunTileKernel(fn, launch, &args), "");
  const int16_t want[] = {0x3f80, 0x3f80, 0x3f82, 0x3f81, static_cast<int16_t>(0xff80),
                          static_cast<int16_t>(0xffe0)};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(args[1].values[i], want[i]) << i;
}

// CompareOp::build(b, state, predicate, lhs, rhs) and SelectOp::build(b,
// state, cond, a, b) infer their result types (broadcast shape; i1 for
// compare, a's element type for select); the reference follows IEEE
// (every comparison with NaN is false but ne) in both of its modes.
TEST(GraphCompareSelectTest, BuildersInferTypesAndTheReferenceFollowsIeee) {
  namespace g = tessera::graph;
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadDialect<g::GraphDialect, mlir::func::FuncDialect>();
  mlir::OpBuilder b(&context);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto f32 = b.getF32Type();
  auto mat = mlir::RankedTensorType::get({2, 3}, f32), row = mlir::RankedTensorType::get({3}, f32);
  auto mask = mlir::RankedTensorType::get({2, 3}, b.getI1Type());
  auto fn = b.create<mlir::func::FuncOp>(loc, "cs", b.getFunctionType({mat, row}, {mask, mask, mat}));
  mlir::Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  mlir::Value a = body->getArgument(0), r = body->getArgument(1);
  mlir::OperationState lt(loc, g::CompareOp::getOperationName());
  g::CompareOp::build(b, lt, g::ComparePredicate::lt, a, r);
  mlir::Value less = b.create(lt)->getResult(0);
  mlir::Value ne = b.create<g::CompareOp>(loc, g::ComparePredicate::ne, r, a).getResult();
  mlir::OperationState sel(loc, g::SelectOp::getOperationName());
  g::SelectOp::build(b, sel, less, r, a);
  mlir::Value chosen = b.create(sel)->getResult(0);
  b.create<mlir::func::ReturnOp>(loc, mlir::ValueRange{less, ne, chosen});
  EXPECT_EQ(less.getType(), mask);
  EXPECT_EQ(ne.getType(), mask);
  EXPECT_EQ(chosen.getType(), mat);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*module)));
  EXPECT_EQ(static_cast<int>(g::ComparePredicate::eq), 0);
  EXPECT_EQ(static_cast<int>(g::ComparePredicate::ge), 5);

  const double nan = std::nan("");
  HostTensors in = {{1, nan, 3, 2, 5, 0}, {2, 2, nan}};
  for (bool exact : {false, true}) {
    ReferenceOptions options;
    options.exact = exact;
    HostTensors out;
    ASSERT_EQ(ReferenceGraph(fn, in, &out, nullptr, options), "");
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0], (std::vector<double>{1, 0, 0, 0, 0, 0}));  // a < r
    EXPECT_EQ(out[1], (std::vector<double>{1, 1, 1, 0, 1, 1}));  // r != a
    // where a < r: r (broadcast row), else a
    EXPECT_EQ(out[2][0], 2);
    EXPECT_TRUE(std::isnan(out[2][1]));
    EXPECT_EQ(out[2][2], 3);
    EXPECT_EQ(out[2][3], 2);
    EXPECT_EQ(out[2][5], 0);
  }
}

}  // namespace
}  // namespace tessera::reference
