// Host-side element types (tessera/element_types.hpp): every integer type a
// program can declare is stored, read, wrapped and sized the same way.
// Only i8, i32 and i64 were: an i16 or ui8 buffer read and wrote as 0 (a
// correct i16 result failed tessera-run's check, a --scalar became 0).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tessera/element_types.hpp"

namespace tessera::elements {
namespace {

std::vector<unsigned char> Stored(double v, const std::string& dtype) {
  std::vector<unsigned char> b(DtypeSize(dtype), 0xAA);
  Encode(v, b.data(), dtype);
  return b;
}

TEST(ElementTypes, EveryIntegerWidthRoundTrips) {
  struct Case {
    const char* dtype;
    size_t bytes;
    double lo, hi;
  };
  for (const Case& c : {Case{"i8", 1, -128, 127}, Case{"i16", 2, -32768, 32767}, Case{"si16", 2, -32768, 32767},
                        Case{"ui8", 1, 0, 255}, Case{"ui16", 2, 0, 65535}, Case{"i24", 4, -8388608, 8388607},
                        Case{"i32", 4, -2147483648.0, 2147483647.0}, Case{"ui32", 4, 0, 4294967295.0},
                        Case{"index", 8, -9007199254740992.0, 9007199254740992.0},
                        Case{"i64", 8, -9007199254740992.0, 9007199254740992.0}}) {
    EXPECT_EQ(DtypeSize(c.dtype), c.bytes) << c.dtype;
    EXPECT_TRUE(HasElementSize(c.dtype)) << c.dtype;
    for (double v : {c.lo, c.hi, 0.0, 1.0, c.lo + 1, c.hi - 1}) {
      auto b = Stored(v, c.dtype);
      EXPECT_EQ(Decode(b.data(), c.dtype), v) << c.dtype << " " << v;
      EXPECT_EQ(RoundTo(v, c.dtype), v) << c.dtype << " " << v;
    }
    EXPECT_EQ(DefaultTolerance(c.dtype), 0) << c.dtype << ": integers are exact";
  }
}

TEST(ElementTypes, IntegersWrapAtTheirWidth) {
  EXPECT_EQ(RoundTo(32768, "i16"), -32768);
  EXPECT_EQ(RoundTo(-1, "ui8"), 255);
  EXPECT_EQ(RoundTo(256, "ui8"), 0);
  EXPECT_EQ(RoundTo(8388608, "i24"), -8388608);
  EXPECT_EQ(RoundTo(4294967296.0 + 5, "i32"), 5);
  // Stored little-endian, sign-extended to the storage bytes.
  EXPECT_EQ(Stored(-2, "i16"), (std::vector<unsigned char>{0xFE, 0xFF}));
  EXPECT_EQ(Stored(-2, "i24"), (std::vector<unsigned char>{0xFE, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(Stored(300, "ui16"), (std::vector<unsigned char>{0x2C, 0x01}));
  // Bits above an i24's width are not its value.
  const unsigned char high[4] = {0x01, 0x00, 0x00, 0x7F};
  EXPECT_EQ(Decode(high, "i24"), 1);
}

TEST(ElementTypes, ValuesNoIntegerHoldsAreNotUndefinedBehaviour) {
  // Converting 1e20, inf or NaN to int64 directly is undefined (UBSan):
  // they wrap modulo 2^64 (inf and NaN as 0).
  for (const char* d : {"i8", "i16", "i32", "i64", "ui32", "index"}) {
    for (double v : {1e20, -1e20, 1e300, std::numeric_limits<double>::infinity(), std::nan("")}) {
      auto b = Stored(v, d);
      const double back = Decode(b.data(), d);
      EXPECT_TRUE(std::isfinite(back)) << d << " " << v;
      EXPECT_EQ(RoundTo(v, d), back) << d << " " << v;
    }
  }
  EXPECT_EQ(RoundTo(1e20, "i64"), static_cast<double>(static_cast<int64_t>(7766279631452241920ll)));
  EXPECT_EQ(RoundTo(std::nan(""), "i32"), 0);
}

TEST(ElementTypes, CastsToUnsignedSaturateAtZeroAndTheTop) {
  EXPECT_EQ(CastValue(-3.5, "f32", "ui8"), 0);
  EXPECT_EQ(CastValue(300.7, "f32", "ui8"), 255);
  EXPECT_EQ(CastValue(-40000, "f32", "i16"), -32768);
  EXPECT_EQ(CastValue(7.9, "f32", "i16"), 7);
  // 64 bits: saturated to the largest double below 2^63 / 2^64, which stores
  // as itself (2^63 - 1 rounds up to 2^63 and wrapped to INT64_MIN).
  for (const char* d : {"i64", "ui64"}) {
    const double sat = CastValue(1e30, "f32", d);
    auto b = Stored(sat, d);
    EXPECT_EQ(Decode(b.data(), d), sat) << d;
    EXPECT_GT(sat, 9e18) << d;
  }
}

TEST(ElementTypes, RandomUnsignedInputsAreNotNegative) {
  std::mt19937 rng(1);
  for (int i = 0; i < 1000; ++i) {
    const double v = RandomValue(rng, "ui8");
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 16);
  }
}

}  // namespace
}  // namespace tessera::elements
