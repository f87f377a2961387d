#include "tessera/Dialect/Graph/Transforms/Passes.h"
namespace tessera::graph {
#define GEN_PASS_DEF_LOWERLAYOUTS
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}
namespace {
struct LowerLayoutsPass : tessera::graph::impl::LowerLayoutsBase<LowerLayoutsPass> {
  using LowerLayoutsBase::LowerLayoutsBase;
  void runOnOperation() override {}
};
}
