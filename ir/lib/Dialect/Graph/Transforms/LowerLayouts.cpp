//===- LowerLayouts.cpp - canonicalize chains of layout conversions -------===//
//
// Every `tessera_graph.convert_layout` is an exact permutation of the
// elements (LayoutAttr::offset is a bijection for the five layouts), so:
//
//   convert(x : L -> L)                  ==  x
//   convert(convert(x : A -> B) : B -> C) ==  convert(x : A -> C)
//   convert(convert(x : A -> B) : B -> A) ==  x
//
// Each backend then lowers the conversions that remain as one permutation
// (the cpu backend: a loop nest whose addresses come from LayoutAttr).
// An intermediate that has other uses stays and is still computed: the
// pass never changes what a program returns, only how many passes over
// memory it makes.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Graph/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessera::graph {
#define GEN_PASS_DEF_LOWERLAYOUTS
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

using namespace mlir;
using namespace tessera;

namespace {

/// convert(x : T -> T) is x. Only exact type equality folds: a tensor with an
/// explicit `row_major` encoding and one without are the same bytes but not
/// the same type, and replacing one with the other would change the
/// signature of whatever uses it.
struct DropIdentityConversion : OpRewritePattern<graph::ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(graph::ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getInput().getType() != op.getResult().getType()) return failure();
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

/// convert(convert(x : A -> B) : B -> C) is convert(x : A -> C), and x itself
/// when A == C (a round trip). The inner conversion disappears once it has
/// no other use (it is Pure, the driver erases it).
struct ComposeConversions : OpRewritePattern<graph::ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(graph::ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<graph::ConvertLayoutOp>();
    if (!inner) return failure();
    Value source = inner.getInput();
    if (source.getType() == op.getResult().getType()) {
      rewriter.replaceOp(op, source);
      return success();
    }
    rewriter.replaceOpWithNewOp<graph::ConvertLayoutOp>(op, op.getResult().getType(),
                                                        source);
    return success();
  }
};

struct LowerLayoutsPass : graph::impl::LowerLayoutsBase<LowerLayoutsPass> {
  using LowerLayoutsBase::LowerLayoutsBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DropIdentityConversion, ComposeConversions>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

}  // namespace
