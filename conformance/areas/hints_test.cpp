// Area "hints": prefetch and advise never change results, and what each call
// reports (applied / emulated / ignored) matches DeviceInfo::prefetch_hint
// and advise_hint.  A hint on a non-managed buffer reports ignored.
#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

class Hints : public CtsTest {
 protected:
  Status Saxpy(const Stream& s, const Buffer& y, const Buffer& x, float a, uint64_t n) {
    StatusOr<Kernel> k = kernel("saxpy");
    if (!k.ok()) return k.status();
    const uint32_t group = GroupFor(*k, 128);
    return s.launch(*k, Dim(GroupsFor(n, group)), Dim(group),
                    {KernelArg::buffer(y), KernelArg::buffer(x), KernelArg::scalar(a),
                     KernelArg::scalar(n)});
  }
  std::vector<float> Data(uint64_t n, float scale) {
    std::vector<float> v(n);
    for (uint64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 1000) - 3.0f;
    return v;
  }
};

#define CTS_REQUIRE_MANAGED() \
  CTS_REQUIRE(info().supports(TS_BUFFER_MANAGED), "buffer_kinds.managed")

TEST_F(Hints, PrefetchReportsTheAnnouncedResult) {
  CTS_REQUIRE_MANAGED();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer m, device().allocate(1 << 20, TS_BUFFER_MANAGED));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  tessera::Device d = device();
  CTS_ASSERT_OK_AND_ASSIGN(TsHintResult to_device, s.prefetch(m, &d));
  EXPECT_EQ(to_device, info().prefetch_hint)
      << "prefetch reported " << HintResultName(to_device) << ", DeviceInfo announced "
      << HintResultName(info().prefetch_hint);
  CTS_ASSERT_OK_AND_ASSIGN(TsHintResult to_host, s.prefetch(m, nullptr, 4096, 8192));
  EXPECT_EQ(to_host, info().prefetch_hint);
  CTS_EXPECT_OK(s.synchronize());
}

TEST_F(Hints, AdviseReportsTheAnnouncedResult) {
  CTS_REQUIRE_MANAGED();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer m, device().allocate(1 << 16, TS_BUFFER_MANAGED));
  tessera::Device d = device();
  for (TsAdvice advice : {TS_ADVICE_PREFERRED_LOCATION, TS_ADVICE_READ_MOSTLY,
                          TS_ADVICE_ACCESSED_BY, TS_ADVICE_UNSET_PREFERRED_LOCATION,
                          TS_ADVICE_UNSET_READ_MOSTLY, TS_ADVICE_UNSET_ACCESSED_BY})
    for (const tessera::Device* target : std::vector<const tessera::Device*>{&d, nullptr}) {
      CTS_ASSERT_OK_AND_ASSIGN(TsHintResult r, tessera::advise(m, advice, target));
      EXPECT_EQ(r, info().advise_hint)
          << "advice " << advice << (target ? " to the device" : " to the host") << " reported "
          << HintResultName(r) << ", DeviceInfo announced " << HintResultName(info().advise_hint);
    }
}

TEST_F(Hints, HintsOnNonManagedBuffersAreIgnored) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(4096));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  tessera::Device d = device();
  CTS_ASSERT_OK_AND_ASSIGN(TsHintResult p, s.prefetch(b, &d));
  EXPECT_EQ(p, TS_HINT_IGNORED);
  CTS_ASSERT_OK_AND_ASSIGN(TsHintResult a, tessera::advise(b, TS_ADVICE_READ_MOSTLY, &d));
  EXPECT_EQ(a, TS_HINT_IGNORED);
  CTS_EXPECT_OK(s.synchronize());
}

TEST_F(Hints, PrefetchAndAdviseNeverChangeResults) {
  CTS_REQUIRE_MANAGED();
  CTS_REQUIRE_KERNELS();
  const uint64_t n = 1 << 18;
  auto xs = Data(n, 0.5f), ys = Data(n, -0.25f);
  tessera::Device d = device();
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  // Without hints (device buffers), then with every hint on managed ones.
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x0, device().allocate(n * 4));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer y0, device().allocate(n * 4));
  CTS_ASSERT_OK(Upload(x0, xs));
  CTS_ASSERT_OK(Upload(y0, ys));
  CTS_ASSERT_OK(Saxpy(s, y0, x0, 1.5f, n));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto want, Download<float>(y0, n));

  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(n * 4, TS_BUFFER_MANAGED));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer y, device().allocate(n * 4, TS_BUFFER_MANAGED));
  CTS_ASSERT_OK(Upload(x, xs));
  CTS_ASSERT_OK(Upload(y, ys));
  CTS_ASSERT_OK(tessera::advise(x, TS_ADVICE_READ_MOSTLY, &d));
  CTS_ASSERT_OK(tessera::advise(y, TS_ADVICE_PREFERRED_LOCATION, &d));
  CTS_ASSERT_OK(tessera::advise(y, TS_ADVICE_ACCESSED_BY, nullptr));
  CTS_ASSERT_OK(s.prefetch(x, &d));
  CTS_ASSERT_OK(s.prefetch(y, &d, 0, n * 2));  // half of it
  CTS_ASSERT_OK(Saxpy(s, y, x, 1.5f, n));
  CTS_ASSERT_OK(s.prefetch(y, nullptr));        // back to the host
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto got, Download<float>(y, n));
  EXPECT_TRUE(BitwiseEqual(got, want)) << "hints changed the result";
  // The host sees the same through the managed pointer.
  if (y.host_pointer()) {
    EXPECT_EQ(std::memcmp(y.host_pointer(), want.data(), n * 4), 0);
  }
}

TEST_F(Hints, PrefetchIsOrderedOnItsStream) {
  CTS_REQUIRE_MANAGED();
  CTS_REQUIRE_KERNELS();
  const uint64_t n = 4096;
  tessera::Device d = device();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer x, device().allocate(n * 4, TS_BUFFER_MANAGED));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer y, device().allocate(n * 4, TS_BUFFER_MANAGED));
  CTS_ASSERT_OK(Upload(x, std::vector<float>(n, 1.0f)));
  CTS_ASSERT_OK(Upload(y, std::vector<float>(n, 0.0f)));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  for (int i = 0; i < 20; ++i) {
    CTS_ASSERT_OK(s.prefetch(y, i % 2 ? nullptr : &d));
    CTS_ASSERT_OK(Saxpy(s, y, x, 1.0f, n));
  }
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<float>(y, n));
  EXPECT_EQ(v, std::vector<float>(n, 20.0f));
}

TEST_F(Hints, HintRangeIsChecked) {
  CTS_REQUIRE_MANAGED();
  CTS_ASSERT_OK_AND_ASSIGN(Buffer m, device().allocate(4096, TS_BUFFER_MANAGED));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  tessera::Device d = device();
  CTS_EXPECT_ERROR(tessera::advise(m, TS_ADVICE_READ_MOSTLY, &d, 4000, 200), kOutOfRange);
  CTS_EXPECT_ERROR(s.prefetch(m, &d, 8192, 1), kOutOfRange);
  // size 0 means "to the end".
  CTS_EXPECT_OK(tessera::advise(m, TS_ADVICE_READ_MOSTLY, &d, 1024, 0));
  CTS_EXPECT_OK(s.prefetch(m, &d, 1024, 0));
  CTS_EXPECT_OK(s.synchronize());
}

}  // namespace
}  // namespace tessera::cts
