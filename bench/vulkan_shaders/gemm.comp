#version 450
// gemm_f32/raw_vulkan/1024: C = A B on row-major f32 matrices (M x K times
// K x N), the hand-tiled reference of the Tessera GEMM on vulkan: a 128 x 128
// tile of C per workgroup of 16 x 16 invocations, each an 8 x 8 register
// block (rows 4*ty.. and 64+4*ty.., columns 4*tx.. and 64+4*tx..: vec4
// shared reads), K in slices of 16 staged in shared memory (A transposed),
// vec4 loads and stores everywhere.  M and N must be multiples of 128, K of
// 16.  (A 64 x 64 tile with 4 x 4 blocks ran 1.6x slower on lavapipe.)
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer A { vec4 a[]; };
layout(set = 0, binding = 1) readonly buffer B { vec4 b[]; };
layout(set = 0, binding = 2) writeonly buffer C { vec4 c[]; };
layout(push_constant) uniform Args { uint M; uint N; uint K; } args;
shared vec4 As[16][32];  // As[k][i]: rows 4i..4i+3 of the 128-row tile
shared vec4 Bs[16][32];  // Bs[k][j]: columns 4j..4j+3
void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint lane = ty * 16u + tx;
  uint row0 = gl_WorkGroupID.y * 128u, col0 = gl_WorkGroupID.x * 128u;
  vec4 acc[8][2];
  for (int i = 0; i < 8; ++i) { acc[i][0] = vec4(0.0); acc[i][1] = vec4(0.0); }
  uint kq = args.K / 4u, nq = args.N / 4u;
  for (uint k0 = 0u; k0 < args.K; k0 += 16u) {
    for (uint h = 0u; h < 2u; ++h) {
      uint l = lane + 256u * h;
      uint r = l / 4u, k4 = l % 4u;
      vec4 av = a[(row0 + r) * kq + k0 / 4u + k4];
      As[4u * k4 + 0u][r / 4u][r % 4u] = av.x;
      As[4u * k4 + 1u][r / 4u][r % 4u] = av.y;
      As[4u * k4 + 2u][r / 4u][r % 4u] = av.z;
      As[4u * k4 + 3u][r / 4u][r % 4u] = av.w;
      Bs[l / 32u][l % 32u] = b[(k0 + l / 32u) * nq + col0 / 4u + l % 32u];
    }
    barrier();
    for (uint k = 0u; k < 16u; ++k) {
      vec4 a0 = As[k][ty], a1 = As[k][ty + 16u];
      vec4 b0 = Bs[k][tx], b1 = Bs[k][tx + 16u];
      for (int i = 0; i < 4; ++i) {
        acc[i][0] = fma(vec4(a0[i]), b0, acc[i][0]);
        acc[i][1] = fma(vec4(a0[i]), b1, acc[i][1]);
        acc[i + 4][0] = fma(vec4(a1[i]), b0, acc[i + 4][0]);
        acc[i + 4][1] = fma(vec4(a1[i]), b1, acc[i + 4][1]);
      }
    }
    barrier();
  }
  for (uint i = 0u; i < 8u; ++i) {
    uint row = row0 + (i < 4u ? 4u * ty + i : 64u + 4u * ty + i - 4u);
    c[row * nq + col0 / 4u + tx] = acc[i][0];
    c[row * nq + col0 / 4u + tx + 16u] = acc[i][1];
  }
}
