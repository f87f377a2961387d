// plugins/common/host_reduce: the element conversions and reductions that
// host-staged collectives (cpu, vulkan) use for every TsDataType.
#include "host_reduce.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace ps = tessera::plugin_support;

namespace {

float F(uint32_t bits) { float f; std::memcpy(&f, &bits, 4); return f; }

TEST(HostReduce, HalfRoundsToNearestEven) {
  EXPECT_EQ(ps::float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(ps::float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(ps::float_to_half(65504.0f), 0x7bff);               // largest finite
  EXPECT_EQ(ps::float_to_half(65519.0f), 0x7bff);               // below the midpoint
  EXPECT_EQ(ps::float_to_half(65520.0f), 0x7c00);               // midpoint to 2^16: infinity
  EXPECT_EQ(ps::float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie: even
  EXPECT_EQ(ps::float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie: even
  EXPECT_EQ(ps::float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(ps::float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie with 0: even
  EXPECT_EQ(ps::float_to_half(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(ps::float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(ps::float_to_half(std::nanf("")) & 0x7e00, 0x7e00);
}

TEST(HostReduce, HalfAndBf16RoundTripEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    bool nan16 = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (!nan16) EXPECT_EQ(ps::float_to_half(ps::half_to_float(uint16_t(h))), h) << std::hex << h;
    else EXPECT_TRUE(std::isnan(ps::half_to_float(uint16_t(h))));
    bool nanb = (h & 0x7f80) == 0x7f80 && (h & 0x7f);
    if (!nanb) EXPECT_EQ(ps::float_to_bf16(ps::bf16_to_float(uint16_t(h))), h) << std::hex << h;
    else EXPECT_TRUE(std::isnan(ps::bf16_to_float(uint16_t(h))));
  }
}

TEST(HostReduce, Bf16RoundsToNearestEven) {
  EXPECT_EQ(ps::float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie: even
  EXPECT_EQ(ps::float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie: even
  EXPECT_EQ(ps::float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up: inf
  EXPECT_TRUE(std::isnan(ps::bf16_to_float(ps::float_to_bf16(F(0x7f800001)))));  // sNaN stays NaN
}

TEST(HostReduce, IntegersWrap) {
  int32_t a[1] = {std::numeric_limits<int32_t>::max()}, b[1] = {1}, out[1];
  ps::host_reduce(TS_DTYPE_I32, TS_REDUCE_SUM, {a, b}, {0, 1}, true, 1, out);
  EXPECT_EQ(out[0], std::numeric_limits<int32_t>::min());
  int8_t c[2] = {100, -128}, d[2] = {100, -1}, o8[2];
  ps::host_reduce(TS_DTYPE_I8, TS_REDUCE_SUM, {c, d}, {0, 1}, false, 2, o8);
  EXPECT_EQ(o8[0], int8_t(-56));
  EXPECT_EQ(o8[1], int8_t(127));
  ps::host_reduce(TS_DTYPE_I8, TS_REDUCE_MIN, {c, d}, {0, 1}, false, 2, o8);
  EXPECT_EQ(o8[0], 100);
  EXPECT_EQ(o8[1], -128);
}

// F16/BF16 accumulate in float and round once: 1 + 3 * 2^-8 in bf16 is a
// tie that rounds to 1 + 2^-6 (0x3f82); rounding after every step would
// give 1 + 2^-7 (0x3f81).
TEST(HostReduce, Bf16SumsRoundOnce) {
  uint16_t one = ps::float_to_bf16(1.0f), tiny = ps::float_to_bf16(std::ldexp(1.0f, -8));
  uint16_t r0[1] = {one}, r1[1] = {tiny}, r2[1] = {tiny}, r3[1] = {tiny}, out[1];
  ps::host_reduce(TS_DTYPE_BF16, TS_REDUCE_SUM, {r0, r1, r2, r3}, {0, 1, 2, 3}, true, 1, out);
  EXPECT_EQ(out[0], 0x3f82);
  ps::host_reduce(TS_DTYPE_BF16, TS_REDUCE_SUM, {r0, r1, r2, r3}, {3, 2, 1, 0}, false, 1, out);
  EXPECT_EQ(out[0], 0x3f82);
}

// Deterministic mode ignores the arrival order; over more elements than one
// internal block, and in place (out aliasing rank 0's input).
TEST(HostReduce, DeterministicIgnoresArrivalOrder) {
  const size_t n = 5000;
  std::vector<std::vector<float>> in(3, std::vector<float>(n));
  for (size_t r = 0; r < 3; ++r)
    for (size_t i = 0; i < n; ++i) in[r][i] = float((i * 37 + r * 101) % 1000) * (r == 1 ? 1e-4f : 1e3f);
  std::vector<float> a(n), b(n);
  ps::host_reduce(TS_DTYPE_F32, TS_REDUCE_SUM, {in[0].data(), in[1].data(), in[2].data()},
                  {0, 1, 2}, true, n, a.data());
  ps::host_reduce(TS_DTYPE_F32, TS_REDUCE_SUM, {in[0].data(), in[1].data(), in[2].data()},
                  {2, 0, 1}, true, n, b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), n * 4), 0);
  std::vector<float> inplace = in[0];
  ps::host_reduce(TS_DTYPE_F32, TS_REDUCE_SUM, {inplace.data(), in[1].data(), in[2].data()},
                  {0, 1, 2}, true, n, inplace.data());
  EXPECT_EQ(std::memcmp(a.data(), inplace.data(), n * 4), 0);
}

TEST(HostReduce, SizesAndNames) {
  EXPECT_EQ(ps::dtype_size(TS_DTYPE_F16), 2u);
  EXPECT_EQ(ps::dtype_size(TS_DTYPE_U8), 1u);
  EXPECT_EQ(ps::dtype_size(TS_DTYPE_I64), 8u);
  EXPECT_EQ(ps::dtype_size(static_cast<TsDataType>(99)), 0u);
  EXPECT_STREQ(ps::dtype_name(TS_DTYPE_BF16), "BF16");
}

}  // namespace
