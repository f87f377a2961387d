// Launches checked against the signature a kernel exports
// (TESSERA_CPU_KERNEL_SIGNATURE, tessera/cpu_kernel.h): a wrong argument list
// or a grid past what the buffers are sized for is an INVALID_ARGUMENT error
// naming the argument, where the kernel (no bounds checks, like generated
// code) would otherwise read a scalar as a pointer or run past its buffer on
// a worker thread.  Kernels: tests/kernels/signed.cpp.
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;
using testing::Upload;

class KernelSignatureTest : public CpuTest {
 protected:
  Status Launch(TsDim3 grid, std::vector<KernelArg> args) {
    Stream s = NewStream();
    Status st = s.launch(kernel("scale64"), grid, Lanes(16), args);
    Status done = s.synchronize();
    return st.ok() ? done : st;
  }
};

TEST_F(KernelSignatureTest, MatchingListRuns) {
  Buffer data = Alloc(256);
  Upload(data, std::vector<float>(64, 2.0f));
  TS_ASSERT_OK(Launch({4, 1, 1}, {KernelArg::buffer(data), KernelArg::scalar(1.5f)}));
  for (float v : Download<float>(data, 64)) ASSERT_EQ(v, 3.0f);
  // A smaller grid is fine: fewer groups, each within the buffer.
  TS_ASSERT_OK(Launch({2, 1, 1}, {KernelArg::buffer(data), KernelArg::scalar(2.0f)}));
}

TEST_F(KernelSignatureTest, WrongCountIsRefused) {
  Buffer data = Alloc(256);
  Status s = Launch({4, 1, 1}, {KernelArg::buffer(data)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  TS_EXPECT_CONTAINS(s.message(), "kernel 'scale64' takes 2 arguments");
  TS_EXPECT_CONTAINS(s.message(), "the launch passes 1");
}

TEST_F(KernelSignatureTest, ScalarWhereABufferIsExpectedIsRefused) {
  // Before the check a worker thread dereferenced the float's bytes.
  Status s = Launch({4, 1, 1}, {KernelArg::scalar(1.0f), KernelArg::scalar(1.0f)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  TS_EXPECT_CONTAINS(s.message(), "argument 0 of kernel 'scale64' is a buffer");
}

TEST_F(KernelSignatureTest, WrongScalarSizeIsRefused) {
  Buffer data = Alloc(256);
  Status s = Launch({4, 1, 1}, {KernelArg::buffer(data), KernelArg::scalar(1.0)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  TS_EXPECT_CONTAINS(s.message(), "argument 1 of kernel 'scale64' is a 4-byte scalar");
}

TEST_F(KernelSignatureTest, ShortBufferIsRefused) {
  Buffer small = Alloc(128), big = Alloc(512);
  Status s = Launch({4, 1, 1}, {KernelArg::buffer(small), KernelArg::scalar(1.0f)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  TS_EXPECT_CONTAINS(s.message(), "argument 0 of kernel 'scale64' spans 256 bytes");
  // An offset that leaves fewer bytes than the kernel spans, too.
  s = Launch({4, 1, 1}, {KernelArg::buffer(big, 384), KernelArg::scalar(1.0f)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  TS_EXPECT_CONTAINS(s.message(), "the buffer has 128 bytes from offset 384");
}

TEST_F(KernelSignatureTest, GridPastTheBuffersIsRefused) {
  // tessera-run examples/saxpy.mlir --grid 1000 segfaulted this way.
  Buffer data = Alloc(256);
  Status s = Launch({1000, 1, 1}, {KernelArg::buffer(data), KernelArg::scalar(1.0f)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  TS_EXPECT_CONTAINS(s.message(), "buffers sized for grid (4, 1, 1)");
  s = Launch({1, 2, 1}, {KernelArg::buffer(data), KernelArg::scalar(1.0f)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  // The stream is still usable.
  TS_EXPECT_OK(Launch({4, 1, 1}, {KernelArg::buffer(data), KernelArg::scalar(1.0f)}));
}

TEST_F(KernelSignatureTest, MalformedSignatureIsAnErrorAtGetKernel) {
  auto k = executables_.at(0).kernel("badly_signed");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument) << k.status().ToString();
  TS_EXPECT_CONTAINS(k.status().message(), "malformed argument 'q7'");
}

}  // namespace
}  // namespace tessera
