// Stream::launch's argument checks: those every launch gets (a live
// buffer of the stream's Runtime, an offset inside it) and, with one
// KernelArgRequirement per argument (what Program::Run passes), a scalar of
// the exact size and a buffer of the stream's device holding the bytes the
// kernel reads.  A refused launch names the argument and queues nothing.
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;

constexpr uint32_t kN = 64;

class LaunchRequirementsTest : public CpuTest {
 protected:
  int NumDevices() const override { return 2; }

  // fill(out: f32[kN], value: f32, n: u32): what the kernel needs.
  const std::vector<KernelArgRequirement> fill_needs_ = {{kN * 4, false}, {4, true}, {4, true}};

  Status LaunchFill(const Stream& s, const std::vector<KernelArg>& args, bool required = true) {
    return s.launch(kernel("fill"), Groups(kN), Lanes(), args.data(), args.size(), 0,
                    required ? fill_needs_.data() : nullptr);
  }
  // The buffer is still all zeros: the refused launch ran nothing.
  static void ExpectUntouched(const Stream& s, const Buffer& b) {
    TS_ASSERT_OK(s.synchronize());
    for (float v : Download<float>(b, b.size() / 4)) ASSERT_EQ(v, 0.0f);
  }
  Buffer Zeros(uint64_t bytes, size_t dev = 0) {
    Buffer b = Alloc(bytes, TS_BUFFER_DEVICE, dev);
    EXPECT_TRUE(memset(b, 0, 0, bytes).ok());
    return b;
  }
};

TEST_F(LaunchRequirementsTest, ArgumentsThatMeetThemLaunch) {
  Buffer out = Zeros(kN * 4 + 64);
  Stream s = NewStream();
  // Exactly the bytes needed after the offset is enough.
  TS_ASSERT_OK(LaunchFill(s, {KernelArg::buffer(out, 64), KernelArg::scalar(1.5f), KernelArg::scalar(kN)}));
  TS_ASSERT_OK(s.synchronize());
  std::vector<float> v = Download<float>(out, kN + 16);
  for (uint32_t i = 0; i < kN + 16; ++i) ASSERT_EQ(v[i], i < 16 ? 0.0f : 1.5f) << i;
}

TEST_F(LaunchRequirementsTest, AShortBufferIsOutOfRangeAndNamesTheBytes) {
  Buffer out = Zeros(kN * 4);
  Stream s = NewStream();
  Status st = LaunchFill(s, {KernelArg::buffer(out, 4), KernelArg::scalar(1.5f), KernelArg::scalar(kN)});
  TS_EXPECT_CODE(st, kOutOfRange);
  TS_EXPECT_CONTAINS(st.message(), "launch of 'fill': argument 0 needs 256 bytes after its offset 4");
  TS_EXPECT_CONTAINS(st.message(), "its buffer of 256 bytes holds 252");
  ExpectUntouched(s, out);
}

TEST_F(LaunchRequirementsTest, AScalarOfTheWrongSizeIsNamed) {
  Buffer out = Zeros(kN * 4);
  Stream s = NewStream();
  Status st = LaunchFill(s, {KernelArg::buffer(out), KernelArg::scalar(1.5), KernelArg::scalar(kN)});
  TS_EXPECT_CODE(st, kInvalidArgument);
  TS_EXPECT_CONTAINS(st.message(), "argument 1 is a scalar of 8 bytes; the kernel takes 4 bytes there");
  ExpectUntouched(s, out);
}

TEST_F(LaunchRequirementsTest, AKindSwapIsNamedEitherWay) {
  Buffer out = Zeros(kN * 4);
  Stream s = NewStream();
  Status st = LaunchFill(s, {KernelArg::scalar(1.5f), KernelArg::scalar(1.5f), KernelArg::scalar(kN)});
  TS_EXPECT_CODE(st, kInvalidArgument);
  TS_EXPECT_CONTAINS(st.message(), "argument 0 is a scalar; the kernel takes a buffer of at least 256 bytes");
  st = LaunchFill(s, {KernelArg::buffer(out), KernelArg::buffer(out), KernelArg::scalar(kN)});
  TS_EXPECT_CODE(st, kInvalidArgument);
  TS_EXPECT_CONTAINS(st.message(), "argument 1 is a buffer; the kernel takes a scalar of 4 bytes");
  ExpectUntouched(s, out);
}

TEST_F(LaunchRequirementsTest, ABufferOfAnotherDeviceIsRefusedOnlyWithThem) {
  Buffer elsewhere = Zeros(kN * 4, 1);
  Stream s = NewStream();
  Status st = LaunchFill(s, {KernelArg::buffer(elsewhere), KernelArg::scalar(1.5f), KernelArg::scalar(kN)});
  TS_EXPECT_CODE(st, kInvalidArgument);
  TS_EXPECT_CONTAINS(st.message(), "argument 0 is a buffer of");
  TS_EXPECT_CONTAINS(st.message(), "copy it to the stream's device first");
  ExpectUntouched(s, elsewhere);
  // Without them, a buffer of another device of the Runtime is the
  // plugin's to take (the cpu plugin's devices share the host's memory).
  TS_ASSERT_OK(LaunchFill(s, {KernelArg::buffer(elsewhere), KernelArg::scalar(1.5f), KernelArg::scalar(kN)}, false));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<float>(elsewhere, kN), std::vector<float>(kN, 1.5f));
}

TEST_F(LaunchRequirementsTest, TheChecksEveryLaunchGetsStillComeFirst) {
  Buffer out = Zeros(kN * 4);
  Buffer gone = Alloc(kN * 4);
  Buffer alias = gone;
  TS_ASSERT_OK(gone.destroy());
  Stream s = NewStream();
  for (bool required : {true, false}) {
    Status st = LaunchFill(s, {KernelArg::buffer(alias), KernelArg::scalar(1.5f), KernelArg::scalar(kN)}, required);
    TS_EXPECT_CODE(st, kInvalidHandle);
    TS_EXPECT_CONTAINS(st.message(), "argument 0 is a null or destroyed buffer");
    st = LaunchFill(s, {KernelArg::buffer(out, kN * 4), KernelArg::scalar(1.5f), KernelArg::scalar(kN)}, required);
    TS_EXPECT_CODE(st, kOutOfRange);
    TS_EXPECT_CONTAINS(st.message(), "argument 0 has offset 256 past the end of its buffer of 256 bytes");
  }
  ExpectUntouched(s, out);
}

}  // namespace
}  // namespace tessera
