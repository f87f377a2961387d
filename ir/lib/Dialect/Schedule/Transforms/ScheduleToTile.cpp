#include "tessera/Dialect/Schedule/Transforms/Passes.h"
namespace tessera::schedule {
#define GEN_PASS_DEF_SCHEDULETOTILE
#include "tessera/Dialect/Schedule/Transforms/Passes.h.inc"
}
namespace {
struct ScheduleToTilePass : tessera::schedule::impl::ScheduleToTileBase<ScheduleToTilePass> {
  using ScheduleToTileBase::ScheduleToTileBase;
  void runOnOperation() override {}
};
}
