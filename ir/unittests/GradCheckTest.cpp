// Gradient checks of --tessera-grad: every VJP rule against central finite
// differences of the reference interpreter in its exact (f64) mode.
//
// Each case is a function @f(args) -> y of one op (or a few). The test
// makes the scalar loss L = sum(f(args) * r) with a random r, builds
// d L / d args with buildGradient, evaluates it in f64, and compares each
// element of each float argument's gradient (up to 40 per argument) with
//   (L(x + h e_k) - L(x - h e_k)) / 2h,   h = 1e-5 * max(1, |x_k|),
// in f64. Tolerance: |grad - fd| <= 1e-5 * max(1, |fd|) -- the truncation
// error of the central difference is O(h^2) and the backward graph's f32
// constants (1/N, 2/sqrt(pi), epsilon) are within 6e-8 relative.
// Inputs are random in [-1, 1] (kept away from 0 for the kinks of relu
// and abs), in [0.5, 1.5] for the cases that need positive values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "tessera/Dialect/Graph/Transforms/Grad.h"
#include "tessera/InitAll.h"
#include "tessera/Reference/GraphInterpreter.h"
#include "tessera/Reference/SpmdInterpreter.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"

namespace tessera::reference {
namespace {

std::string TypeText(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return os.str();
}

enum class Inputs { kSigned, kPositive };

class GradCheckTest : public ::testing::Test {
 protected:
  GradCheckTest() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    context_ = std::make_unique<mlir::MLIRContext>(registry);
    context_->getDiagEngine().registerHandler([this](mlir::Diagnostic& d) {
      std::string loc;
      llvm::raw_string_ostream os(loc);
      d.getLocation().print(os);
      diagnostics_ += os.str() + ": " + d.str() + "\n";
      return mlir::success();
    });
  }

  // Wraps `body` (which defines @f) in a loss and checks every float
  // argument's gradient. `ints` gives the values of integer arguments.
  void Check(const std::string& body, Inputs kind = Inputs::kSigned, std::vector<double> ints = {}) {
    auto first = mlir::parseSourceString<mlir::ModuleOp>(body, context_.get());
    ASSERT_TRUE(first) << diagnostics_;
    auto f = first->lookupSymbol<mlir::func::FuncOp>("f");
    ASSERT_TRUE(f);
    // loss(args..., r) = sum(f(args) * r)
    std::string sig, callArgs, argTypes;
    for (auto [i, t] : llvm::enumerate(f.getArgumentTypes())) {
      sig += "%a" + std::to_string(i) + ": " + TypeText(t) + ", ";
      callArgs += std::string(i ? ", " : "") + "%a" + std::to_string(i);
      argTypes += std::string(i ? ", " : "") + TypeText(t);
    }
    auto yt = f.getResultTypes()[0].cast<mlir::RankedTensorType>();
    const std::string y = TypeText(yt);
    std::string dims, ones;
    for (int64_t d = 0; d < yt.getRank(); ++d) {
      dims += std::string(d ? ", " : "") + std::to_string(d);
      ones += "1x";
    }
    const std::string lossType = "tensor<" + (ones.empty() ? std::string("1x") : ones) + "f32>";
    std::string loss = "func.func @loss(" + sig + "%r: " + y + ") -> " + lossType + " {\n" +
                       "  %y = func.call @f(" + callArgs + ") : (" + argTypes + ") -> " + y + "\n" +
                       "  %p = tessera_graph.mul %y, %r : " + y + ", " + y + "\n" +
                       "  %l = tessera_graph.reduce sum %p dims = [" + dims + "] order = pairwise : " + y + " -> " +
                       lossType + "\n  return %l : " + lossType + "\n}\n";
    if (yt.getRank() == 0) FAIL() << "cases return a ranked, non-scalar y";
    module_ = mlir::parseSourceString<mlir::ModuleOp>(body + loss, context_.get());
    ASSERT_TRUE(module_) << diagnostics_ << body + loss;
    auto lossFn = module_->lookupSymbol<mlir::func::FuncOp>("loss");
    // Forward for the finite differences: the loss with @f inlined.
    std::vector<unsigned> wrt;
    for (auto [i, t] : llvm::enumerate(lossFn.getArgumentTypes()))
      if (i + 1 < lossFn.getNumArguments() && t.cast<mlir::RankedTensorType>().getElementType().isa<mlir::FloatType>())
        wrt.push_back(static_cast<unsigned>(i));
    auto grad = graph::buildGradient(lossFn, wrt, "loss_grad");
    ASSERT_TRUE(mlir::succeeded(grad)) << diagnostics_;
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*module_))) << diagnostics_;
    auto value = graph::buildGradient(lossFn, {}, "loss_value");  // the loss with @f inlined
    ASSERT_TRUE(mlir::succeeded(value)) << diagnostics_;
    gradText_.clear();
    llvm::raw_string_ostream os(gradText_);
    grad->print(os);
    // The interpreter runs plain Graph IR: inline the custom VJPs' calls.
    ASSERT_TRUE(mlir::succeeded(graph::expandGradients(*module_))) << diagnostics_;

    // Random inputs (physical order = logical: the cases are row-major
    // except where a layout is the point, which the interpreter handles).
    std::mt19937 rng(1234);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    HostTensors inputs;
    size_t nextInt = 0;
    for (mlir::Type t : lossFn.getArgumentTypes()) {
      auto tt = t.cast<mlir::RankedTensorType>();
      std::vector<double> v(tt.getNumElements());
      for (double& x : v) {
        if (!tt.getElementType().isa<mlir::FloatType>()) {
          ASSERT_LT(nextInt, ints.size()) << "give the integer arguments' values";
          x = ints[nextInt++];
          continue;
        }
        double r = u(rng);
        if (kind == Inputs::kPositive) x = 1.0 + 0.5 * r;
        else x = r < 0 ? r - 0.05 : r + 0.05;  // |x| >= 0.05: away from kinks
      }
      inputs.push_back(std::move(v));
    }
    ReferenceOptions exact;
    exact.exact = true;
    HostTensors out;
    ASSERT_EQ(ReferenceGraph(*grad, inputs, &out, nullptr, exact), "");
    ASSERT_EQ(out.size(), 1 + wrt.size());
    auto lossAt = [&](const HostTensors& in) {
      HostTensors o;
      EXPECT_EQ(ReferenceGraph(*value, in, &o, nullptr, exact), "");
      return o.empty() ? NAN : o[0][0];
    };
    for (size_t k = 0; k < wrt.size(); ++k) {
      const unsigned a = wrt[k];
      const std::vector<double>& g = out[1 + k];
      ASSERT_EQ(g.size(), inputs[a].size());
      const size_t n = inputs[a].size(), step = std::max<size_t>(1, n / 40);
      for (size_t e = 0; e < n; e += step) {
        HostTensors plus = inputs, minus = inputs;
        const double h = 1e-5 * std::max(1.0, std::fabs(inputs[a][e]));
        plus[a][e] += h;
        minus[a][e] -= h;
        const double fd = (lossAt(plus) - lossAt(minus)) / (2 * h);
        EXPECT_NEAR(g[e], fd, 1e-5 * std::max(1.0, std::fabs(fd)))
            << "d loss / d arg" << a << "[" << e << "]\n" << body;
      }
    }
  }

  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::string diagnostics_;
  std::string gradText_;  // the gradient function before inlining
};

std::string Unary(const std::string& op, const std::string& attrs = "") {
  return "func.func private @f(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {\n"
         "  %y = tessera_graph." + op + " %x " + attrs + ": tensor<3x5xf32>\n"
         "  return %y : tensor<3x5xf32>\n}\n";
}

std::string Binary(const std::string& op, const std::string& lhs, const std::string& rhs, const std::string& res) {
  return "func.func private @f(%x: " + lhs + ", %z: " + rhs + ") -> " + res + " {\n"
         "  %y = tessera_graph." + op + " %x, %z : " + lhs + ", " + rhs + (lhs == res ? "" : " -> " + res) + "\n"
         "  return %y : " + res + "\n}\n";
}

TEST_F(GradCheckTest, Matmul) {
  Check(R"(func.func private @f(%a: tensor<4x6xf32>, %b: tensor<6x3xf32>) -> tensor<4x3xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<4x6xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
})");
}

TEST_F(GradCheckTest, BatchedMatmul) {
  Check(R"(func.func private @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
  return %c : tensor<2x3x5xf32>
})");
}

TEST_F(GradCheckTest, MatmulColMajorOperand) {
  Check(R"(func.func private @f(%a: tensor<4x6xf32>, %b: tensor<6x4xf32, #tessera_graph.layout<col_major>>) -> tensor<4x4xf32> {
  %c = tessera_graph.matmul %a, %b : tensor<4x6xf32>, tensor<6x4xf32, #tessera_graph.layout<col_major>> -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
})");
}

TEST_F(GradCheckTest, AddSubMulDivWithBroadcasting) {
  Check(Binary("add", "tensor<3x5xf32>", "tensor<5xf32>", "tensor<3x5xf32>"));
  Check(Binary("sub", "tensor<3x1xf32>", "tensor<1x5xf32>", "tensor<3x5xf32>"));
  Check(Binary("mul", "tensor<3x5xf32>", "tensor<3x1xf32>", "tensor<3x5xf32>"));
  Check(Binary("div", "tensor<3x5xf32>", "tensor<5xf32>", "tensor<3x5xf32>"), Inputs::kPositive);
  Check(Binary("div", "tensor<2x3x5xf32>", "tensor<3x1xf32>", "tensor<2x3x5xf32>"), Inputs::kPositive);
}

TEST_F(GradCheckTest, MaxMinPow) {
  Check(Binary("max", "tensor<3x5xf32>", "tensor<3x5xf32>", "tensor<3x5xf32>"));
  Check(Binary("min", "tensor<3x5xf32>", "tensor<5xf32>", "tensor<3x5xf32>"));
  Check(Binary("pow", "tensor<3x5xf32>", "tensor<3x5xf32>", "tensor<3x5xf32>"), Inputs::kPositive);
}

TEST_F(GradCheckTest, UnaryOps) {
  for (const char* op : {"relu", "exp", "neg", "abs", "tanh", "sigmoid", "erf", "silu", "gelu"}) Check(Unary(op));
  Check(Unary("gelu", "{approximate = \"none\"} "));
  for (const char* op : {"sqrt", "rsqrt", "log"}) Check(Unary(op), Inputs::kPositive);
}

TEST_F(GradCheckTest, CastsAndLayouts) {
  Check(R"(func.func private @f(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %h = tessera_graph.cast %x : tensor<3x4xf32> -> tensor<3x4xf16>
  %b = tessera_graph.convert_layout %h : tensor<3x4xf16> -> tensor<3x4xf16, #tessera_graph.layout<col_major>>
  %y = tessera_graph.cast %b : tensor<3x4xf16, #tessera_graph.layout<col_major>> -> tensor<3x4xf32, #tessera_graph.layout<col_major>>
  %z = tessera_graph.convert_layout %y : tensor<3x4xf32, #tessera_graph.layout<col_major>> -> tensor<3x4xf32>
  return %z : tensor<3x4xf32>
})");
}

TEST_F(GradCheckTest, Reductions) {
  for (const char* kind : {"sum", "mean", "max", "min"}) {
    Check(std::string("func.func private @f(%x: tensor<3x4x5xf32>) -> tensor<3x5xf32> {\n  %y = tessera_graph.reduce ") +
          kind + " %x dims = [1] order = pairwise : tensor<3x4x5xf32> -> tensor<3x5xf32>\n  return %y : tensor<3x5xf32>\n}\n");
    Check(std::string("func.func private @f(%x: tensor<3x4x5xf32>) -> tensor<1x4x1xf32> {\n  %y = tessera_graph.reduce ") +
          kind + " %x dims = [0, 2] order = sequential : tensor<3x4x5xf32> -> tensor<1x4x1xf32>\n  return %y : tensor<1x4x1xf32>\n}\n");
  }
}

TEST_F(GradCheckTest, Softmax) {
  Check(R"(func.func private @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = tessera_graph.softmax %x dim = 1 : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
})");
  Check(R"(func.func private @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = tessera_graph.softmax %x dim = 0 : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
})");
}

TEST_F(GradCheckTest, Norms) {
  Check(R"(func.func private @f(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = tessera_graph.layernorm %x, %g, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %y : tensor<4x8xf32>
})");
  Check(R"(func.func private @f(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %y = tessera_graph.rmsnorm %x, %g : tensor<2x3x8xf32>, tensor<8xf32>
  return %y : tensor<2x3x8xf32>
})");
}

TEST_F(GradCheckTest, ShapeOps) {
  Check(R"(func.func private @f(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = tessera_graph.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
})");
  Check(R"(func.func private @f(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %y = tessera_graph.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
})");
  Check(R"(func.func private @f(%x: tensor<7x9xf32>) -> tensor<3x4xf32> {
  %y = tessera_graph.slice %x offsets = [1, 0] strides = [2, 2] : tensor<7x9xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
})");
  Check(R"(func.func private @f(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = tessera_graph.broadcast_in_dim %x dims = [1, 2] : tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
})");
  Check(R"(func.func private @f(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<3x6xf32> {
  %y = tessera_graph.concat %a, %b dim = 1 : tensor<3x2xf32>, tensor<3x4xf32> -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
})");
  Check(R"(func.func private @f(%x: tensor<3x4xf32>) -> tensor<6x5xf32> {
  %y = tessera_graph.pad %x low = [1, 0] high = [2, 1] value = 0.5 : tensor<3x4xf32> -> tensor<6x5xf32>
  return %y : tensor<6x5xf32>
})");
}

TEST_F(GradCheckTest, GatherScatterAddsRepeatedRows) {
  // Rows 1 and 4 are picked twice; 7 is clamped to the last row (5).
  Check(R"(func.func private @f(%t: tensor<6x3xf32>, %i: tensor<2x3xi32>) -> tensor<2x3x3xf32> {
  %y = tessera_graph.gather %t, %i : tensor<6x3xf32>, tensor<2x3xi32> -> tensor<2x3x3xf32>
  return %y : tensor<2x3x3xf32>
})",
        Inputs::kSigned, {1, 4, 1, 0, 7, 4});
}

TEST_F(GradCheckTest, DequantizeScales) {
  // The scales' gradients, per tensor and per channel (axis 1); the i8
  // values (and an i8 x i8 -> i32 matmul's accumulator) carry none.
  Check(R"(func.func private @f(%q: tensor<3x4xi8>, %w: tensor<4x4xi8>, %s: tensor<1xf32>, %c: tensor<4xf32>) -> tensor<3x4xf32> {
  %a = tessera_graph.dequantize %q, %s : tensor<3x4xi8>, tensor<1xf32> -> tensor<3x4xf32>
  %acc = tessera_graph.matmul %q, %w : tensor<3x4xi8>, tensor<4x4xi8> -> tensor<3x4xi32>
  %b = tessera_graph.dequantize %acc, %c axis = 1 : tensor<3x4xi32>, tensor<4xf32> -> tensor<3x4xf32>
  %y = tessera_graph.mul %a, %b : tensor<3x4xf32>, tensor<3x4xf32>
  return %y : tensor<3x4xf32>
})",
        Inputs::kSigned, {3, -7, 1, 0, 127, -128, 5, 2, -1, 9, 4, -3,
                          1, 2, -3, 4, -5, 6, 7, -8, 9, 10, -11, 12, 0, -1, 2, 3});
}

TEST_F(GradCheckTest, CompareAndSelect) {
  Check(R"(func.func private @f(%x: tensor<4x4xf32>, %z: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tessera_graph.iota dim = 0 : tensor<4x4xi32>
  %c = tessera_graph.iota dim = 1 : tensor<4x4xi32>
  %causal = tessera_graph.compare le %c, %r : tensor<4x4xi32>, tensor<4x4xi32> -> tensor<4x4xi1>
  %y = tessera_graph.select %causal, %x, %z : tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>
  return %y : tensor<4x4xf32>
})");
}

TEST_F(GradCheckTest, MlpWithCrossEntropy) {
  // Softmax cross-entropy of a two-layer MLP against one-hot targets.
  Check(R"(func.func private @f(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x5xf32>, %t: tensor<4x5xf32>) -> tensor<4x1xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %h1 = tessera_graph.add %h0, %b1 : tensor<4x8xf32>, tensor<8xf32>
  %h = tessera_graph.gelu %h1 : tensor<4x8xf32>
  %z = tessera_graph.matmul %h, %w2 : tensor<4x8xf32>, tensor<8x5xf32> -> tensor<4x5xf32>
  %p = tessera_graph.softmax %z dim = 1 : tensor<4x5xf32>
  %lp = tessera_graph.log %p : tensor<4x5xf32>
  %tl = tessera_graph.mul %t, %lp : tensor<4x5xf32>, tensor<4x5xf32>
  %s = tessera_graph.reduce sum %tl dims = [1] order = pairwise : tensor<4x5xf32> -> tensor<4x1xf32>
  %y = tessera_graph.neg %s : tensor<4x1xf32>
  return %y : tensor<4x1xf32>
})");
}

TEST_F(GradCheckTest, AttentionRecomputesItsProbabilities) {
  // Causal attention; P is recomputed in the backward from Q and K.
  Check(R"(func.func private @f(%q: tensor<2x5x4xf32>, %kt: tensor<2x4x5xf32>, %v: tensor<2x5x3xf32>, %mask: tensor<5x5xf32>) -> tensor<2x5x3xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x5x4xf32>, tensor<2x4x5xf32> -> tensor<2x5x5xf32>
  %c = arith.constant dense<0.5> : tensor<2x5x5xf32>
  %s1 = tessera_graph.mul %s0, %c : tensor<2x5x5xf32>, tensor<2x5x5xf32>
  %s2 = tessera_graph.add %s1, %mask : tensor<2x5x5xf32>, tensor<5x5xf32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<2x5x5xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x5x5xf32>, tensor<2x5x3xf32> -> tensor<2x5x3xf32>
  return %o : tensor<2x5x3xf32>
})");
  EXPECT_EQ(gradText_.find("%p"), std::string::npos);
  // The forward's softmax feeds only its matmul; the backward has its own.
  size_t first = gradText_.find("tessera_graph.softmax"), second = gradText_.find("tessera_graph.softmax", first + 1);
  EXPECT_NE(second, std::string::npos) << gradText_;
}

TEST_F(GradCheckTest, CausalAttentionIsOneAttentionGrad) {
  // A causal attention chain with a constant mask (iota arithmetic) and a
  // scale after it: its VJP is one attention_grad (no forward softmax read
  // by the backward), checked against finite differences of the forward.
  Check(R"(func.func private @f(%q: tensor<2x6x4xf32>, %kt: tensor<2x4x6xf32>, %v: tensor<2x6x3xf32>) -> tensor<2x6x3xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x6x4xf32>, tensor<2x4x6xf32> -> tensor<2x6x6xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<6x6xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<6x6xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<6x6xi32>, tensor<6x6xi32> -> tensor<6x6xi1>
  %ninf = arith.constant dense<-1.0e30> : tensor<f32>
  %s1 = tessera_graph.select %keep, %s0, %ninf : tensor<6x6xi1>, tensor<2x6x6xf32>, tensor<f32>
  %c = arith.constant dense<0.7> : tensor<2x6x6xf32>
  %s2 = tessera_graph.mul %s1, %c : tensor<2x6x6xf32>, tensor<2x6x6xf32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<2x6x6xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x6x6xf32>, tensor<2x6x3xf32> -> tensor<2x6x3xf32>
  return %o : tensor<2x6x3xf32>
})");
  EXPECT_NE(gradText_.find("tessera_graph.attention_grad"), std::string::npos) << gradText_;
  EXPECT_NE(gradText_.find("causal"), std::string::npos) << gradText_;
  size_t first = gradText_.find("tessera_graph.softmax");
  EXPECT_EQ(gradText_.find("tessera_graph.softmax", first + 1), std::string::npos) << gradText_;
}

TEST_F(GradCheckTest, AttentionGradOfSingleMatrices) {
  // Rank 2, scores divided by 2, cross lengths (3 queries, 7 keys), and Q
  // used again after the attention (its cotangents add up).
  Check(R"(func.func private @f(%q: tensor<3x4xf32>, %kt: tensor<4x7xf32>, %v: tensor<7x4xf32>) -> tensor<3x4xf32> {
  %s0 = tessera_graph.matmul %q, %kt : tensor<3x4xf32>, tensor<4x7xf32> -> tensor<3x7xf32>
  %c = arith.constant dense<2.0> : tensor<3x7xf32>
  %s1 = tessera_graph.div %s0, %c : tensor<3x7xf32>, tensor<3x7xf32>
  %p = tessera_graph.softmax %s1 dim = 1 : tensor<3x7xf32>
  %o = tessera_graph.matmul %p, %v : tensor<3x7xf32>, tensor<7x4xf32> -> tensor<3x4xf32>
  %y = tessera_graph.mul %o, %q : tensor<3x4xf32>, tensor<3x4xf32>
  return %y : tensor<3x4xf32>
})");
  EXPECT_NE(gradText_.find("tessera_graph.attention_grad"), std::string::npos) << gradText_;
}

TEST_F(GradCheckTest, CustomVjpIsUsed) {
  // The backward of @cube says 3x^2; a wrong one (here 3x^2 + 1) must
  // show: the check fails when the custom rule is ignored or garbled.
  const std::string body = R"(
func.func private @cube(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {tessera.custom_vjp = @cube_bwd} {
  %x2 = tessera_graph.mul %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
  %y = tessera_graph.mul %x2, %x : tensor<2x3xf32>, tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @cube_bwd(%x: tensor<2x3xf32>, %dy: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %x2 = tessera_graph.mul %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
  %three = arith.constant dense<3.0> : tensor<2x3xf32>
  %d = tessera_graph.mul %x2, %three : tensor<2x3xf32>, tensor<2x3xf32>
  %dx = tessera_graph.mul %d, %dy : tensor<2x3xf32>, tensor<2x3xf32>
  return %dx : tensor<2x3xf32>
}
func.func private @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = func.call @cube(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
)";
  Check(body);
  // The backward is what the gradient calls.
  EXPECT_NE(gradText_.find("call @cube_bwd"), std::string::npos) << gradText_;
}

// SPMD gradients against the gradients of the global function: @loss (an
// SPMD function whose result 0 is the replicated loss) and its gradient are
// evaluated per device by the SPMD reference (exact mode). An argument
// sharded or partial over some axis is each device's own variable: its
// finite difference perturbs one device's copy. A replicated argument is
// one variable held by every device: its finite difference perturbs every
// copy, and every device's gradient must be the whole derivative.
class SpmdGradCheckTest : public GradCheckTest {
 protected:
  void CheckSpmd(const std::string& text) {
    module_ = mlir::parseSourceString<mlir::ModuleOp>(text, context_.get());
    ASSERT_TRUE(module_) << diagnostics_;
    auto loss = module_->lookupSymbol<mlir::func::FuncOp>("loss");
    ASSERT_TRUE(loss);
    auto mesh = graph::findSpmdMesh(loss);
    ASSERT_TRUE(mlir::succeeded(mesh) && *mesh);
    std::vector<unsigned> wrt;
    for (auto [i, t] : llvm::enumerate(loss.getArgumentTypes()))
      if (t.cast<mlir::RankedTensorType>().getElementType().isa<mlir::FloatType>()) wrt.push_back(i);
    auto grad = graph::buildGradient(loss, wrt, "loss_grad");
    ASSERT_TRUE(mlir::succeeded(grad)) << diagnostics_;
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*module_))) << diagnostics_;
    int64_t devices = 1;
    for (int64_t s : mesh->getShape()) devices *= s;
    std::mt19937 rng(99);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<bool> perDevice;
    std::vector<HostTensors> inputs(devices);
    for (unsigned a = 0; a < loss.getNumArguments(); ++a) {
      auto shard = loss.getArgAttrOfType<graph::ShardAttr>(a, graph::kShardingAttr);
      bool varies = false;
      if (shard) {
        for (unsigned d = 0; d < shard.getDims().size(); ++d) varies |= !shard.getDimAxes(d).empty();
        varies |= !shard.getReduce().empty();
      }
      perDevice.push_back(varies);
      const int64_t n = loss.getArgumentTypes()[a].cast<mlir::RankedTensorType>().getNumElements();
      std::vector<double> shared(n);
      for (double& x : shared) x = u(rng);
      for (int64_t d = 0; d < devices; ++d) {
        std::vector<double> v = shared;
        if (varies)
          for (double& x : v) x = u(rng);
        inputs[d].push_back(v);
      }
    }
    ReferenceOptions exact;
    exact.exact = true;
    std::vector<HostTensors> out;
    ASSERT_EQ(ReferenceSpmd(*grad, *mesh, inputs, &out, exact), "");
    auto lossOf = [&](const std::vector<HostTensors>& in) {
      std::vector<HostTensors> o;
      EXPECT_EQ(ReferenceSpmd(loss, *mesh, in, &o, exact), "");
      for (int64_t d = 1; d < devices; ++d) EXPECT_EQ(o[d][0][0], o[0][0][0]) << "the loss must be replicated";
      return o[0][0][0];
    };
    for (size_t k = 0; k < wrt.size(); ++k) {
      const unsigned a = wrt[k];
      for (int64_t d = 0; d < devices; ++d) {
        const size_t n = inputs[d][a].size(), step = std::max<size_t>(1, n / 12);
        for (size_t e = 0; e < n; e += step) {
          auto plus = inputs, minus = inputs;
          const double h = 1e-5;
          for (int64_t p = 0; p < devices; ++p)
            if (p == d || !perDevice[a]) {
              plus[p][a][e] += h;
              minus[p][a][e] -= h;
            }
          const double fd = (lossOf(plus) - lossOf(minus)) / (2 * h);
          EXPECT_NEAR(out[d][1 + k][e], fd, 1e-5 * std::max(1.0, std::fabs(fd)))
              << "device " << d << ": d loss / d arg" << a << "[" << e << "]";
        }
      }
    }
  }
};

TEST_F(SpmdGradCheckTest, TensorParallelMlp) {
  CheckSpmd(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @loss(%x: tensor<4x6xf32>,
    %w1: tensor<6x3xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", "tp"], replicate = [], reduce = []>},
    %w2: tensor<3x5xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %b2: tensor<5xf32>) -> tensor<1x1xf32> {
  %h0 = tessera_graph.matmul %x, %w1 : tensor<4x6xf32>, tensor<6x3xf32> -> tensor<4x3xf32>
  %h = tessera_graph.tanh %h0 : tensor<4x3xf32>
  %p = tessera_graph.matmul %h, %w2 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %y0 = tessera_graph.all_reduce sum %p over @mesh ["tp"] : tensor<4x5xf32> -> tensor<4x5xf32>
  %y = tessera_graph.add %y0, %b2 : tensor<4x5xf32>, tensor<5xf32>
  %y2 = tessera_graph.mul %y, %y : tensor<4x5xf32>, tensor<4x5xf32>
  %l = tessera_graph.reduce mean %y2 dims = [0, 1] order = pairwise : tensor<4x5xf32> -> tensor<1x1xf32>
  return %l : tensor<1x1xf32>
})");
}

TEST_F(SpmdGradCheckTest, AttentionHeadsOverTensorParallel) {
  // Causal attention with its heads sharded over tp (each device's own
  // Q, K^T, V0: one attention_grad per device) and a replicated gain g on
  // V, whose gradient is the sum of both devices' partial sums.
  CheckSpmd(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [2]
func.func @loss(
    %q: tensor<2x5x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", "", ""], replicate = [], reduce = []>},
    %kt: tensor<2x4x5xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", "", ""], replicate = [], reduce = []>},
    %v0: tensor<2x5x3xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", "", ""], replicate = [], reduce = []>},
    %g: tensor<3xf32>) -> tensor<1x1x1xf32> {
  %v = tessera_graph.mul %v0, %g : tensor<2x5x3xf32>, tensor<3xf32>
  %s0 = tessera_graph.matmul %q, %kt : tensor<2x5x4xf32>, tensor<2x4x5xf32> -> tensor<2x5x5xf32>
  %qi = tessera_graph.iota dim = 0 : tensor<5x5xi32>
  %ki = tessera_graph.iota dim = 1 : tensor<5x5xi32>
  %keep = tessera_graph.compare le %ki, %qi : tensor<5x5xi32>, tensor<5x5xi32> -> tensor<5x5xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s1 = tessera_graph.select %keep, %s0, %ninf : tensor<5x5xi1>, tensor<2x5x5xf32>, tensor<f32>
  %c = arith.constant dense<0.5> : tensor<2x5x5xf32>
  %s2 = tessera_graph.mul %s1, %c : tensor<2x5x5xf32>, tensor<2x5x5xf32>
  %p = tessera_graph.softmax %s2 dim = 2 : tensor<2x5x5xf32>
  %o = tessera_graph.matmul %p, %v : tensor<2x5x5xf32>, tensor<2x5x3xf32> -> tensor<2x5x3xf32>
  %o2 = tessera_graph.mul %o, %o : tensor<2x5x3xf32>, tensor<2x5x3xf32>
  %s = tessera_graph.reduce sum %o2 dims = [0, 1, 2] order = pairwise : tensor<2x5x3xf32> -> tensor<1x1x1xf32>
  %l = tessera_graph.all_reduce sum %s over @mesh ["tp"] : tensor<1x1x1xf32> -> tensor<1x1x1xf32>
  return %l : tensor<1x1x1xf32>
})");
  std::string text;
  llvm::raw_string_ostream os(text);
  module_->print(os);
  EXPECT_NE(os.str().find("tessera_graph.attention_grad"), std::string::npos) << os.str();
}

TEST_F(SpmdGradCheckTest, GatherScatterAndDataParallel) {
  // x sharded over dp: all_gather'd for one path, used locally on the
  // other (whose loss is all-reduced); w replicated; z partial sums
  // reduce_scatter'd.
  CheckSpmd(R"(
tessera_graph.mesh @mesh axes = ["dp"] shape = [2]
func.func @loss(
    %x: tensor<2x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["dp", ""], replicate = [], reduce = []>},
    %w: tensor<4x4xf32>,
    %z: tensor<4x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = [], reduce = ["dp"]>}) -> tensor<1x1xf32> {
  %full = tessera_graph.all_gather %x over @mesh ["dp"] dim = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
  %a = tessera_graph.matmul %full, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %a2 = tessera_graph.mul %a, %a : tensor<4x4xf32>, tensor<4x4xf32>
  %s1 = tessera_graph.reduce sum %a2 dims = [0, 1] order = pairwise : tensor<4x4xf32> -> tensor<1x1xf32>
  %local = tessera_graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %e = tessera_graph.exp %local : tensor<2x4xf32>
  %s2 = tessera_graph.reduce sum %e dims = [0, 1] order = pairwise : tensor<2x4xf32> -> tensor<1x1xf32>
  %s2r = tessera_graph.all_reduce sum %s2 over @mesh ["dp"] : tensor<1x1xf32> -> tensor<1x1xf32>
  %zs = tessera_graph.reduce_scatter sum %z over @mesh ["dp"] dim = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
  %zl = tessera_graph.mul %zs, %local : tensor<2x4xf32>, tensor<2x4xf32>
  %s3 = tessera_graph.reduce sum %zl dims = [0, 1] order = pairwise : tensor<2x4xf32> -> tensor<1x1xf32>
  %s3r = tessera_graph.all_reduce sum %s3 over @mesh ["dp"] : tensor<1x1xf32> -> tensor<1x1xf32>
  %l1 = tessera_graph.add %s1, %s2r : tensor<1x1xf32>, tensor<1x1xf32>
  %l = tessera_graph.add %l1, %s3r : tensor<1x1xf32>, tensor<1x1xf32>
  return %l : tensor<1x1xf32>
})");
}

TEST_F(SpmdGradCheckTest, BroadcastFromRootOnTwoAxes) {
  // Every device's x is its own (sharded over both axes); only the root's
  // (rank 1 of each "b" group) reaches the loss.
  CheckSpmd(R"(
tessera_graph.mesh @mesh axes = ["a", "b"] shape = [2, 2]
func.func @loss(
    %x: tensor<3xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["b"], replicate = [], reduce = ["a"]>}) -> tensor<1xf32> {
  %y = tessera_graph.broadcast %x over @mesh ["b"] root = 1 : tensor<3xf32> -> tensor<3xf32>
  %y2 = tessera_graph.mul %y, %y : tensor<3xf32>, tensor<3xf32>
  %s = tessera_graph.reduce sum %y2 dims = [0] order = pairwise : tensor<3xf32> -> tensor<1xf32>
  %l = tessera_graph.all_reduce sum %s over @mesh ["a"] : tensor<1xf32> -> tensor<1xf32>
  return %l : tensor<1xf32>
})");
}

TEST_F(SpmdGradCheckTest, MaxAndMinCollectives) {
  // all_reduce and reduce_scatter max / min: the cotangent goes to the rank
  // holding the extremum (each device's x and z are its own).
  CheckSpmd(R"(
tessera_graph.mesh @mesh axes = ["tp"] shape = [3]
func.func @loss(
    %x: tensor<2x4xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["tp", ""], replicate = [], reduce = []>},
    %z: tensor<6x2xf32> {tessera_graph.sharding = #tessera_graph.shard<mesh = @mesh, dims = ["", ""], replicate = [], reduce = ["tp"]>}) -> tensor<1x1xf32> {
  %m = tessera_graph.all_reduce max %x over @mesh ["tp"] : tensor<2x4xf32> -> tensor<2x4xf32>
  %n = tessera_graph.all_reduce min %x over @mesh ["tp"] : tensor<2x4xf32> -> tensor<2x4xf32>
  %mn = tessera_graph.mul %m, %n : tensor<2x4xf32>, tensor<2x4xf32>
  %s1 = tessera_graph.reduce sum %mn dims = [0, 1] order = pairwise : tensor<2x4xf32> -> tensor<1x1xf32>
  %zm = tessera_graph.reduce_scatter max %z over @mesh ["tp"] dim = 0 : tensor<6x2xf32> -> tensor<2x2xf32>
  %zn = tessera_graph.reduce_scatter min %z over @mesh ["tp"] dim = 0 : tensor<6x2xf32> -> tensor<2x2xf32>
  %zz = tessera_graph.mul %zm, %zn : tensor<2x2xf32>, tensor<2x2xf32>
  %e = tessera_graph.exp %zz : tensor<2x2xf32>
  %s2 = tessera_graph.reduce sum %e dims = [0, 1] order = pairwise : tensor<2x2xf32> -> tensor<1x1xf32>
  %s2r = tessera_graph.all_reduce sum %s2 over @mesh ["tp"] : tensor<1x1xf32> -> tensor<1x1xf32>
  %l = tessera_graph.add %s1, %s2r : tensor<1x1xf32>, tensor<1x1xf32>
  return %l : tensor<1x1xf32>
})");
}

// Bad input: each is an error that names what is wrong.
class GradErrorTest : public GradCheckTest {
 protected:
  std::string Error(const std::string& text, const std::string& fn, std::vector<unsigned> wrt) {
    diagnostics_.clear();
    module_ = mlir::parseSourceString<mlir::ModuleOp>(text, context_.get());
    EXPECT_TRUE(module_) << diagnostics_;
    if (!module_) return "";
    auto f = module_->lookupSymbol<mlir::func::FuncOp>(fn);
    if (f) {
      EXPECT_TRUE(mlir::failed(graph::buildGradient(f, wrt, fn + "_grad")));
    } else {
      EXPECT_TRUE(mlir::failed(graph::expandGradients(*module_)));
    }
    return diagnostics_;
  }
};

const char* kLoss = R"(
func.func @loss(%x: tensor<4x3xf32>, %i: tensor<4xi32>) -> tensor<1xf32> {
  %s = tessera_graph.reduce sum %x dims = [1] order = pairwise : tensor<4x3xf32> -> tensor<4xf32>
  %m = tessera_graph.argmax %x dim = 1 : tensor<4x3xf32> -> tensor<4xi32>
  %l = tessera_graph.reduce sum %s dims = [0] order = pairwise : tensor<4xf32> -> tensor<1xf32>
  return %l : tensor<1xf32>
}
)";

TEST_F(GradErrorTest, WrtOutOfRange) {
  EXPECT_NE(Error(kLoss, "loss", {2}).find("wrt names argument 2, and @loss has 2"), std::string::npos) << diagnostics_;
}

TEST_F(GradErrorTest, WrtIntegerArgument) {
  EXPECT_NE(Error(kLoss, "loss", {1}).find("only float tensors have gradients"), std::string::npos) << diagnostics_;
}

TEST_F(GradErrorTest, LossNotScalar) {
  std::string text = R"(
func.func @g(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = tessera_graph.exp %x : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
})";
  EXPECT_NE(Error(text, "g", {0}).find("must be one float element"), std::string::npos) << diagnostics_;
}

TEST_F(GradErrorTest, OpWithoutRuleNamesOpAndLocation) {
  std::string text = R"(
tessera_graph.mesh @mesh axes = ["x"] shape = [2]
func.func @g(%x: tensor<4xf32>, %s: tensor<1xf32>) -> tensor<1xf32> {
  %c = tessera_graph.mul %x, %s : tensor<4xf32>, tensor<1xf32>
  %a = tessera_graph.reshape %c : tensor<4xf32> -> tensor<4x1xf32>
  %b = tessera_graph.reshape %c : tensor<4xf32> -> tensor<1x4xf32>
  %dq, %dkt, %dv = tessera_graph.attention_grad %a, %b, %a, %a, %a scale = 1.0 : tensor<4x1xf32>, tensor<1x4xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
  %r = tessera_graph.reduce sum %dq dims = [0, 1] order = pairwise : tensor<4x1xf32> -> tensor<1x1xf32>
  %l = tessera_graph.reshape %r : tensor<1x1xf32> -> tensor<1xf32>
  return %l : tensor<1xf32>
})";
  std::string d = Error(text, "g", {1});
  // attention_grad, the VJP --tessera-grad writes for attention, has no
  // VJP of its own (no second-order attention).
  EXPECT_NE(d.find("tessera_graph.attention_grad"), std::string::npos) << d;
  EXPECT_NE(d.find("has no VJP rule"), std::string::npos) << d;
  EXPECT_NE(d.find(":7:"), std::string::npos) << d;  // the attention_grad's line
}

TEST_F(GradErrorTest, CustomVjpWithWrongSignatureNamesBoth) {
  std::string text = R"(
func.func private @sq(%x: tensor<3xf32>) -> tensor<3xf32> attributes {tessera.custom_vjp = @sq_bwd} {
  %y = tessera_graph.mul %x, %x : tensor<3xf32>, tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func private @sq_bwd(%dy: tensor<3xf32>) -> tensor<3xf32> {
  return %dy : tensor<3xf32>
}
func.func @g(%x: tensor<3xf32>) -> tensor<1xf32> {
  %y = func.call @sq(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %l = tessera_graph.reduce sum %y dims = [0] order = pairwise : tensor<3xf32> -> tensor<1xf32>
  return %l : tensor<1xf32>
})";
  std::string d = Error(text, "g", {0});
  EXPECT_NE(d.find("custom VJP @sq_bwd of @sq"), std::string::npos) << d;
  EXPECT_NE(d.find("(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>"), std::string::npos) << d;
}

TEST_F(GradErrorTest, DeclarationWithWrongSignature) {
  std::string text = std::string(kLoss) + R"(
func.func private @loss_grad(tensor<4x3xf32>, tensor<4xi32>) -> (tensor<1xf32>, tensor<4x4xf32>)
    attributes {tessera.grad_of = @loss, tessera.wrt = [0]}
)";
  std::string d = Error(text, "", {});
  EXPECT_NE(d.find("is declared"), std::string::npos) << d;
  EXPECT_NE(d.find("(tensor<1xf32>, tensor<4x3xf32>)"), std::string::npos) << d;
}

TEST_F(GradErrorTest, DeclarationFilledAndCallsInlined) {
  std::string text = std::string(kLoss) + R"(
func.func private @loss_grad(tensor<4x3xf32>, tensor<4xi32>) -> (tensor<1xf32>, tensor<4x3xf32>)
    attributes {tessera.grad_of = @loss, tessera.wrt = [0]}
func.func @step(%x: tensor<4x3xf32>, %i: tensor<4xi32>) -> (tensor<1xf32>, tensor<4x3xf32>) {
  %l, %g = func.call @loss_grad(%x, %i) : (tensor<4x3xf32>, tensor<4xi32>) -> (tensor<1xf32>, tensor<4x3xf32>)
  %lr = arith.constant dense<0.5> : tensor<4x3xf32>
  %u = tessera_graph.mul %g, %lr : tensor<4x3xf32>, tensor<4x3xf32>
  %x2 = tessera_graph.sub %x, %u : tensor<4x3xf32>, tensor<4x3xf32>
  return %l, %x2 : tensor<1xf32>, tensor<4x3xf32>
})";
  module_ = mlir::parseSourceString<mlir::ModuleOp>(text, context_.get());
  ASSERT_TRUE(module_);
  ASSERT_TRUE(mlir::succeeded(graph::expandGradients(*module_))) << diagnostics_;
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*module_)));
  auto step = module_->lookupSymbol<mlir::func::FuncOp>("step");
  bool calls = false;
  step.walk([&](mlir::func::CallOp) { calls = true; });
  EXPECT_FALSE(calls);
  EXPECT_FALSE(module_->lookupSymbol("loss_grad"));  // private, filled, inlined, dropped
  // d/dx sum(x) = 1: the step subtracts 0.5 everywhere.
  HostTensors in = {std::vector<double>(12, 2.0), std::vector<double>(4, 0.0)}, out;
  ASSERT_EQ(ReferenceGraph(step, in, &out), "");
  EXPECT_EQ(out[0][0], 24.0);
  for (double v : out[1]) EXPECT_EQ(v, 1.5);
}

}  // namespace
}  // namespace tessera::reference

namespace tessera::reference {
namespace {

TEST_F(GradErrorTest, LossScaleIsAppliedAndRemoved) {
  module_ = mlir::parseSourceString<mlir::ModuleOp>(kLoss, context_.get());
  ASSERT_TRUE(module_);
  auto f = module_->lookupSymbol<mlir::func::FuncOp>("loss");
  graph::GradientOptions scaled;
  scaled.lossScale = 1024.0;
  auto g = graph::buildGradient(f, {0}, "scaled", scaled);
  ASSERT_TRUE(mlir::succeeded(g)) << diagnostics_;
  HostTensors in = {std::vector<double>(12, 0.5), std::vector<double>(4, 0.0)}, out;
  ASSERT_EQ(ReferenceGraph(*g, in, &out), "");
  for (double v : out[1]) EXPECT_EQ(v, 1.0);  // d sum(x) / dx, the scale removed exactly
  graph::GradientOptions bad;
  bad.lossScale = 0.0;
  diagnostics_.clear();
  EXPECT_TRUE(mlir::failed(graph::buildGradient(f, {0}, "bad", bad)));
  EXPECT_NE(diagnostics_.find("must be a positive finite number"), std::string::npos) << diagnostics_;
}

}  // namespace
}  // namespace tessera::reference
