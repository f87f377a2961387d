#include "tessera/Target/CPU/Passes.h"
namespace tessera::cpu {
#define GEN_PASS_DEF_TILETOCPU
#include "tessera/Target/CPU/Passes.h.inc"
}
namespace {
struct TileToCPUPass : tessera::cpu::impl::TileToCPUBase<TileToCPUPass> {
  using TileToCPUBase::TileToCPUBase;
  void runOnOperation() override {}
};
}
