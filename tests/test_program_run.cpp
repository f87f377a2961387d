// Program::Run's fast path (one device, launches only): whatever it does
// not accept must reach the full checks, which name the problem, and
// nothing may be launched.  The program is made by hand: one launch of the
// test kernel `fill` that passes the caller's arguments through, the shape
// of a Tile IR kernel compiled as a program (the fast path's single
// launch, which leaves the stream's device to the launch itself).
#include <fstream>
#include <iterator>

#include "tessera/ir_version.h"
#include "tessera/program.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;

constexpr uint32_t kN = 64;

class ProgramRunTest : public CpuTest {
 protected:
  int NumDevices() const override { return 2; }

  // fill(out: f32[kN], value: f32, n: u32) as a program on device 0.
  Program FillProgram() {
    ProgramImage im;
    im.plugin = "cpu";
    im.target = "cpu";
    im.ir_version = TESSERA_IR_VERSION;
    im.source_name = "test_program_run";
    im.function = "fill";
    im.params = {{"out", ParamRole::kOutput, "f32", {kN}, kN * 4, {}},
                 {"value", ParamRole::kScalar, "f32", {}, 4, {}},
                 {"n", ParamRole::kScalar, "i32", {}, 4, {}}};
    im.param_values = {0, -1, -1};
    im.values = {{"f32", kN * 4}};
    std::ifstream in(TESSERA_TEST_KERNELS_PATH, std::ios::binary);
    ExecutableImage exe;
    exe.format = testing::NativeFormat(device(0));
    exe.data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    KernelSignature sig;
    sig.name = "fill";
    sig.params = {{TS_KERNEL_ARG_BUFFER, "f32", {kN}, kN * 4, TS_PARAM_WRITE},
                  {TS_KERNEL_ARG_SCALAR, "f32", {}, 4, TS_PARAM_READ},
                  {TS_KERNEL_ARG_SCALAR, "i32", {}, 4, TS_PARAM_READ}};
    exe.kernels.push_back(sig);
    im.executables.push_back(std::move(exe));
    PlanStep s;
    s.kernel = "fill";
    s.grid = {kN / 32, 1, 1};
    s.group_size = {32, 1, 1};
    s.args = {{PlanArg::kValue, 0}, {PlanArg::kScalarParam, 1}, {PlanArg::kScalarParam, 2}};
    im.steps.push_back(s);
    auto p = Program::Create({device(0)}, im);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : Program();
  }

  static std::vector<float> Read(const Buffer& b) { return testing::Download<float>(b, kN); }
};

TEST_F(ProgramRunTest, AValidRunLaunches) {
  Program p = FillProgram();
  Buffer out = Alloc(kN * 4);
  Stream s = NewStream();
  ASSERT_TRUE(p.Run(s, {KernelArg::buffer(out), KernelArg::scalar(2.5f), KernelArg::scalar(kN)}).ok());
  ASSERT_TRUE(s.synchronize().ok());
  EXPECT_EQ(Read(out), std::vector<float>(kN, 2.5f));
}

TEST_F(ProgramRunTest, AStreamOfAnotherDeviceIsNamedAndNothingRuns) {
  Program p = FillProgram();
  Buffer out = Alloc(kN * 4);
  ASSERT_TRUE(memset(out, 0, 0, kN * 4).ok());
  Stream other = NewStream({}, 1);
  Status st = p.Run(other, {KernelArg::buffer(out), KernelArg::scalar(2.5f), KernelArg::scalar(kN)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  TS_EXPECT_CONTAINS(st.message(), "stream 0 is on");
  TS_EXPECT_CONTAINS(st.message(), "not on the program's device");
  ASSERT_TRUE(other.synchronize().ok());
  EXPECT_EQ(Read(out), std::vector<float>(kN, 0.0f));
}

TEST_F(ProgramRunTest, ADestroyedStreamIsNamed) {
  Program p = FillProgram();
  Buffer out = Alloc(kN * 4);
  Stream gone = NewStream();
  ASSERT_TRUE(gone.destroy().ok());
  Status st = p.Run(gone, {KernelArg::buffer(out), KernelArg::scalar(2.5f), KernelArg::scalar(kN)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidHandle) << st.ToString();
  TS_EXPECT_CONTAINS(st.message(), "stream 0 is not valid");
}

TEST_F(ProgramRunTest, ABufferOfAnotherDeviceOrTooSmallIsNamed) {
  Program p = FillProgram();
  Stream s = NewStream();
  Buffer elsewhere = Alloc(kN * 4, TS_BUFFER_DEVICE, 1);
  Status st = p.Run(s, {KernelArg::buffer(elsewhere), KernelArg::scalar(2.5f), KernelArg::scalar(kN)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  TS_EXPECT_CONTAINS(st.message(), "argument 0 (out): the buffer is on");
  Buffer small = Alloc(kN * 2);
  st = p.Run(s, {KernelArg::buffer(small), KernelArg::scalar(2.5f), KernelArg::scalar(kN)});
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.ToString();
  TS_EXPECT_CONTAINS(st.message(), "argument 0 (out) needs 256 B");
  Buffer out = Alloc(kN * 4);
  st = p.Run(s, {KernelArg::buffer(out), KernelArg::scalar(2.5), KernelArg::scalar(kN)});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  TS_EXPECT_CONTAINS(st.message(), "argument 1 (value) is a f32 scalar of 4 bytes; 8 bytes were given");
}

}  // namespace
}  // namespace tessera
