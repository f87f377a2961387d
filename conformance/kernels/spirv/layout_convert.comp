#version 450
// layout_pack / layout_unpack(float* dst, const float* src, uint32 M,
// uint32 N, uint32 kind, uint32 p0, uint32 p1, uint32 p2, uint32 p3): one
// lane per logical element of an M x N f32 matrix (layouts.cpp).
//   pack:   dst[Offset(layout, i, j)] = src[i*N + j]
//   unpack: dst[i*N + j] = src[Offset(layout, i, j)]
// Offset() is layouts.h's index map, transcribed into GLSL below (in 32-bit
// arithmetic: the matrices are small).
layout(local_size_x = 64) in;
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(set = 0, binding = 0) writeonly buffer Dst { float dst[]; };
layout(set = 0, binding = 1) readonly buffer Src { float src[]; };
layout(push_constant) uniform Args {
  uint M; uint N; uint kind; uint p0; uint p1; uint p2; uint p3;
} args;

uint round_up(uint x, uint m) { return (x + m - 1u) / m * m; }

// layouts.h: cts_layouts::Offset.
uint layout_offset(uint M, uint N, uint i, uint j) {
  if (args.kind == 0u) return i * N + j;  // row_major
  if (args.kind == 1u) return j * M + i;  // col_major
  if (args.kind == 2u) {                  // blocked<BM,BN>
    uint BM = args.p0, BN = args.p1;
    uint blocks_per_row = round_up(N, BN) / BN;
    uint block = (i / BM) * blocks_per_row + j / BN;
    return block * BM * BN + (i % BM) * BN + j % BN;
  }
  if (args.kind == 3u) {  // tiled<TM,TN,tm,tn>
    uint TM = args.p0, TN = args.p1, tm = args.p2, tn = args.p3;
    uint macro_per_row = round_up(N, TN) / TN;
    uint macro_ = (i / TM) * macro_per_row + j / TN;
    uint ii = i % TM, jj = j % TN;
    uint micro = (ii / tm) * (TN / tn) + jj / tn;
    return macro_ * TM * TN + micro * tm * tn + (ii % tm) * tn + jj % tn;
  }
  if (args.kind == 4u) {  // interleaved<K>
    uint K = args.p0;
    return ((i / K) * N + j) * K + i % K;
  }
  return 0u;
}

void main() {
  uint e = linear_index();
  uint M = args.M, N = args.N;
  if (e >= M * N) return;
  uint i = e / N, j = e % N;
  uint off = layout_offset(M, N, i, j);
#ifdef LAYOUT_PACK
  dst[off] = src[e];
#else
  dst[e] = src[off];
#endif
}
