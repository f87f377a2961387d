// Subgroup shuffles.  A subgroup is `sg` consecutive lanes of a group that
// execute in lock step (DeviceInfo::subgroup_size; 1 on the cpu plugin, where
// a shuffle is the identity).  With lane loops, a shuffle is a write of every
// lane's value to a lane-indexed array, then a read of the partner's slot.
//
// shuffle_xor(uint32* out, const uint32* in, uint32 sg, uint32 mask):
//   out[i] = in[subgroup_base(i) + ((i % sg) ^ mask)]          (mask < sg)
// shuffle_down(uint32* out, const uint32* in, uint32 sg, uint32 delta):
//   out[i] = in[subgroup_base(i) + (i % sg + delta)] if inside, else in[i]
#include "kernel_util.h"

using namespace cts_kernels;

namespace {
template <typename Partner>
void Shuffle(const TsCpuLaunchContext* ctx, Partner partner) {
  uint32_t* out = Ptr<uint32_t>(ctx, 0);
  const uint32_t* in = Ptr<const uint32_t>(ctx, 1);
  const uint32_t sg = Arg<uint32_t>(ctx, 2);
  const uint32_t p = Arg<uint32_t>(ctx, 3);
  const uint32_t L = Lanes(ctx);
  const uint64_t base = LinearGroup(ctx) * L;
  uint32_t* regs = static_cast<uint32_t*>(ctx->shared_memory);
  for (uint32_t lane = 0; lane < L; ++lane) regs[lane] = in[base + lane];
  // subgroup exchange
  for (uint32_t lane = 0; lane < L; ++lane) {
    const uint32_t sg_base = lane / sg * sg;
    out[base + lane] = regs[sg_base + partner(lane % sg, p, sg)];
  }
}
}  // namespace

TESSERA_CPU_KERNEL(shuffle_xor) {
  Shuffle(ctx, [](uint32_t l, uint32_t mask, uint32_t) { return l ^ mask; });
}

TESSERA_CPU_KERNEL(shuffle_down) {
  Shuffle(ctx, [](uint32_t l, uint32_t delta, uint32_t sg) {
    return l + delta < sg ? l + delta : l;
  });
}
