// Area "launches": the suite's shipped kernels fill_u32 and saxpy launched
// as parameterized cases over element counts (1, odd, around the group
// size, more groups than lanes) x group sizes x buffer offsets (0 and 256
// bytes).  A device that fixes the group size in the kernel (Vulkan) runs
// its own.  Every element must be written exactly once and nothing around
// them; saxpy's operands are small integers, so the result is exact with or
// without FMA.  The grid is the launch's: ceil(n / group) groups.
#include <cstring>
#include <tuple>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

using LaunchParam = std::tuple<uint64_t /*n*/, uint32_t /*group*/, uint64_t /*offset*/>;

constexpr uint64_t kGuard = 64;  // bytes after the elements
constexpr uint8_t kFill = 0xEE;

class Launches : public CtsTest, public ::testing::WithParamInterface<LaunchParam> {
 protected:
  uint64_t n() const { return std::get<0>(GetParam()); }
  uint32_t group() const { return std::get<1>(GetParam()); }
  uint64_t offset() const { return std::get<2>(GetParam()); }
  uint64_t bytes() const { return offset() + n() * 4 + kGuard; }

  StatusOr<Buffer> Filled() {
    StatusOr<Buffer> b = device().allocate(bytes());
    if (!b.ok()) return b;
    TESSERA_RETURN_IF_ERROR(tessera::memset(*b, 0, kFill, bytes()));
    return b;
  }
  // The buffer holds kFill outside the n elements at offset(), and `want`
  // (n 32-bit words) inside.
  void ExpectWords(const Buffer& b, const std::vector<uint32_t>& want) {
    CTS_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> got, Download<uint8_t>(b, bytes()));
    for (uint64_t i = 0; i < offset(); ++i) ASSERT_EQ(got[i], kFill) << "byte " << i << " before the elements";
    for (uint64_t i = 0; i < n(); ++i) {
      uint32_t w;
      std::memcpy(&w, &got[offset() + 4 * i], 4);
      ASSERT_EQ(w, want[i]) << "element " << i << " of " << n();
    }
    for (uint64_t i = offset() + 4 * n(); i < bytes(); ++i)
      ASSERT_EQ(got[i], kFill) << "byte " << i - offset() - 4 * n() << " after the elements";
  }
};

TEST_P(Launches, FillU32) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, kernel("fill_u32"));
  const uint32_t g = GroupFor(k, group());
  CTS_REQUIRE(g <= info().max_group_size, "max_group_size>=" + std::to_string(g));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, Filled());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  const uint32_t value = 0xC0DE0000u + static_cast<uint32_t>(n());
  CTS_ASSERT_OK(s.launch(k, Dim(GroupsFor(n(), g)), GroupFor(k, Dim(g)),
                         {KernelArg::buffer(b, offset()), KernelArg::scalar(value),
                          KernelArg::scalar(n())}));
  CTS_ASSERT_OK(s.synchronize());
  ExpectWords(b, std::vector<uint32_t>(n(), value));
}

TEST_P(Launches, Saxpy) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, kernel("saxpy"));
  const uint32_t g = GroupFor(k, group());
  CTS_REQUIRE(g <= info().max_group_size, "max_group_size>=" + std::to_string(g));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer y, Filled());
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, Filled());
  std::vector<float> xs(n()), ys(n());
  std::vector<uint32_t> want(n());
  for (uint64_t i = 0; i < n(); ++i) {
    xs[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    ys[i] = static_cast<float>(i % 7);
    const float r = 3.0f * xs[i] + ys[i];
    std::memcpy(&want[i], &r, 4);
  }
  CTS_ASSERT_OK(Upload(x, xs, offset()));
  CTS_ASSERT_OK(Upload(y, ys, offset()));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK(s.launch(k, Dim(GroupsFor(n(), g)), GroupFor(k, Dim(g)),
                         {KernelArg::buffer(y, offset()), KernelArg::buffer(x, offset()),
                          KernelArg::scalar(3.0f), KernelArg::scalar(n())}));
  CTS_ASSERT_OK(s.synchronize());
  ExpectWords(y, want);
}

std::string LaunchName(const ::testing::TestParamInfo<LaunchParam>& info) {
  return "N" + std::to_string(std::get<0>(info.param)) + "_Group" +
         std::to_string(std::get<1>(info.param)) + "_Offset" +
         std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    , Launches,
    ::testing::Combine(::testing::Values<uint64_t>(1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 255, 256,
                                                   257, 1000, 4097, 65537),
                       ::testing::Values<uint32_t>(1, 32, 64, 128, 256),
                       ::testing::Values<uint64_t>(0, 256)),
    LaunchName);

}  // namespace
}  // namespace tessera::cts
