// --tessera-shard-propagation against the global program: each case is a
// `tessera.global_view` function evaluated twice by the references -- on
// global tensors (ReferenceGraph) and, after the pass, on every device's
// local parts (ReferenceSpmd) -- and the devices' results, put together by
// the declared result shardings, must equal the global results (1e-5
// relative: the partial sums add in another order). Also the number of
// collectives the pass inserts where the design names it (the Megatron
// MLP: exactly one all_reduce).
#include <gtest/gtest.h>

#include "TestContext.h"

#include <cstring>
#include <random>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "tessera/Dialect/Graph/Transforms/ShardPropagation.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "tessera/InitAll.h"
#include "tessera/Reference/GraphInterpreter.h"
#include "tessera/Reference/SpmdInterpreter.h"

namespace tessera::reference {
namespace {

using Shape = std::vector<int64_t>;

class ShardPropagationTest : public ::testing::Test {
 protected:
  ShardPropagationTest() : context_(unittest::NewContext(&diagnostics_)) {}

  // Device `d`'s part of a global row-major tensor under `dims` (per dim
  // the mesh axes' indices, the major first; none: whole).
  static std::vector<double> Part(const std::vector<double>& g, const Shape& shape,
                                  const std::vector<std::vector<int>>& dims, const std::vector<int64_t>& mesh,
                                  int64_t d) {
    std::vector<int64_t> c = graph::meshCoords(mesh, d);
    Shape local = shape, block(shape.size(), 0);
    for (size_t k = 0; k < dims.size(); ++k)
      for (int a : dims[k]) {
        local[k] /= mesh[a];
        block[k] = block[k] * mesh[a] + c[a];
      }
    int64_t n = 1;
    for (int64_t s : local) n *= s;
    std::vector<double> out(n);
    std::vector<int64_t> idx(local.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t f = 0;
      for (size_t k = 0; k < local.size(); ++k) {
        int64_t gi = idx[k] + block[k] * local[k];
        f = f * shape[k] + gi;
      }
      out[i] = g[f];
      for (size_t k = local.size(); k-- > 0;)
        if (++idx[k] < local[k]) break;
        else idx[k] = 0;
    }
    return out;
  }

  static std::vector<std::vector<int>> DimsOf(mlir::func::FuncOp f, bool result, unsigned i, graph::MeshOp mesh,
                                              int64_t rank, bool* partial) {
    auto attr = result ? f.getResultAttrOfType<graph::ShardAttr>(i, graph::kShardingAttr)
                       : f.getArgAttrOfType<graph::ShardAttr>(i, graph::kShardingAttr);
    mlir::FailureOr<graph::SpmdSharding> s = graph::readSharding(f, attr, mesh, rank);
    EXPECT_TRUE(mlir::succeeded(s));
    *partial = mlir::succeeded(s) && !s->reduceAxes.empty();
    return mlir::succeeded(s) ? s->dimAxes : std::vector<std::vector<int>>(rank);
  }

  // Runs the case; returns the propagated function's text.
  std::string Check(const std::string& text) {
    diagnostics_.clear();
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, context_.get());
    EXPECT_TRUE(module) << diagnostics_;
    if (!module) return "";
    auto global = *module->getOps<mlir::func::FuncOp>().begin();
    auto globalCopy = mlir::cast<mlir::func::FuncOp>(global->clone());
    globalCopy.setName("global_copy");
    module->push_back(globalCopy);
    EXPECT_TRUE(mlir::succeeded(graph::propagateShardings(global, /*annotate=*/true, searchRuns_))) << diagnostics_;
    EXPECT_TRUE(mlir::succeeded(mlir::verify(*module))) << diagnostics_;
    auto fn = module->lookupSymbol<mlir::func::FuncOp>(global.getName());
    auto mesh = graph::findSpmdMesh(fn);
    EXPECT_TRUE(mlir::succeeded(mesh) && *mesh);
    std::vector<int64_t> meshShape((*mesh).getShape().begin(), (*mesh).getShape().end());
    int64_t devices = 1;
    for (int64_t s : meshShape) devices *= s;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    HostTensors globals;
    std::vector<HostTensors> locals(devices);
    for (unsigned i = 0; i < globalCopy.getNumArguments(); ++i) {
      auto t = globalCopy.getArgumentTypes()[i].cast<mlir::RankedTensorType>();
      std::vector<double> g(t.getNumElements());
      // Integers (indices): -2 .. 20, past both ends of the cases' tables.
      std::uniform_int_distribution<int> ints(-2, 20);
      for (double& x : g) x = t.getElementType().isa<mlir::IntegerType>() ? ints(rng) : static_cast<float>(u(rng));
      bool partial = false;
      std::vector<std::vector<int>> dims = DimsOf(fn, false, i, *mesh, t.getRank(), &partial);
      EXPECT_FALSE(partial) << "cases give whole arguments";
      for (int64_t d = 0; d < devices; ++d) locals[d].push_back(Part(g, Shape(t.getShape()), dims, meshShape, d));
      globals.push_back(std::move(g));
    }
    ReferenceOptions exact;
    exact.exact = true;
    HostTensors want;
    EXPECT_EQ(ReferenceGraph(globalCopy, globals, &want, nullptr, exact), "");
    std::vector<HostTensors> got;
    EXPECT_EQ(ReferenceSpmd(fn, *mesh, locals, &got, exact), "");
    for (unsigned r = 0; r < globalCopy.getNumResults() && !got.empty(); ++r) {
      auto t = globalCopy.getResultTypes()[r].cast<mlir::RankedTensorType>();
      bool partial = false;
      std::vector<std::vector<int>> dims = DimsOf(fn, true, r, *mesh, t.getRank(), &partial);
      for (int64_t d = 0; d < devices; ++d) {
        std::vector<double> part = Part(want[r], Shape(t.getShape()), dims, meshShape, d);
        EXPECT_EQ(part.size(), got[d][r].size());
        if (part.size() != got[d][r].size()) return "";
        for (size_t e = 0; e < part.size(); ++e)
          EXPECT_NEAR(got[d][r][e], part[e], 1e-5 * std::max(1.0, std::fabs(part[e])))
              << "device " << d << ", result " << r << "[" << e << "]";
      }
    }
    std::string out;
    llvm::raw_string_ostream os(out);
    fn.print(os);
    return os.str();
  }

  static int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  std::string diagnostics_;  // before context_: its handler writes here
  int searchRuns_ = graph::kShardSearchRuns;  // 1: the rules alone
  std::unique_ptr<mlir::MLIRContext> context_;
};

const char* kShardTP = R"(#tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>)";

TEST_F(ShardPropagationTest, MegatronMlpGetsOneAllReduce) {
  std::string text = std::string(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @mlp(%x: tensor<8x6xf32>, %w1: tensor<6x12xf32> {tessera_graph.sharding = )") + kShardTP + R"(},
    %b1: tensor<12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>},
    %w2: tensor<12x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %b2: tensor<4xf32>) -> tensor<8x4xf32> attributes {tessera.global_view} {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<8x6xf32>, tensor<6x12xf32> -> tensor<8x12xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<8x12xf32>, tensor<12xf32>
  %h = tessera_graph.gelu %h1 : tensor<8x12xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<8x12xf32>, tensor<12x4xf32> -> tensor<8x4xf32>
  %y = tessera_graph.add %p, %b2 : tensor<8x4xf32>, tensor<4xf32>
  return %y : tensor<8x4xf32>
})";
  std::string out = Check(text);
  EXPECT_EQ(Count(out, "all_reduce"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather") + Count(out, "reduce_scatter"), 0) << out;
}

TEST_F(ShardPropagationTest, DataParallelLossOnAThreeAxisMesh) {
  // dp x tp x pp = 2 x 2 x 1: rows over dp, the MLP split over tp; the
  // mean over the rows is a partial sum over dp.
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp", "pp"] shape = [2, 2, 1]
func.func @step(
    %x: tensor<8x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %w1: tensor<6x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w2: tensor<8x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<8x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
        tensor<1x1xf32>) attributes {tessera.global_view} {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<8x6xf32>, tensor<6x8xf32> -> tensor<8x8xf32>
  %h = tessera_graph.tanh %h0 : tensor<8x8xf32>
  %y = tessera_graph.matmul %h, %w2 : tensor<8x8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %y2 = tessera_graph.mul %y, %y : tensor<8x4xf32>, tensor<8x4xf32>
  %l = tessera_graph.reduce mean %y2 dims = [0, 1] order = pairwise : tensor<8x4xf32> -> tensor<1x1xf32>
  return %y, %l : tensor<8x4xf32>, tensor<1x1xf32>
})");
  EXPECT_NE(out.find("all_reduce sum"), std::string::npos) << out;
}

TEST_F(ShardPropagationTest, StochasticRoundingOfPartsGivesTheGlobalBits) {
  // Each device's stochastic casts key their random bits by the global
  // index (mesh_position + global strides), so the parts put together are
  // the global program's bits (a different neighbour is 2^-8 away, far
  // outside the check's 1e-5): a tensor split over both axes of a 2 x 3
  // mesh, a matmul split by columns with the cast after it, and a
  // replicated cast (no position).
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 3]
func.func @rounded(
    %x: tensor<6x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", "tp"], replicate = [], reduce = []>},
    %a: tensor<10x4xf32>,
    %w: tensor<4x9xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %z: tensor<5x7xf32>)
    -> (tensor<6x12xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", "tp"], replicate = [], reduce = []>},
        tensor<10x9xf8E4M3FN> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
        tensor<5x7xf16>) attributes {tessera.global_view} {
  %y = tessera_graph.mul %x, %x : tensor<6x12xf32>, tensor<6x12xf32>
  %r = tessera_graph.cast %y {rounding = "stochastic", seed = 3} : tensor<6x12xf32> -> tensor<6x12xbf16>
  %c = tessera_graph.matmul %a, %w : tensor<10x4xf32>, tensor<4x9xf32> -> tensor<10x9xf32>
  %q = tessera_graph.cast %c {rounding = "stochastic", seed = 4} : tensor<10x9xf32> -> tensor<10x9xf8E4M3FN>
  %h = tessera_graph.cast %z {rounding = "stochastic", seed = 5} : tensor<5x7xf32> -> tensor<5x7xf16>
  return %r, %q, %h : tensor<6x12xbf16>, tensor<10x9xf8E4M3FN>, tensor<5x7xf16>
})");
  EXPECT_EQ(Count(out, "mesh_position"), 1) << out;
  EXPECT_EQ(Count(out, "mesh_offsets = array<i64: 36, 4>"), 1) << out;  // 3 rows of 12 per dp, 4 columns per tp
  EXPECT_EQ(Count(out, "mesh_offsets = array<i64: 0, 3>"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather") + Count(out, "all_reduce") + Count(out, "reduce_scatter"), 0) << out;
}

TEST_F(ShardPropagationTest, RowOpsAndShardedResults) {
  // Four devices on one axis (4 x 1 x 1): layernorm keeps rows split; a
  // softmax over the split dim gathers it; a partial sum returned sharded
  // becomes a reduce_scatter; a replicated value returned sharded keeps
  // each device's part.
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp", "pp"] shape = [4, 1, 1]
func.func @rows(
    %x: tensor<8x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %g: tensor<16xf32>, %b: tensor<16xf32>,
    %w: tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %x2: tensor<8x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "dp"], replicate = [], reduce = []>})
    -> (tensor<8x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
        tensor<8x16xf32>,
        tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
        tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "dp"], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %n = tessera_graph.layernorm %x, %g, %b : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %s = tessera_graph.softmax %x dim = 0 : tensor<8x16xf32>
  %p = tessera_graph.matmul %x2, %w : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
  return %n, %s, %p, %w : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32>, tensor<16x8xf32>
})");
  EXPECT_EQ(Count(out, "reduce_scatter"), 1) << out;  // the partial p
  EXPECT_EQ(Count(out, "all_gather"), 2) << out;      // softmax's dim; w's rows, before it takes its columns
  // w's columns: a local part, selected by the dp coordinate among its
  // four static column slices (no transposes, no gather)
  EXPECT_EQ(Count(out, "tessera_graph.select"), 3) << out;
  EXPECT_EQ(Count(out, "tessera_graph.slice"), 4) << out;
  EXPECT_EQ(Count(out, "tessera_graph.gather") + Count(out, "tessera_graph.transpose"), 0) << out;
  EXPECT_EQ(Count(out, "all_reduce"), 0) << out;
}

const char* kShardDP = R"(#tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>)";

// One SGD step of a data-parallel layer: x and dy sharded by `batch`, W
// replicated, on a mesh of 4 devices (`mesh`: the shape of dp, tp, pp).
std::string SgdStep(const char* batch, const char* mesh) {
  return std::string(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp", "pp"] shape = )") + mesh + R"(
func.func @sgd(%x: tensor<16x8xf32> {tessera_graph.sharding = )" + batch + R"(},
    %dy: tensor<16x4xf32> {tessera_graph.sharding = )" + batch + R"(}, %w: tensor<8x4xf32>)
    -> tensor<8x4xf32> attributes {tessera.global_view} {
  %xt = tessera_graph.transpose %x perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %g = tessera_graph.matmul %xt, %dy : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %lr = arith.constant dense<0.1> : tensor<1xf32>
  %u = tessera_graph.mul %g, %lr : tensor<8x4xf32>, tensor<1xf32>
  %w2 = tessera_graph.sub %w, %u : tensor<8x4xf32>, tensor<8x4xf32>
  return %w2 : tensor<8x4xf32>
})";
}

TEST_F(ShardPropagationTest, DataParallelSgdGetsOneAllReduce) {
  // The weight gradient x^T dy of a batch split over dp is a partial sum
  // (the transpose keeps x split; nothing gathers it); the update of the
  // replicated weight all-reduces it once.
  std::string out = Check(SgdStep(kShardDP, "[4, 1, 1]"));
  EXPECT_EQ(Count(out, "all_reduce"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather") + Count(out, "reduce_scatter"), 0) << out;
}

// One Adam step of a data-parallel layer (x and dy split over dp, W
// replicated); the moments m and v split over dp or replicated.
std::string AdamStep(bool shardedMoments) {
  const std::string dp = std::string(" {tessera_graph.sharding = ") + kShardDP + "}";
  const std::string state = shardedMoments ? dp : "";
  return R"(
tessera_graph.mesh @mesh axes = ["dp", "tp", "pp"] shape = [2, 2, 1]
func.func @adam(%x: tensor<16x8xf32>)" + dp + R"(, %dy: tensor<16x4xf32>)" + dp + R"(, %w: tensor<8x4xf32>,
    %m: tensor<8x4xf32>)" + state + R"(, %v: tensor<8x4xf32>)" + state + R"()
    -> (tensor<8x4xf32>, tensor<8x4xf32>)" + state + R"(, tensor<8x4xf32>)" + state + R"() attributes {tessera.global_view} {
  %xt = tessera_graph.transpose %x perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %g = tessera_graph.matmul %xt, %dy : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %b1 = arith.constant dense<0.9> : tensor<1xf32>
  %c1 = arith.constant dense<0.1> : tensor<1xf32>
  %b2 = arith.constant dense<0.999> : tensor<1xf32>
  %c2 = arith.constant dense<0.001> : tensor<1xf32>
  %eps = arith.constant dense<1.0e-3> : tensor<1xf32>
  %lr = arith.constant dense<0.01> : tensor<1xf32>
  %m1 = tessera_graph.mul %m, %b1 : tensor<8x4xf32>, tensor<1xf32>
  %g1 = tessera_graph.mul %g, %c1 : tensor<8x4xf32>, tensor<1xf32>
  %mn = tessera_graph.add %m1, %g1 : tensor<8x4xf32>, tensor<8x4xf32>
  %vv = tessera_graph.abs %v : tensor<8x4xf32>
  %v1 = tessera_graph.mul %vv, %b2 : tensor<8x4xf32>, tensor<1xf32>
  %gg = tessera_graph.mul %g, %g : tensor<8x4xf32>, tensor<8x4xf32>
  %g2 = tessera_graph.mul %gg, %c2 : tensor<8x4xf32>, tensor<1xf32>
  %vn = tessera_graph.add %v1, %g2 : tensor<8x4xf32>, tensor<8x4xf32>
  %r = tessera_graph.sqrt %vn : tensor<8x4xf32>
  %d = tessera_graph.add %r, %eps : tensor<8x4xf32>, tensor<1xf32>
  %s = tessera_graph.div %mn, %d : tensor<8x4xf32>, tensor<8x4xf32>
  %u = tessera_graph.mul %s, %lr : tensor<8x4xf32>, tensor<1xf32>
  %wn = tessera_graph.sub %w, %u : tensor<8x4xf32>, tensor<8x4xf32>
  return %wn, %mn, %vn : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
})";
}

TEST_F(ShardPropagationTest, ShardedOptimizerStateGetsReduceScatterAndAllGather) {
  // Moments split over dp (ZeRO stage 1): the gradient is reduce-scattered
  // once (half an all_reduce's bytes), every update term is computed on the
  // device's rows (the replicated weight takes its part locally), and the
  // new weight is all-gathered once. (abs: the test's second moments are
  // random.)
  std::string out = Check(AdamStep(/*shardedMoments=*/true));
  EXPECT_EQ(Count(out, "reduce_scatter"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather"), 1) << out;
  EXPECT_EQ(Count(out, "all_reduce"), 0) << out;
}

TEST_F(ShardPropagationTest, ReplicatedOptimizerStateGetsOneAllReduce) {
  // Replicated moments: the gradient, read by two terms, is all-reduced
  // once (not each term's partial sum: two all_reduce), then every device
  // updates all of W.
  std::string out = Check(AdamStep(/*shardedMoments=*/false));
  EXPECT_EQ(Count(out, "all_reduce"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather") + Count(out, "reduce_scatter"), 0) << out;
}

TEST_F(ShardPropagationTest, ReplicatedOperandsTakeTheirPart) {
  // A replicated bias added to columns split over tp takes its columns
  // (nothing gathered); a value split over tp meets another split over dp
  // on the same dim: the larger split stays.
  std::string out = Check(std::string(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
func.func @bias(%x: tensor<8x6xf32>, %w: tensor<6x12xf32> {tessera_graph.sharding = )") + kShardTP + R"(},
    %b: tensor<12xf32>, %z: tensor<8x12xf32> {tessera_graph.sharding = )" + kShardTP + R"(},
    %q: tensor<8x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "dp"], replicate = [], reduce = []>})
    -> (tensor<8x12xf32> {tessera_graph.sharding = )" + kShardTP + R"(}, tensor<8x12xf32>)
    attributes {tessera.global_view} {
  %h = tessera_graph.matmul %x, %w : tensor<8x6xf32>, tensor<6x12xf32> -> tensor<8x12xf32>
  %y = tessera_graph.add %h, %b : tensor<8x12xf32>, tensor<12xf32>
  %a = tessera_graph.add %y, %z : tensor<8x12xf32>, tensor<8x12xf32>
  %c = tessera_graph.mul %a, %q : tensor<8x12xf32>, tensor<8x12xf32>
  return %y, %c : tensor<8x12xf32>, tensor<8x12xf32>
})");
  EXPECT_EQ(Count(out, "all_reduce") + Count(out, "reduce_scatter"), 0) << out;
  // q's columns (dp) gathered for c, then its tp part taken; c gathered at the return.
  EXPECT_EQ(Count(out, "all_gather"), 2) << out;
}

TEST_F(ShardPropagationTest, OneSidedContractionPicksTheCheaperCollective) {
  // K split on one side only: a small result is cheaper to all-reduce than
  // the split side to gather (the whole side takes its part of K); a large
  // result is not, and the split side is gathered.
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @small(%x: tensor<8x64xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w: tensor<64x4xf32>) -> tensor<8x4xf32> attributes {tessera.global_view} {
  %y = tessera_graph.matmul %x, %w : tensor<8x64xf32>, tensor<64x4xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
})");
  EXPECT_EQ(Count(out, "all_reduce"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather"), 0) << out;
  out = Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @large(%x: tensor<8x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w: tensor<4x64xf32>) -> tensor<8x64xf32> attributes {tessera.global_view} {
  %y = tessera_graph.matmul %x, %w : tensor<8x4xf32>, tensor<4x64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
})");
  EXPECT_EQ(Count(out, "all_reduce"), 0) << out;
  EXPECT_EQ(Count(out, "all_gather"), 1) << out;
}

// Megatron self-attention from the projections q0, k0, v0 ([6, 8], 4
// heads of 2) to y = heads merged back @ wo: reshape + transpose into
// heads, causal scores, softmax, P V, merged back, Wo.
const char* kHeadsToOutput = R"(  %q1 = tessera_graph.reshape %q0 : tensor<6x8xf32> -> tensor<6x4x2xf32>
  %q = tessera_graph.transpose %q1 perm = [1, 0, 2] : tensor<6x4x2xf32> -> tensor<4x6x2xf32>
  %k1 = tessera_graph.reshape %k0 : tensor<6x8xf32> -> tensor<6x4x2xf32>
  %kt = tessera_graph.transpose %k1 perm = [1, 2, 0] : tensor<6x4x2xf32> -> tensor<4x2x6xf32>
  %v1 = tessera_graph.reshape %v0 : tensor<6x8xf32> -> tensor<6x4x2xf32>
  %v = tessera_graph.transpose %v1 perm = [1, 0, 2] : tensor<6x4x2xf32> -> tensor<4x6x2xf32>
  %s0 = tessera_graph.matmul %q, %kt : tensor<4x6x2xf32>, tensor<4x2x6xf32> -> tensor<4x6x6xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<6x6xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<6x6xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<6x6xi32>, tensor<6x6xi32> -> tensor<6x6xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s1 = tessera_graph.select %keep, %s0, %ninf : tensor<6x6xi1>, tensor<4x6x6xf32>, tensor<f32>
  %p = tessera_graph.softmax %s1 dim = 2 : tensor<4x6x6xf32>
  %o = tessera_graph.matmul %p, %v : tensor<4x6x6xf32>, tensor<4x6x2xf32> -> tensor<4x6x2xf32>
  %o1 = tessera_graph.transpose %o perm = [1, 0, 2] : tensor<4x6x2xf32> -> tensor<6x4x2xf32>
  %o2 = tessera_graph.reshape %o1 : tensor<6x4x2xf32> -> tensor<6x8xf32>
  %y = tessera_graph.matmul %o2, %wo : tensor<6x8xf32>, tensor<8x8xf32> -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
)";

TEST_F(ShardPropagationTest, MegatronAttentionGetsOneAllReduce) {
  // Heads made from column-split projections by reshape + transpose keep
  // the split on the heads; scores, causal mask, softmax and P V stay
  // local; merged back they meet Wo's split rows: one all_reduce.
  std::string w = R"(tensor<8x8xf32> {tessera_graph.sharding = )" + std::string(kShardTP) + "}";
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @attention(%x: tensor<6x8xf32>, %wq: )" + w + ", %wk: " + w + ", %wv: " + w + R"(,
    %wo: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> tensor<6x8xf32> attributes {tessera.global_view} {
  %q0 = tessera_graph.matmul %x, %wq : tensor<6x8xf32>, tensor<8x8xf32> -> tensor<6x8xf32>
  %k0 = tessera_graph.matmul %x, %wk : tensor<6x8xf32>, tensor<8x8xf32> -> tensor<6x8xf32>
  %v0 = tessera_graph.matmul %x, %wv : tensor<6x8xf32>, tensor<8x8xf32> -> tensor<6x8xf32>
)" + std::string(kHeadsToOutput) + R"(})");
  EXPECT_EQ(Count(out, "all_reduce"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather") + Count(out, "reduce_scatter"), 0) << out;
  EXPECT_NE(out.find("tensor<6x2x2xf32>"), std::string::npos) << "two heads per device: " << out;
}

TEST_F(ShardPropagationTest, FusedQkvSlicesKeepTheHeadsSplit) {
  // One fused Wqkv split by columns: q, k and v are slices of the split
  // columns. One all_gather of the projection (shared by the three
  // slices), then each slice takes its part again, so the heads and the
  // attention stay split and Wo's rows give the one all_reduce. The rule
  // alone: at these sizes the search gathers Wo's 128 bytes rather than
  // all-reduce y's 192 and computes the 6 tokens' attention on both
  // devices, which costs less by its measure (at the example's sizes,
  // examples/tp_attention_fused_qkv_global.mlir, it keeps the heads split).
  searchRuns_ = 1;
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @attention(%x: tensor<6x8xf32>,
    %wqkv: tensor<8x24xf32> {tessera_graph.sharding = )" + std::string(kShardTP) + R"(},
    %wo: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> tensor<6x8xf32> attributes {tessera.global_view} {
  %qkv = tessera_graph.matmul %x, %wqkv : tensor<6x8xf32>, tensor<8x24xf32> -> tensor<6x24xf32>
  %q0 = tessera_graph.slice %qkv offsets = [0, 0] strides = [1, 1] : tensor<6x24xf32> -> tensor<6x8xf32>
  %k0 = tessera_graph.slice %qkv offsets = [0, 8] strides = [1, 1] : tensor<6x24xf32> -> tensor<6x8xf32>
  %v0 = tessera_graph.slice %qkv offsets = [0, 16] strides = [1, 1] : tensor<6x24xf32> -> tensor<6x8xf32>
)" + std::string(kHeadsToOutput) + R"(})");
  EXPECT_EQ(Count(out, "all_gather"), 1) << out;
  EXPECT_EQ(Count(out, "all_reduce"), 1) << out;
  EXPECT_EQ(Count(out, "reduce_scatter"), 0) << out;
  EXPECT_NE(out.find("tensor<6x2x2xf32>"), std::string::npos) << "two heads per device: " << out;
}

TEST_F(ShardPropagationTest, ASplatConstantsPartIsASmallerSplat) {
  // A replicated splat constant meeting column-split values takes its part
  // as a constant of the part's shape: no slices, no selection by the
  // device's coordinate, no gather.
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @scaled(%a: tensor<16x8xf32>, %w: tensor<8x12xf32> {tessera_graph.sharding = )" + std::string(kShardTP) + R"(})
    -> (tensor<16x12xf32> {tessera_graph.sharding = )" + std::string(kShardTP) + R"(}) attributes {tessera.global_view} {
  %c = tessera_graph.matmul %a, %w : tensor<16x8xf32>, tensor<8x12xf32> -> tensor<16x12xf32>
  %k = arith.constant dense<0.3> : tensor<16x12xf32>
  %s = tessera_graph.mul %c, %k : tensor<16x12xf32>, tensor<16x12xf32>
  return %s : tensor<16x12xf32>
})");
  EXPECT_NE(out.find("dense<3.000000e-01> : tensor<16x6xf32>"), std::string::npos) << out;
  EXPECT_EQ(Count(out, "tessera_graph.slice") + Count(out, "tessera_graph.select") + Count(out, "gather"), 0) << out;
}

TEST_F(ShardPropagationTest, OneValueReadTwiceInTwoShardings) {
  // x @ x with x split [tp, dp]: as the lhs x is gathered along K (its
  // columns), as the rhs along K (its rows): two different values for the
  // two operands of one op (found by tests/random_programs.py --spmd: both
  // operands were given the last one, an op that does not verify).
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
func.func @square(%x: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", "dp"], replicate = [], reduce = []>})
    -> tensor<8x8xf32> attributes {tessera.global_view} {
  %y = tessera_graph.matmul %x, %x : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
})");
  EXPECT_EQ(Count(out, "all_gather"), 4) << out;  // both operands' K, then the result's rows and columns
}

TEST_F(ShardPropagationTest, APartAlongAnAxisThatSplitsAnotherDim) {
  // Batched x @ w: x split over tp along the batch, w over tp along K. w
  // takes its part of the batch over tp, so its K must be gathered first
  // (an axis splits one dim): gathering K after would join the K halves
  // of two different batch halves (found by tests/random_programs.py
  // --spmd, seed 4, program 181).
  Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @batched(%x: tensor<8x4x2xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", "", ""], replicate = [], reduce = []>},
    %w: tensor<8x2x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp", ""], replicate = [], reduce = []>})
    -> tensor<8x4x6xf32> attributes {tessera.global_view} {
  %y = tessera_graph.matmul %x, %w : tensor<8x4x2xf32>, tensor<8x2x6xf32> -> tensor<8x4x6xf32>
  return %y : tensor<8x4x6xf32>
})");
}

TEST_F(ShardPropagationTest, SlicePadAndConcatOfASplitDimSplitAgain) {
  // Rows split over dp, then cut (slice), extended (pad) and joined
  // (concat) along the rows: one all_gather of x shared by all three; the
  // slice and the concat take their parts again (the slice's relu runs on
  // parts); the pad, returned whole, is not split only to be gathered.
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
func.func @windows(
    %x: tensor<8x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>})
    -> (tensor<4x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
        tensor<10x6xf32>,
        tensor<16x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %s = tessera_graph.slice %x offsets = [3, 0] strides = [1, 1] : tensor<8x6xf32> -> tensor<4x6xf32>
  %r = tessera_graph.relu %s : tensor<4x6xf32>
  %p = tessera_graph.pad %x low = [1, 0] high = [1, 0] value = 0.0 : tensor<8x6xf32> -> tensor<10x6xf32>
  %j = tessera_graph.concat %x, %x dim = 0 : tensor<8x6xf32>, tensor<8x6xf32> -> tensor<16x6xf32>
  return %r, %p, %j : tensor<4x6xf32>, tensor<10x6xf32>, tensor<16x6xf32>
})");
  EXPECT_EQ(Count(out, "all_gather"), 1) << out;
  EXPECT_EQ(Count(out, "tessera_graph.gather"), 2) << "the slice's and the concat's parts: " << out;
  EXPECT_EQ(Count(out, "all_reduce") + Count(out, "reduce_scatter"), 0) << out;
  EXPECT_NE(out.find("tensor<2x6xf32>"), std::string::npos) << "relu on 2 of the 4 rows: " << out;
}

TEST_F(ShardPropagationTest, MegatronTransformerBlockGetsTwoAllReduces) {
  // A pre-norm block in the global view, x1 = x + Wo attention(heads(Wq, Wk,
  // Wv of layernorm(x))), y = x1 + W2 gelu(W1 layernorm(x1) + b1): the
  // norms and residuals on replicated rows, the heads and the hidden layer
  // split over tp; one all_reduce per sublayer, where its partial sum meets
  // the residual.
  const std::string cols = std::string(R"( {tessera_graph.sharding = )") + kShardTP + "}";
  const std::string rows =
      R"( {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})";
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @block(%x: tensor<6x8xf32>, %g1: tensor<8xf32>, %be1: tensor<8xf32>,
    %wq: tensor<8x8xf32>)" + cols + ", %wk: tensor<8x8xf32>" + cols + ", %wv: tensor<8x8xf32>" + cols +
                          ", %wo: tensor<8x8xf32>" + rows + R"(,
    %g2: tensor<8xf32>, %be2: tensor<8xf32>, %w1: tensor<8x16xf32>)" + cols + R"(,
    %b1: tensor<16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>},
    %w2: tensor<16x8xf32>)" + rows + R"() -> tensor<6x8xf32> attributes {tessera.global_view} {
  %h = tessera_graph.layernorm %x, %g1, %be1 : tensor<6x8xf32>, tensor<8xf32>, tensor<8xf32>
  %q0 = tessera_graph.matmul %h, %wq : tensor<6x8xf32>, tensor<8x8xf32> -> tensor<6x8xf32>
  %k0 = tessera_graph.matmul %h, %wk : tensor<6x8xf32>, tensor<8x8xf32> -> tensor<6x8xf32>
  %v0 = tessera_graph.matmul %h, %wv : tensor<6x8xf32>, tensor<8x8xf32> -> tensor<6x8xf32>
  %q1 = tessera_graph.reshape %q0 : tensor<6x8xf32> -> tensor<6x2x4xf32>
  %q = tessera_graph.transpose %q1 perm = [1, 0, 2] : tensor<6x2x4xf32> -> tensor<2x6x4xf32>
  %k1 = tessera_graph.reshape %k0 : tensor<6x8xf32> -> tensor<6x2x4xf32>
  %kt = tessera_graph.transpose %k1 perm = [1, 2, 0] : tensor<6x2x4xf32> -> tensor<2x4x6xf32>
  %v1 = tessera_graph.reshape %v0 : tensor<6x8xf32> -> tensor<6x2x4xf32>
  %v = tessera_graph.transpose %v1 perm = [1, 0, 2] : tensor<6x2x4xf32> -> tensor<2x6x4xf32>
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x6x4xf32>, tensor<2x4x6xf32> -> tensor<2x6x6xf32>
  %c = arith.constant dense<0.5> : tensor<f32>
  %s1 = tessera_graph.mul %s0, %c : tensor<2x6x6xf32>, tensor<f32>
  %p = tessera_graph.softmax %s1 dim = 2 : tensor<2x6x6xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x6x6xf32>, tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  %o1 = tessera_graph.transpose %o perm = [1, 0, 2] : tensor<2x6x4xf32> -> tensor<6x2x4xf32>
  %o2 = tessera_graph.reshape %o1 : tensor<6x2x4xf32> -> tensor<6x8xf32>
  %a = tessera_graph.matmul %o2, %wo : tensor<6x8xf32>, tensor<8x8xf32> -> tensor<6x8xf32>
  %x1 = tessera_graph.add %x, %a : tensor<6x8xf32>, tensor<6x8xf32>
  %h2 = tessera_graph.layernorm %x1, %g2, %be2 : tensor<6x8xf32>, tensor<8xf32>, tensor<8xf32>
  %u0 = tessera_graph.matmul %h2, %w1 : tensor<6x8xf32>, tensor<8x16xf32> -> tensor<6x16xf32>
  %u1 = tessera_graph.add %u0, %b1 : tensor<6x16xf32>, tensor<16xf32>
  %u = tessera_graph.gelu %u1 : tensor<6x16xf32>
  %m = tessera_graph.matmul %u, %w2 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  %y = tessera_graph.add %x1, %m : tensor<6x8xf32>, tensor<6x8xf32>
  return %y : tensor<6x8xf32>
})");
  EXPECT_EQ(Count(out, "all_reduce"), 2) << out;
  EXPECT_EQ(Count(out, "all_gather") + Count(out, "reduce_scatter"), 0) << out;
}

TEST_F(ShardPropagationTest, VocabularyParallelEmbeddingIsAPartialSum) {
  // Megatron's embedding: the table's rows split over tp; each device looks
  // the tokens up in its rows (the others zero), and the result is a
  // partial sum: one all_reduce at the return, the table never gathered.
  // Tokens -2 .. 20 over 16 rows: the clamp at both ends as gather does.
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @embed(%table: tensor<16x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %tok: tensor<6xi32>) -> tensor<6x4xf32> attributes {tessera.global_view} {
  %e = tessera_graph.gather %table, %tok : tensor<16x4xf32>, tensor<6xi32> -> tensor<6x4xf32>
  return %e : tensor<6x4xf32>
})");
  EXPECT_EQ(Count(out, "all_reduce"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather"), 0) << out;
  // More looked-up bytes than the table's: the table is gathered instead.
  out = Check(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @embed(%table: tensor<4x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %tok: tensor<8xi32>) -> tensor<8x4xf32> attributes {tessera.global_view} {
  %e = tessera_graph.gather %table, %tok : tensor<4x4xf32>, tensor<8xi32> -> tensor<8x4xf32>
  return %e : tensor<8x4xf32>
})");
  EXPECT_EQ(Count(out, "all_gather"), 1) << out;
  EXPECT_EQ(Count(out, "all_reduce"), 0) << out;
}

TEST_F(ShardPropagationTest, ShapeOpsKeepTheDimsTheyDoNotTouch) {
  // Rows split over dp through a slice of columns, a pad of columns, a
  // concat along columns, a broadcast_in_dim into a new dim, and an
  // embedding lookup of row-split tokens; a reshape whose split is not
  // the leading dim of its group ([8, 6] -> [48]: rows lead, stays; [6, 8]
  // columns -> [48] gathers) -- all checked against the global program.
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
func.func @shapes(
    %x: tensor<8x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %tok: tensor<8xi32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp"], replicate = [], reduce = []>},
    %table: tensor<5x3xf32>,
    %c: tensor<6x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "dp"], replicate = [], reduce = []>})
    -> (tensor<8x9xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
        tensor<8x2x6xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", "", ""], replicate = [], reduce = []>},
        tensor<48xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp"], replicate = [], reduce = []>},
        tensor<48xf32>)
    attributes {tessera.global_view} {
  %s = tessera_graph.slice %x offsets = [0, 1] strides = [1, 2] : tensor<8x6xf32> -> tensor<8x3xf32>
  %p = tessera_graph.pad %s low = [0, 1] high = [0, 2] value = 0.0 : tensor<8x3xf32> -> tensor<8x6xf32>
  %e = tessera_graph.gather %table, %tok : tensor<5x3xf32>, tensor<8xi32> -> tensor<8x3xf32>
  %j = tessera_graph.concat %p, %e dim = 1 : tensor<8x6xf32>, tensor<8x3xf32> -> tensor<8x9xf32>
  %b = tessera_graph.broadcast_in_dim %x dims = [0, 2] : tensor<8x6xf32> -> tensor<8x2x6xf32>
  %r = tessera_graph.reshape %x : tensor<8x6xf32> -> tensor<48xf32>
  %rc = tessera_graph.reshape %c : tensor<6x8xf32> -> tensor<48xf32>
  return %j, %b, %r, %rc : tensor<8x9xf32>, tensor<8x2x6xf32>, tensor<48xf32>, tensor<48xf32>
})");
  // Only %c's columns are gathered (a split that does not lead its group).
  EXPECT_EQ(Count(out, "all_gather"), 1) << out;
  EXPECT_EQ(Count(out, "all_reduce") + Count(out, "reduce_scatter"), 0) << out;
}

// One dim split over several axes (JAX's PartitionSpec(("dp", "tp"))):
// the batch over all four devices of a 2 x 2 mesh.
const char* kShardDPxTP = R"(#tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>)";

TEST_F(ShardPropagationTest, ABatchOverTwoAxesGetsOneAllReduceOverBoth) {
  // The SGD step with the batch over dp x tp: the weight gradient is a
  // partial sum over both axes, all-reduced once over both.
  std::string out = Check(SgdStep(kShardDPxTP, "[2, 2, 1]"));
  EXPECT_EQ(Count(out, R"(all_reduce sum %2 over @mesh ["dp", "tp"])"), 1) << out;
  EXPECT_EQ(Count(out, "all_reduce"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather") + Count(out, "reduce_scatter"), 0) << out;
  EXPECT_NE(out.find("tensor<4x8xf32>"), std::string::npos) << out;  // a quarter of the batch each
}

TEST_F(ShardPropagationTest, OptimizerStateOverTwoAxesIsReduceScatteredOverBoth) {
  // ZeRO over the whole 2 x 2 mesh: batch and moments over dp x tp; the
  // gradient is reduce-scattered once over both axes, the new weight
  // all-gathered once.
  std::string text = AdamStep(/*shardedMoments=*/true);
  for (size_t at; (at = text.find(kShardDP)) != std::string::npos;) text.replace(at, strlen(kShardDP), kShardDPxTP);
  std::string out = Check(text);
  EXPECT_EQ(Count(out, R"(reduce_scatter sum %)"), 1) << out;
  EXPECT_EQ(Count(out, R"(over @mesh ["dp", "tp"])"), 2) << out;
  EXPECT_EQ(Count(out, "all_gather"), 1) << out;
  EXPECT_EQ(Count(out, "all_reduce"), 0) << out;
}

TEST_F(ShardPropagationTest, SplitsOverSeveralAxesMeetOtherSplits) {
  // Rows over dp x tp meet rows over dp alone, rows over tp x dp (the other
  // order: other blocks) and columns over tp; a result returned over
  // tp x dp; a matmul whose M is over dp x tp and whose N would be over tp
  // (an axis cannot split both); a mean over the split rows (a partial sum
  // over both axes, scaled by 1/4).
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
func.func @meet(
    %a: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>},
    %b: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %c: tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["tp", "dp"], ""], replicate = [], reduce = []>},
    %w: tensor<8x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>})
    -> (tensor<8x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["tp", "dp"], ""], replicate = [], reduce = []>},
        tensor<8x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>},
        tensor<1x8xf32>)
    attributes {tessera.global_view} {
  %ab = tessera_graph.add %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
  %abc = tessera_graph.mul %ab, %c : tensor<8x8xf32>, tensor<8x8xf32>
  %p = tessera_graph.matmul %a, %w : tensor<8x8xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %m = tessera_graph.reduce mean %a dims = [0] order = pairwise : tensor<8x8xf32> -> tensor<1x8xf32>
  return %abc, %p, %m : tensor<8x8xf32>, tensor<8x4xf32>, tensor<1x8xf32>
})");
  EXPECT_NE(out.find(R"(all_reduce sum)"), std::string::npos) << out;  // the mean's partial sums
}

TEST_F(ShardPropagationTest, SequenceParallelMlpGathersRowsAndReduceScatters) {
  // Megatron's sequence parallelism on a dp x tp mesh: outside the MLP the
  // rows are split over dp x tp (the layernorm and the residual on a
  // quarter of them); the column-split matmul needs rows over dp only (one
  // all_gather over tp of the activations, cheaper than gathering W1), and
  // the row-split matmul's partial sum is reduce-scattered back onto rows
  // over dp x tp where the residual meets it. No all_reduce.
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 2]
func.func @sp_mlp(
    %x: tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>},
    %g: tensor<8xf32>, %b: tensor<8xf32>,
    %w1: tensor<8x16xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w2: tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> (tensor<16x8xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %n = tessera_graph.layernorm %x, %g, %b : tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>
  %h0 = tessera_graph.matmul %n, %w1 : tensor<16x8xf32>, tensor<8x16xf32> -> tensor<16x16xf32>
  %h = tessera_graph.gelu %h0 : tensor<16x16xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<16x16xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  %y = tessera_graph.add %p, %x : tensor<16x8xf32>, tensor<16x8xf32>
  return %y : tensor<16x8xf32>
})");
  EXPECT_EQ(Count(out, R"(all_gather %)"), 1) << out;
  EXPECT_EQ(Count(out, R"(over @mesh ["tp"] dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>)"), 1) << out;
  EXPECT_EQ(Count(out, R"(reduce_scatter sum %)"), 1) << out;
  EXPECT_EQ(Count(out, "all_reduce"), 0) << out;
}

TEST_F(ShardPropagationTest, StochasticRoundingOverSeveralAxesGivesTheGlobalBits) {
  // Rows over dp x tp of a 2 x 3 mesh (2 rows of 12 per block): a unit of
  // tp skips one block (24 elements), a unit of dp three (72).
  std::string out = Check(R"(
tessera_graph.mesh @mesh axes = ["dp", "tp"] shape = [2, 3]
func.func @rounded(
    %x: tensor<12x12xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>})
    -> (tensor<12x12xbf16> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = [["dp", "tp"], ""], replicate = [], reduce = []>})
    attributes {tessera.global_view} {
  %y = tessera_graph.mul %x, %x : tensor<12x12xf32>, tensor<12x12xf32>
  %r = tessera_graph.cast %y {rounding = "stochastic", seed = 3} : tensor<12x12xf32> -> tensor<12x12xbf16>
  return %r : tensor<12x12xbf16>
})");
  EXPECT_EQ(Count(out, "mesh_offsets = array<i64: 72, 24>"), 1) << out;
  EXPECT_EQ(Count(out, "all_gather") + Count(out, "all_reduce") + Count(out, "reduce_scatter"), 0) << out;
}

// x split along K, read by two contractions with replicated weights. For
// each alone the rules take the weight's part of K (an all_reduce of the
// 64 x 48 result, 12 KiB, is cheaper than gathering x, 16 KiB); for both,
// gathering x once (shared by the two matmuls) moves less than two
// all_reduces: the rules decide one op at a time, the search finds it.
const char* kTwoReaders = R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @two_readers(
    %x: tensor<64x128xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w1: tensor<128x48xf32>, %w2: tensor<128x48xf32>)
    -> (tensor<64x48xf32>, tensor<64x48xf32>) attributes {tessera.global_view} {
  %a = tessera_graph.matmul %x, %w1 : tensor<64x128xf32>, tensor<128x48xf32> -> tensor<64x48xf32>
  %b = tessera_graph.matmul %x, %w2 : tensor<64x128xf32>, tensor<128x48xf32> -> tensor<64x48xf32>
  %ta = tessera_graph.tanh %a : tensor<64x48xf32>
  %tb = tessera_graph.tanh %b : tensor<64x48xf32>
  return %ta, %tb : tensor<64x48xf32>, tensor<64x48xf32>
})";

TEST_F(ShardPropagationTest, TheSearchSharesAGatherTheRulesWouldNot) {
  std::string out = Check(kTwoReaders);
  EXPECT_EQ(Count(out, "all_gather"), 1) << out;
  EXPECT_EQ(Count(out, "all_reduce"), 0) << out;
  // The rules alone: two all_reduces.
  searchRuns_ = 1;
  out = Check(kTwoReaders);
  EXPECT_EQ(Count(out, "all_reduce"), 2) << out;
  EXPECT_EQ(Count(out, "all_gather"), 0) << out;
}

TEST_F(ShardPropagationTest, BadInputs) {
  // A dim that does not divide, and a collective in a global view.
  diagnostics_.clear();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @odd(%x: tensor<3x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>})
    -> tensor<3x4xf32> attributes {tessera.global_view} {
  %y = tessera_graph.exp %x : tensor<3x4xf32>
  return %y : tensor<3x4xf32>
})", context_.get());
  ASSERT_TRUE(module);
  EXPECT_TRUE(mlir::failed(graph::propagateGlobalViewShardings(*module)));
  EXPECT_NE(diagnostics_.find("does not divide over mesh axis 'tp' of size 2"), std::string::npos) << diagnostics_;
  diagnostics_.clear();
  module = mlir::parseSourceString<mlir::ModuleOp>(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @coll(%x: tensor<4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp"], replicate = [], reduce = []>})
    -> tensor<4xf32> attributes {tessera.global_view} {
  %y = tessera_graph.all_reduce sum %x over @mesh ["tp"] : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
})", context_.get());
  ASSERT_TRUE(module);
  EXPECT_TRUE(mlir::failed(graph::propagateGlobalViewShardings(*module)));
  EXPECT_NE(diagnostics_.find("write the program on global tensors"), std::string::npos) << diagnostics_;
}

}  // namespace
}  // namespace tessera::reference
