// The defensive core (issue 17, item 2): every value a plugin returns is
// checked before use.  An error object whose code is 0 is an INTERNAL error
// naming the plugin, not a success; counts and sizes are bounded; a null
// out-pointer on success is an error naming the plugin and the entry point.
// Each check must hold in this process, with isolation off (the probe child
// is a second line, not the check), and with it on.  The plugins are
// tests/plugins/hostile.cpp and tests/plugins/nullouts.cpp.
#include <cmath>

#include "test_util.hpp"

namespace tessera {
namespace {

std::string HostilePlugin(const std::string& name) {
  return std::string(TESSERA_HOSTILE_PLUGIN_DIR) + "/libtessera_plugin_" + name + ".so";
}

RuntimeOptions OptionsFor(const std::string& name, const std::string& backend, bool isolate) {
  RuntimeOptions options;
  options.read_environment = false;
  options.plugin_path = {HostilePlugin(name)};
  options.backend = backend;
  options.isolate_plugins = isolate;
  return options;
}

struct LyingAnswer {
  const char* plugin;
  const char* says;  // what the report must say about the answer
};
void PrintTo(const LyingAnswer& a, std::ostream* os) { *os << a.plugin; }

class PluginAnswerTest : public ::testing::TestWithParam<std::tuple<LyingAnswer, bool>> {
 protected:
  const LyingAnswer& answer() const { return std::get<0>(GetParam()); }
  bool isolate() const { return std::get<1>(GetParam()); }
};

// Named alone: creation fails with a message that names the plugin, its file
// and what was wrong with its answer.
TEST_P(PluginAnswerTest, NamedAloneFailsNamingThePlugin) {
  auto rt = Runtime::Create(OptionsFor(answer().plugin, answer().plugin, isolate()));
  ASSERT_FALSE(rt.ok()) << "a runtime was created on the " << answer().plugin << " plugin";
  TS_EXPECT_CONTAINS(rt.status().message(), answer().says);
}

// In a list: it falls through to cpu, and its candidate says why.
TEST_P(PluginAnswerTest, InAListFallsThroughToCpu) {
  auto rt = Runtime::Create(
      OptionsFor(answer().plugin, std::string(answer().plugin) + ",cpu", isolate()));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
  for (const PluginCandidate& c : rt->candidates())
    if (c.name == answer().plugin) TS_EXPECT_CONTAINS(c.reason, answer().says);
}

INSTANTIATE_TEST_SUITE_P(
    DefensiveCore, PluginAnswerTest,
    ::testing::Combine(
        ::testing::Values(
            LyingAnswer{"lying_devices",
                        "Client_GetDevices returned 1099511627776 devices, more than the 4096"},
            LyingAnswer{"null_devices", "Client_GetDevices returned 2 devices without a device array"},
            LyingAnswer{"code0_error",
                        "Client_Create returned an error object whose code is 0 (success), not an "
                        "error code (the plugin is broken); its message: an error whose code is 0"},
            LyingAnswer{"huge_message", "a message that claims SIZE_MAX bytes"},
            LyingAnswer{"null_client",
                        "Client_Create returned success without setting its out-pointer 'client'"}),
        ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<LyingAnswer, bool>>& info) {
      return std::string(std::get<0>(info.param).plugin) +
             (std::get<1>(info.param) ? "_isolated" : "_in_process");
    });

// Every message about a broken answer names the plugin and its file.
TEST(DefensiveCore, BrokenAnswerNamesPluginAndFile) {
  auto rt = Runtime::Create(OptionsFor("null_client", "null_client", false));
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "plugin 'null_client' (" + HostilePlugin("null_client") + ")");
}

// The create entry points of a working plugin that succeed without creating
// anything, and answers out of range: errors, never null handles.
class NullOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RuntimeOptions options = OptionsFor("nullouts", "nullouts", false);
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    rt_ = std::move(*rt);
  }
  const Device& device() { return rt_->devices()[0]; }
  // INTERNAL, naming the plugin, the entry point and the field.
  void ExpectBroken(const Status& st, const std::string& entry, const std::string& field) {
    EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
    TS_EXPECT_CONTAINS(st.message(), "plugin 'nullouts'");
    TS_EXPECT_CONTAINS(st.message(), entry + " returned");
    TS_EXPECT_CONTAINS(st.message(), field);
  }
  std::optional<Runtime> rt_;
};

TEST_F(NullOutputsTest, CreatedObjectsMustExist) {
  ExpectBroken(device().allocate(77).status(), "Buffer_Allocate", "'buffer'");
  ExpectBroken(device().create_stream().status(), "Stream_Create", "'stream'");
  ExpectBroken(device().create_event().status(), "Event_Create", "'event'");
  ExpectBroken(rt_->pinned_malloc(64).status(), "Host_Allocate", "'pointer'");
  ExpectBroken(rt_->create_communicator({device()}).status(), "Communicator_Create",
               "'communicator'");
  ExpectBroken(device().load_executable(device().info().executable_formats[0],
                                        "/nonexistent/null-executable").status(),
               "Executable_Load", "'executable'");
}

TEST_F(NullOutputsTest, KernelsMustExist) {
  auto exe = device().load_executable(device().info().executable_formats[0], TESSERA_TEST_KERNELS_PATH);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  ExpectBroken(exe->kernel("fill").status(), "Executable_GetKernel", "'kernel'");
}

TEST_F(NullOutputsTest, AnswersOutOfRangeAreErrors) {
  TS_ASSERT_OK_AND_ASSIGN(Buffer buffer, device().allocate(64));
  auto advised = advise(buffer, TS_ADVICE_READ_MOSTLY, nullptr);
  ExpectBroken(advised.status(), "Buffer_Advise", "the hint result 99");
  TS_ASSERT_OK_AND_ASSIGN(Event start, device().create_event(TS_EVENT_DISABLE_TIMING));
  TS_ASSERT_OK_AND_ASSIGN(Event end, device().create_event(TS_EVENT_DISABLE_TIMING));
  ExpectBroken(Event::elapsed_ms(start, end).status(), "Event_ElapsedTime", "nan ms");
  ExpectBroken(buffer.device_address().status(), "Buffer_GetDeviceAddress", "address 0");
  TS_EXPECT_OK(buffer.destroy());
}

}  // namespace
}  // namespace tessera
