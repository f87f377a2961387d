// readSpmdPlan on the plans --tessera-overlap-collectives writes: slices of
// whole rows and the operands of a concat along dim 0 become views (value,
// byte offset) instead of buffers, collectives keep their stream; and the
// plans a runner could not run without copies or could not order are
// diagnostics, not wrong results.
#include <gtest/gtest.h>

#include "TestContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "tessera/InitAll.h"

namespace tessera::graph {
namespace {

class SpmdPlanTest : public ::testing::Test {
 protected:
  SpmdPlanTest() : context_(unittest::NewContext(&diagnostics_)) {}
  mlir::OwningOpRef<mlir::ModuleOp> Parse(const std::string& text) {
    return mlir::parseSourceString<mlir::ModuleOp>(text, context_.get());
  }
  // The plan of `fn` in `text`, after the passes named in `pipeline`.
  mlir::FailureOr<SpmdPlan> Read(mlir::ModuleOp m, const std::string& fn) {
    return readSpmdPlan(m.lookupSymbol<mlir::func::FuncOp>(fn));
  }
  std::string diagnostics_;  // before context_: its handler writes here
  std::unique_ptr<mlir::MLIRContext> context_;
};

constexpr const char* kMlp = R"mlir(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @mlp(%x: tensor<16x32xf32>,
               %w1: tensor<32x64xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
               %w2: tensor<64x32xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> tensor<16x32xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %h = tessera_graph.relu %h0 : tensor<16x64xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %y0 = tessera_graph.all_reduce sum %p over @mesh ["tp"] : tensor<16x32xf32> -> tensor<16x32xf32>
  %y = tessera_graph.relu %y0 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
)mlir";

TEST_F(SpmdPlanTest, OverlappedPlanIsViewsAndTwoStreams) {
  auto m = Parse(kMlp);
  ASSERT_TRUE(m) << diagnostics_;
  mlir::PassManager pm(context_.get());
  pm.addPass(createSpmdStages());
  pm.addPass(createOverlapCollectives({4}));
  ASSERT_TRUE(mlir::succeeded(pm.run(*m))) << diagnostics_;
  auto plan = Read(*m, "mlp");
  ASSERT_TRUE(mlir::succeeded(plan)) << diagnostics_;
  // 4 block computes + 4 all_reduces + the last stage.
  ASSERT_EQ(plan->steps.size(), 9u);
  int reduces = 0;
  std::vector<unsigned> reduced;
  for (const SpmdStep& s : plan->steps) {
    if (s.kind == SpmdStep::kAllReduce) {
      ++reduces;
      EXPECT_EQ(s.stream, 1u);
      EXPECT_EQ(s.count, 4 * 32);
      reduced.push_back(s.outputs[0]);
    } else {
      EXPECT_EQ(s.stream, 0u);
    }
  }
  EXPECT_EQ(reduces, 4);
  // Stage calls read views of %x (value 0) at 4-row steps.
  int64_t expect = 0;
  for (const SpmdStep& s : plan->steps) {
    if (s.kind != SpmdStep::kStage || s.inputs.size() != 3) continue;
    const SpmdValue& v = plan->values[s.inputs[0]];
    EXPECT_EQ(v.aliasOf, 0);
    EXPECT_EQ(v.byteOffset, expect);
    EXPECT_EQ(v.bytes, 4 * 32 * 4);
    expect += 4 * 32 * 4;
  }
  EXPECT_EQ(expect, 16 * 32 * 4);
  // The reduced blocks are views of one [16, 32] value, in order.
  ASSERT_EQ(reduced.size(), 4u);
  const int whole = plan->values[reduced[0]].aliasOf;
  ASSERT_GE(whole, 0);
  EXPECT_EQ(plan->values[whole].bytes, 16 * 32 * 4);
  EXPECT_EQ(plan->values[whole].aliasOf, -1);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plan->values[reduced[i]].aliasOf, whole);
    EXPECT_EQ(plan->values[reduced[i]].byteOffset, static_cast<int64_t>(i * 4 * 32 * 4));
  }
}

// Hand-written plans a runner cannot take: each a diagnostic naming why.
TEST_F(SpmdPlanTest, BadPlansAreDiagnostics) {
  const std::string head = R"mlir(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func private @s(%a: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = tessera_graph.relu %a : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
func.func @plan(%x: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {tessera.mesh = @mesh, tessera.spmd_plan} {
)mlir";
  struct Case {
    const char* body;
    const char* error;
  } cases[] = {
      // Columns are not contiguous: the slice would need a copy.
      {R"(%v = tessera_graph.slice %x offsets = [0, 8] strides = [1, 1] : tensor<4x16xf32> -> tensor<4x8xf32>
          %c = call @s(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>)",
       "must take whole rows"},
      // An argument is the caller's buffer: it cannot be part of another.
      {R"(%j = tessera_graph.concat %x, %x dim = 0 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
          %c = call @s(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>)",
       "joins values computed by the plan's steps"},
      // One value in two places at once.
      {R"(%a = call @s(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
          %j = tessera_graph.concat %a, %a dim = 0 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
          %c = call @s(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>)",
       "joins values computed by the plan's steps"},
      {R"(%a = call @s(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
          %b = call @s(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
          %j = tessera_graph.concat %a, %b dim = 1 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x32xf32>
          %c = call @s(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>)",
       "must join row-major tensors along dim 0"},
      {R"(%c = tessera_graph.all_reduce sum %x over @mesh ["tp"] {tessera.stream = 2 : i64} : tensor<4x16xf32> -> tensor<4x16xf32>)",
       "must be 0 (the program's stream) or 1"},
      {R"(%c = tessera_graph.reshape %x : tensor<4x16xf32> -> tensor<4x16xf32>)", "is not allowed in an SPMD plan"},
  };
  for (const Case& c : cases) {
    diagnostics_.clear();
    const std::string text = head + c.body + "\n  return %c : tensor<4x16xf32>\n}\n";
    auto m = Parse(text);
    ASSERT_TRUE(m) << text << "\n" << diagnostics_;
    EXPECT_TRUE(mlir::failed(Read(*m, "plan"))) << text;
    EXPECT_NE(diagnostics_.find(c.error), std::string::npos) << text << "\ngot: " << diagnostics_;
  }
}

TEST_F(SpmdPlanTest, ReturningAViewIsADiagnostic) {
  auto m = Parse(R"mlir(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @plan(%x: tensor<4x16xf32>) -> tensor<2x16xf32> attributes {tessera.mesh = @mesh, tessera.spmd_plan} {
  %v = tessera_graph.slice %x offsets = [2, 0] strides = [1, 1] : tensor<4x16xf32> -> tensor<2x16xf32>
  return %v : tensor<2x16xf32>
}
)mlir");
  ASSERT_TRUE(m) << diagnostics_;
  EXPECT_TRUE(mlir::failed(Read(*m, "plan")));
  EXPECT_NE(diagnostics_.find("a view (slice or concat operand)"), std::string::npos) << diagnostics_;
}

}  // namespace
}  // namespace tessera::graph
