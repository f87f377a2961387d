// Unified-memory hints report what they did, and never change results.
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;
using testing::Iota;
using testing::Upload;

class HintTest : public CpuTest {};

TEST_F(HintTest, CpuReportsEmulatedHints) {
  const DeviceInfo& info = device().info();
  EXPECT_EQ(info.prefetch_hint, TS_HINT_EMULATED);
  EXPECT_EQ(info.advise_hint, TS_HINT_EMULATED);
}

TEST_F(HintTest, PrefetchManagedMatchesDeviceInfo) {
  constexpr size_t n = 4096;
  Buffer m = Alloc(n * 4, TS_BUFFER_MANAGED);
  std::vector<float> in = Iota(n, 0.25f);
  Upload(m, in);
  Stream s = NewStream();
  const Device& dev = device();
  TS_ASSERT_OK_AND_ASSIGN(TsHintResult to_device, s.prefetch(m, &dev));
  EXPECT_EQ(to_device, dev.info().prefetch_hint);
  TS_ASSERT_OK_AND_ASSIGN(TsHintResult to_host, s.prefetch(m, nullptr));
  EXPECT_EQ(to_host, dev.info().prefetch_hint);
  TS_ASSERT_OK_AND_ASSIGN(TsHintResult part,
                          s.prefetch(m, &dev, 1024, 1024));
  EXPECT_EQ(part, dev.info().prefetch_hint);
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<float>(m, n), in);
}

TEST_F(HintTest, AdviseManagedMatchesDeviceInfo) {
  constexpr size_t n = 1024;
  Buffer m = Alloc(n * 4, TS_BUFFER_MANAGED);
  std::vector<float> in = Iota(n, -3.0f);
  Upload(m, in);
  const Device& dev = device();
  for (TsAdvice advice :
       {TS_ADVICE_PREFERRED_LOCATION, TS_ADVICE_READ_MOSTLY,
        TS_ADVICE_ACCESSED_BY, TS_ADVICE_UNSET_PREFERRED_LOCATION,
        TS_ADVICE_UNSET_READ_MOSTLY, TS_ADVICE_UNSET_ACCESSED_BY}) {
    SCOPED_TRACE(static_cast<int>(advice));
    TS_ASSERT_OK_AND_ASSIGN(TsHintResult r, advise(m, advice, &dev));
    EXPECT_EQ(r, dev.info().advise_hint);
  }
  TS_ASSERT_OK_AND_ASSIGN(TsHintResult host,
                          advise(m, TS_ADVICE_PREFERRED_LOCATION, nullptr));
  EXPECT_EQ(host, dev.info().advise_hint);
  EXPECT_EQ(Download<float>(m, n), in);
}

TEST_F(HintTest, HintsOnDeviceMemoryAreIgnored) {
  constexpr size_t n = 512;
  Buffer d = Alloc(n * 4, TS_BUFFER_DEVICE);
  std::vector<float> in = Iota(n, 11.0f);
  Upload(d, in);
  Stream s = NewStream();
  const Device& dev = device();
  TS_ASSERT_OK_AND_ASSIGN(TsHintResult p, s.prefetch(d, &dev));
  EXPECT_EQ(p, TS_HINT_IGNORED);
  TS_ASSERT_OK_AND_ASSIGN(TsHintResult a,
                          advise(d, TS_ADVICE_READ_MOSTLY, &dev));
  EXPECT_EQ(a, TS_HINT_IGNORED);
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<float>(d, n), in);
}

TEST_F(HintTest, KernelResultsUnchangedByHints) {
  constexpr uint32_t n = 256;
  Buffer x = Alloc(n * 4, TS_BUFFER_MANAGED), y = Alloc(n * 4, TS_BUFFER_MANAGED);
  Upload(x, Iota(n));
  Upload(y, Iota(n, 1.0f, 0.0f));
  Stream s = NewStream();
  const Device& dev = device();
  TS_ASSERT_OK(advise(x, TS_ADVICE_READ_MOSTLY, &dev).status());
  TS_ASSERT_OK(s.prefetch(x, &dev).status());
  TS_ASSERT_OK(s.prefetch(y, &dev).status());
  TS_ASSERT_OK(s.launch(kernel("saxpy"), Groups(n), Lanes(),
                        {KernelArg::scalar(2.0f), KernelArg::buffer(x),
                         KernelArg::buffer(y), KernelArg::scalar(n)}));
  TS_ASSERT_OK(s.prefetch(y, nullptr).status());
  TS_ASSERT_OK(s.synchronize());
  const float* host = static_cast<const float*>(y.host_pointer());
  ASSERT_NE(host, nullptr);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(host[i], 2.0f * i + 1.0f) << i;
}

TEST_F(HintTest, OutOfRangeHintIsAnError) {
  Buffer m = Alloc(1024, TS_BUFFER_MANAGED);
  Stream s = NewStream();
  const Device& dev = device();
  EXPECT_FALSE(s.prefetch(m, &dev, 1000, 100).ok());
  EXPECT_FALSE(advise(m, TS_ADVICE_READ_MOSTLY, &dev, 2048, 0).ok());
}

}  // namespace
}  // namespace tessera
