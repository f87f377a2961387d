#include "tessera/Dialect/Tile/Transforms/Passes.h"
namespace tessera::tile {
#define GEN_PASS_DEF_WORKITEMLOOPS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
}
namespace {
struct WorkItemLoopsPass : tessera::tile::impl::WorkItemLoopsBase<WorkItemLoopsPass> {
  using WorkItemLoopsBase::WorkItemLoopsBase;
  void runOnOperation() override {}
};
}
