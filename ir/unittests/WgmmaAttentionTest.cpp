// The warpgroup attention kernel (flash_attention {mma = "wgmma"},
// WgmmaAttentionKernel.h) as Tile IR, run by the reference interpreter:
// its TMA stages, the swizzled Q, K^T, V and P operands, the softmax in
// warpgroup_mma's register layout (quad shuffles) and the masks, against
// attention computed in double.  No GPU here runs the kernel's cuda
// sm_90a form (plugins/cuda/test/wgmma-attention*.mlir check its PTX and
// ptxas), so this is its functional check.
#include <gtest/gtest.h>

#include "TestContext.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "tessera/Conversion/GraphToTile/Pipeline.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "tessera/InitAll.h"
#include "tessera/Reference/TileInterpreter.h"

namespace tessera::reference {
namespace {

struct Case {
  int64_t batch, sq, skv, d, dv, bq, bkv;
  bool causal;
  const char *type;  // "f16" or "bf16"
  // Written as Graph IR (matmul, scale, an iota mask when causal, softmax,
  // matmul), which graph-to-schedule with mma=wgmma must turn into the
  // kernel (the blocks are then its choice: bq and bkv are what it picks).
  bool graph = false;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.type << " batch " << c.batch << " Sq " << c.sq << " Skv " << c.skv << " d " << c.d << " dv " << c.dv
      << " blocks " << c.bq << "x" << c.bkv << (c.causal ? " causal" : "");
}

std::string TensorType(const Case &c, int64_t rows, int64_t cols) {
  std::string t = "tensor<";
  if (c.batch > 1) t += std::to_string(c.batch) + "x";
  return t + std::to_string(rows) + "x" + std::to_string(cols) + "x" + c.type + ">";
}

std::string Program(const Case &c) {
  const std::string q = TensorType(c, c.sq, c.d), kt = TensorType(c, c.d, c.skv), v = TensorType(c, c.skv, c.dv),
                    o = TensorType(c, c.sq, c.dv);
  if (c.graph) {
    const std::string st = TensorType(c, c.sq, c.skv);
    const std::string mt = "tensor<" + std::to_string(c.sq) + "x" + std::to_string(c.skv) + "x" + c.type + ">";
    std::string p = "func.func @attn(%q: " + q + ", %kt: " + kt + ", %v: " + v + ") -> " + o + " {\n" +
                    "  %s0 = tessera_graph.matmul %q, %kt : " + q + ", " + kt + " -> " + st + "\n" +
                    "  %scale = arith.constant dense<0.125> : " + st + "\n" +
                    "  %s = tessera_graph.mul %s0, %scale : " + st + ", " + st + "\n";
    std::string scores = "%s";
    if (c.causal) {
      p += "  %qi = tessera_graph.iota dim = 0 : " + mt + "\n" + "  %ki = tessera_graph.iota dim = 1 : " + mt + "\n" +
           "  %one = arith.constant dense<1.0> : " + mt + "\n" + "  %big = arith.constant dense<-1.0e9> : " + mt +
           "\n" + "  %d = tessera_graph.sub %ki, %qi : " + mt + ", " + mt + "\n" +
           "  %above = tessera_graph.relu %d : " + mt + "\n" + "  %m = tessera_graph.min %above, %one : " + mt +
           ", " + mt + "\n" + "  %mask = tessera_graph.mul %m, %big : " + mt + ", " + mt + "\n" +
           "  %sm = tessera_graph.add %s, %mask : " + st + ", " + mt + "\n";
      scores = "%sm";
    }
    return p + "  %p = tessera_graph.softmax " + scores + " dim = " + std::to_string(c.batch > 1 ? 2 : 1) + " : " +
           st + "\n" + "  %o = tessera_graph.matmul %p, %v : " + st + ", " + v + " -> " + o + "\n" +
           "  return %o : " + o + "\n}\n";
  }
  return "func.func @attn(%q: " + q + ", %kt: " + kt + ", %v: " + v + ") -> " + o + " {\n" +
         "  %o = tessera_schedule.flash_attention %q, %kt, %v scale = 1.250000e-01 block_q = " +
         std::to_string(c.bq) + " block_kv = " + std::to_string(c.bkv) + (c.causal ? " causal" : "") +
         " {mma = \"wgmma\"} : " + q + ", " + kt + ", " + v + " -> " + o + "\n  return %o : " + o + "\n}\n";
}

// Inputs exact in f16 and bf16: multiples of 1/16 in [-1/2, 1/2], from a
// hash (no period a wrong layout could line up with).
double Hashed(int64_t i, uint64_t salt) {
  uint64_t h = (static_cast<uint64_t>(i) + salt) * 0x9E3779B97F4A7C15ull;
  return double(static_cast<int64_t>((h >> 40) % 17) - 8) / 16;
}
double QValue(int64_t i) { return Hashed(i, 1); }
double KValue(int64_t i) { return Hashed(i, 2); }
double VValue(int64_t i) { return Hashed(i, 3); }

// bf16 is stored as its bits (in i16): the interpreter's values are those.
double Stored(double x, const Case &c) {
  if (std::string(c.type) != "bf16") return x;
  float f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<double>(static_cast<int16_t>(bits >> 16));  // exact: the inputs have few mantissa bits
}
double Loaded(double stored, const Case &c) {
  if (std::string(c.type) != "bf16") return stored;
  uint32_t bits = static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int64_t>(stored))) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

class WgmmaAttentionTest : public ::testing::TestWithParam<Case> {
 protected:
  WgmmaAttentionTest() : context_(unittest::NewContext(&diagnostics_)) {}

  mlir::func::FuncOp Build(const Case &c) {
    module_ = mlir::parseSourceString<mlir::ModuleOp>(Program(c), context_.get());
    if (!module_) return {};
    mlir::PassManager pm(context_.get());
    if (mlir::failed(conversion::buildGpuGraphPipeline(pm, "cuda", "mma=wgmma")) || mlir::failed(pm.run(*module_)))
      return {};
    for (auto f : module_->getOps<mlir::func::FuncOp>())
      if (f->hasAttr("tessera_tile.group_size")) return f;
    return {};
  }

  std::string diagnostics_;  // before context_: its handler writes here
  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

TEST_P(WgmmaAttentionTest, MatchesAttentionInDouble) {
  const Case c = GetParam();
  mlir::func::FuncOp kernel = Build(c);
  ASSERT_TRUE(kernel) << diagnostics_;
  EXPECT_TRUE(kernel.getName().endswith("_attention")) << kernel.getName().str();
  int shuffles = 0, products = 0;
  kernel.walk([&](tile::ShuffleOp) { ++shuffles; });
  kernel.walk([&](tile::WarpgroupMmaOp) { ++products; });
  EXPECT_EQ(shuffles, 8);  // max and sum of two rows, two steps each
  EXPECT_EQ(products, c.d / 64 + c.bkv / 64);
  std::vector<TileArgument> args(4);
  args[0].values.resize(c.batch * c.sq * c.d);
  args[1].values.resize(c.batch * c.d * c.skv);
  args[2].values.resize(c.batch * c.skv * c.dv);
  args[3].values.assign(c.batch * c.sq * c.dv, 0.0);
  for (size_t i = 0; i < args[0].values.size(); ++i) args[0].values[i] = Stored(QValue(i), c);
  for (size_t i = 0; i < args[1].values.size(); ++i) args[1].values[i] = Stored(KValue(i), c);
  for (size_t i = 0; i < args[2].values.size(); ++i) args[2].values[i] = Stored(VValue(i), c);
  TileLaunch launch;
  auto grid = kernel->getAttrOfType<mlir::DenseI64ArrayAttr>("tessera_tile.grid").asArrayRef();
  auto group = kernel->getAttrOfType<mlir::DenseI64ArrayAttr>("tessera_tile.group_size").asArrayRef();
  for (size_t i = 0; i < grid.size(); ++i) launch.grid[i] = static_cast<uint32_t>(grid[i]);
  for (size_t i = 0; i < group.size(); ++i) launch.group_size[i] = static_cast<uint32_t>(group[i]);
  EXPECT_EQ(launch.group_size[0], static_cast<uint32_t>(c.bq / 64 * 128));
  launch.subgroup_size = 32;
  ASSERT_EQ(RunTileKernel(kernel, launch, &args), "");
  // P is rounded to the operand type before P V: a relative error of
  // 2^-8 (bf16) or 2^-11 (f16) per probability, then the result's own.
  const double tol = std::string(c.type) == "bf16" ? 1.5e-2 : 2e-3;
  double worst = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.sq; ++i) {
      std::vector<double> s(c.skv);
      double m = -INFINITY;
      for (int64_t j = 0; j < c.skv; ++j) {
        double dot = 0;
        for (int64_t k = 0; k < c.d; ++k)
          dot += QValue((b * c.sq + i) * c.d + k) * KValue((b * c.d + k) * c.skv + j);
        s[j] = (c.causal && j > i) ? -INFINITY : 0.125 * dot;
        m = std::max(m, s[j]);
      }
      double l = 0;
      for (double &x : s) l += (x = std::exp(x - m));
      for (int64_t col = 0; col < c.dv; ++col) {
        double o = 0;
        for (int64_t j = 0; j < c.skv; ++j) o += s[j] * VValue((b * c.skv + j) * c.dv + col);
        o /= l;
        const double got = Loaded(args[3].values[(b * c.sq + i) * c.dv + col], c);
        worst = std::max(worst, std::abs(got - o));
        ASSERT_NEAR(got, o, tol) << "batch " << b << " row " << i << " col " << col;
      }
    }
  RecordProperty("max_abs_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WgmmaAttentionTest,
    ::testing::Values(
        // Heads; two warpgroups; three key blocks over two stages (both
        // parities of stage 0).
        Case{2, 128, 384, 64, 64, 128, 128, false, "f16"},
        // One warpgroup, 64-key blocks, causal (blocks above the diagonal
        // skipped, the diagonal block masked), bf16.
        Case{2, 192, 192, 64, 128, 64, 64, true, "bf16"},
        // Partial blocks: Sq = 200 (rows past it computed, not stored),
        // Skv = 136 (keys past it masked); d = dv = 128 (two slices).
        Case{1, 200, 136, 128, 128, 128, 128, false, "f16"},
        // Causal with partial blocks and the last query block's diagonal.
        Case{1, 136, 136, 64, 64, 128, 64, true, "bf16"},
        // From Graph IR: a causal bf16 attention over heads with the
        // decoder's iota mask (-1e9 above the diagonal) becomes the kernel
        // with 128 x 128 blocks.
        Case{2, 256, 256, 64, 64, 128, 128, true, "bf16", /*graph=*/true}),
    [](const ::testing::TestParamInfo<Case> &info) {
      const Case &c = info.param;
      return std::string(c.graph ? "graph_" : "") + c.type + "_b" + std::to_string(c.batch) + "_sq" + std::to_string(c.sq) + "_skv" +
             std::to_string(c.skv) + "_d" + std::to_string(c.d) + "_dv" + std::to_string(c.dv) + "_" +
             std::to_string(c.bq) + "x" + std::to_string(c.bkv) + (c.causal ? "_causal" : "");
    });

}  // namespace
}  // namespace tessera::reference
