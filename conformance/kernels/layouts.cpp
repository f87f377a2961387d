// Layout conversions on the device (the "kernels" implementation of the
// layouts area; docs/conformance.md).  One lane per logical element (i, j)
// of an M x N f32 matrix, 1-D launch over M*N lanes.
//
// layout_pack(float* dst, const float* src_row_major, uint32 M, uint32 N,
//             uint32 kind, uint32 p0, uint32 p1, uint32 p2, uint32 p3)
//   dst[Offset(layout, i, j)] = src[i*N + j]
// layout_unpack(float* dst_row_major, const float* src, ...same...)
//   dst[i*N + j] = src[Offset(layout, i, j)]
#include "kernel_util.h"
#include "layouts.h"

using namespace cts_kernels;

namespace {
template <bool kPack>
void Convert(const TsCpuLaunchContext* ctx) {
  float* dst = Ptr<float>(ctx, 0);
  const float* src = Ptr<const float>(ctx, 1);
  const uint32_t M = Arg<uint32_t>(ctx, 2), N = Arg<uint32_t>(ctx, 3);
  cts_layouts::Layout layout{Arg<uint32_t>(ctx, 4),
                             {Arg<uint32_t>(ctx, 5), Arg<uint32_t>(ctx, 6),
                              Arg<uint32_t>(ctx, 7), Arg<uint32_t>(ctx, 8)}};
  const uint64_t first = LinearGroup(ctx) * Lanes(ctx);
  for (uint32_t lane = 0; lane < Lanes(ctx); ++lane) {
    const uint64_t e = first + lane;
    if (e >= uint64_t(M) * N) continue;
    const uint64_t i = e / N, j = e % N;
    const uint64_t off = cts_layouts::Offset(layout, M, N, i, j);
    if (kPack)
      dst[off] = src[e];
    else
      dst[e] = src[off];
  }
}
}  // namespace

TESSERA_CPU_KERNEL(layout_pack) { Convert<true>(ctx); }
TESSERA_CPU_KERNEL(layout_unpack) { Convert<false>(ctx); }
