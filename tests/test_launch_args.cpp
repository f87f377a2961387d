// The cpu plugin's per-launch argument list (plugins/cpu/launch_args.hpp):
// the pointers it hands a kernel survive the moves a queued launch goes
// through (into its task; out of it into a captured graph).  Inline scalar
// copies live inside the object, so a move must re-aim the pointers to
// them and leave buffer pointers alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "../plugins/cpu/launch_args.hpp"

namespace tessera::cpu {
namespace {

uint64_t ScalarAt(void* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Arguments alternate a buffer (a pointer into `buffer`) and a 4-byte
// scalar (i * 10); returns the list.
LaunchArgs Build(size_t n, std::vector<uint8_t>& buffer) {
  LaunchArgs args;
  size_t scalars = n / 2;
  args.reset(n, scalars);
  size_t w = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      args.set_pointer(i, buffer.data() + i);
    } else {
      const uint32_t v = static_cast<uint32_t>(i * 10);
      args.set_scalar(i, w++, &v, sizeof v);
    }
  }
  return args;
}

void ExpectIntact(LaunchArgs& args, size_t n, std::vector<uint8_t>& buffer) {
  ASSERT_EQ(args.size(), n);
  const auto* self = reinterpret_cast<const char*>(&args);
  for (size_t i = 0; i < n; ++i) {
    void* p = args.data()[i];
    if (i % 2 == 0) {
      EXPECT_EQ(p, buffer.data() + i) << "buffer argument " << i << " moved";
    } else {
      EXPECT_EQ(ScalarAt(p), i * 10) << "scalar argument " << i;
      if (n <= LaunchArgs::kInlineArgs) {
        // Inline: the copy lives in this object, not in the one moved from.
        const auto* c = static_cast<const char*>(p);
        EXPECT_TRUE(c >= self && c < self + sizeof args) << "scalar " << i << " points outside its list";
      }
    }
  }
}

TEST(LaunchArgs, InlineListSurvivesMoves) {
  std::vector<uint8_t> buffer(64);
  LaunchArgs a = Build(8, buffer);
  ExpectIntact(a, 8, buffer);
  LaunchArgs b(std::move(a));
  EXPECT_EQ(a.size(), 0u);
  ExpectIntact(b, 8, buffer);
  // The moved-from list's storage is overwritten: b must not point at it.
  a.reset(8, 4);
  for (size_t i = 0; i < 4; ++i) {
    const uint32_t junk = 0xdead;
    a.set_scalar(i, i, &junk, sizeof junk);
  }
  ExpectIntact(b, 8, buffer);
  LaunchArgs c;
  c = std::move(b);
  ExpectIntact(c, 8, buffer);
}

TEST(LaunchArgs, LargeListSurvivesMoves) {
  std::vector<uint8_t> buffer(128);
  const size_t n = LaunchArgs::kInlineArgs + 10;
  LaunchArgs a = Build(n, buffer);
  LaunchArgs b(std::move(a));
  ExpectIntact(b, n, buffer);
}

// More scalar words than fit inline, with few arguments (a large scalar):
// the large case too.
TEST(LaunchArgs, ManyScalarWords) {
  LaunchArgs a;
  const size_t words = LaunchArgs::kInlineWords + 4;
  std::vector<uint64_t> big(words);
  for (size_t i = 0; i < words; ++i) big[i] = i + 1;
  a.reset(1, words);
  a.set_scalar(0, 0, big.data(), words * sizeof(uint64_t));
  LaunchArgs b(std::move(a));
  EXPECT_EQ(std::memcmp(b.data()[0], big.data(), words * sizeof(uint64_t)), 0);
}

// A zero-size scalar still gets a word of its own (zeroed).
TEST(LaunchArgs, EmptyScalarPointsAtAZeroWord) {
  LaunchArgs a;
  a.reset(1, 1);
  a.set_scalar(0, 0, nullptr, 0);
  LaunchArgs b(std::move(a));
  EXPECT_EQ(ScalarAt(b.data()[0]), 0u);
}

}  // namespace
}  // namespace tessera::cpu
