// Plugin options (ABI 1.2): RuntimeOptions::plugin_options and the
// environment's TESSERA_<PLUGIN>_<OPTION> reach Client_Create as named
// values; unknown names and bad values are errors that list what the plugin
// takes.  Also: StatusOr::value() on an error aborts with the status.
#include "test_util.hpp"

#include <unistd.h>

#include <cstdlib>
#include <utility>

namespace tessera {
namespace {

using testing::CpuOptions;
using testing::ScopedEnv;

TEST(PluginOptions, CpuPluginDeclaresItsOptions) {
  auto rt = Runtime::Create(CpuOptions());
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  const PluginCandidate* cpu = nullptr;
  for (const PluginCandidate& c : rt->candidates())
    if (c.name == "cpu" && c.state == PluginState::kLoaded) cpu = &c;
  ASSERT_NE(cpu, nullptr);
  std::vector<std::string> names;
  for (const OptionInfo& o : cpu->options) names.push_back(o.name);
  EXPECT_EQ(names, (std::vector<std::string>{"devices", "threads", "process_timeout_s"}));
  EXPECT_EQ(cpu->abi_version, std::to_string(TESSERA_ABI_VERSION_MAJOR) + "." +
                                  std::to_string(TESSERA_ABI_VERSION_MINOR));
}

TEST(PluginOptions, ExplicitOptionsConfigureTheClient) {
  RuntimeOptions options = CpuOptions();
  options.plugin_options["cpu"] = {OptionValue::Int("devices", 3)};
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->devices().size(), 3u);
}

TEST(PluginOptions, TextValuesAreParsedToTheDeclaredType) {
  RuntimeOptions options = CpuOptions();
  options.plugin_options["cpu"] = {OptionValue::String("devices", "2")};
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->devices().size(), 2u);
}

TEST(PluginOptions, EnvironmentVariablesBecomeOptions) {
  ScopedEnv env("TESSERA_CPU_DEVICES", std::string("4"));
  RuntimeOptions options;  // read_environment = true
  options.backend = "cpu";
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->devices().size(), 4u);
}

TEST(PluginOptions, IntegersAreDecimal) {
  // strtoll base 0 read "010" as 8 and refused "09"; hex is not a count.
  for (const auto& [text, devices] : {std::pair<const char*, size_t>{"010", 10}, {"09", 9}}) {
    ScopedEnv env("TESSERA_CPU_DEVICES", std::string(text));
    RuntimeOptions options;
    options.backend = "cpu";
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << text << ": " << rt.status().ToString();
    EXPECT_EQ(rt->devices().size(), devices) << text;
  }
  ScopedEnv env("TESSERA_CPU_DEVICES", std::string("0x4"));
  RuntimeOptions options;
  options.backend = "cpu";
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("0x4"), std::string::npos) << rt.status().ToString();
}

TEST(PluginOptions, AnotherPluginsVariableWithALongerNameIsNotThisOnes) {
  // TESSERA_CPU_FAST_DEVICES is plugin cpu_fast's `devices`: plugin cpu took
  // it as its own `fast_devices` and refused to start.
  char dir[] = "/tmp/tessera-cpu-fast-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string link = std::string(dir) + "/libtessera_plugin_cpu_fast.so";
  ASSERT_EQ(::symlink(TESSERA_TEST_PLUGIN_DIR "/libtessera_plugin_nodriver.so", link.c_str()), 0);
  ScopedEnv env("TESSERA_CPU_FAST_DEVICES", std::string("2"));
  RuntimeOptions options;
  options.backend = "cpu";
  options.plugin_path = {dir};
  auto rt = Runtime::Create(options);
  EXPECT_TRUE(rt.ok()) << rt.status().ToString();
  ::unlink(link.c_str());
  ::rmdir(dir);
}

TEST(PluginOptions, ExplicitOptionsWinOverTheEnvironment) {
  ScopedEnv env("TESSERA_CPU_DEVICES", std::string("4"));
  RuntimeOptions options;
  options.backend = "cpu";
  options.plugin_options["cpu"] = {OptionValue::Int("devices", 2)};
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->devices().size(), 2u);
}

// Defaults a tool chooses lose to the user's variable and to explicit options.
TEST(PluginOptions, DefaultsLoseToTheEnvironmentAndToExplicitOptions) {
  RuntimeOptions options;
  options.backend = "cpu";
  options.plugin_option_defaults["cpu"] = {OptionValue::Int("devices", 3)};
  {
    ScopedEnv unset("TESSERA_CPU_DEVICES", std::nullopt);
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    EXPECT_EQ(rt->devices().size(), 3u) << "the default applies when nothing else sets the option";
  }
  {
    ScopedEnv env("TESSERA_CPU_DEVICES", std::string("2"));
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    EXPECT_EQ(rt->devices().size(), 2u) << "TESSERA_CPU_DEVICES wins over a default";
    RuntimeOptions explicit_options = options;
    explicit_options.plugin_options["cpu"] = {OptionValue::Int("devices", 4)};
    rt = Runtime::Create(explicit_options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    EXPECT_EQ(rt->devices().size(), 4u) << "plugin_options win over both";
  }
}

TEST(PluginOptions, NoEnvironmentWhenReadEnvironmentIsFalse) {
  ScopedEnv env("TESSERA_CPU_DEVICES", std::string("4"));
  auto rt = Runtime::Create(CpuOptions());
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->devices().size(), 1u);
}

TEST(PluginOptions, UnknownOptionListsTheKnownOnes) {
  RuntimeOptions options = CpuOptions();
  options.plugin_options["cpu"] = {OptionValue::Int("devcies", 2)};
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  const std::string m = rt.status().message();
  EXPECT_NE(m.find("unknown option 'devcies'"), std::string::npos) << m;
  EXPECT_NE(m.find("devices (int64, default 1)"), std::string::npos) << m;
  EXPECT_NE(m.find("threads (int64)"), std::string::npos) << m;
}

TEST(PluginOptions, MisspeltEnvironmentVariableIsAnErrorNamingIt) {
  ScopedEnv env("TESSERA_CPU_DEVCIES", std::string("2"));
  RuntimeOptions options;
  options.backend = "cpu";
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  const std::string m = rt.status().message();
  EXPECT_NE(m.find("unknown option 'devcies'"), std::string::npos) << m;
  EXPECT_NE(m.find("from TESSERA_CPU_DEVCIES"), std::string::npos) << m;
}

TEST(PluginOptions, ValueOfTheWrongTypeIsAnError) {
  for (OptionValue v : {OptionValue::String("devices", "four"), OptionValue::Bool("devices", true),
                        OptionValue::Int("devices", 0), OptionValue::Int("devices", 65)}) {
    RuntimeOptions options = CpuOptions();
    options.plugin_options["cpu"] = {v};
    auto rt = Runtime::Create(options);
    ASSERT_FALSE(rt.ok()) << v.ValueText();
    // The plugin's own code: a refused option is not "unavailable".
    EXPECT_EQ(rt.status().code(), StatusCode::kInvalidArgument) << rt.status().ToString();
    EXPECT_NE(rt.status().message().find("devices"), std::string::npos) << rt.status().ToString();
  }
}

TEST(PluginOptions, FallsThroughToTheNextBackendOnABadOption) {
  // A bad option makes that plugin unusable, not the whole list.
  RuntimeOptions options = CpuOptions();
  options.backend = "cpu";
  options.plugin_options["cpu"] = {OptionValue::String("threads", "many")};
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("option 'threads' takes an integer (int64); got 'many'"),
            std::string::npos)
      << rt.status().ToString();
}

TEST(DefaultCacheDirectory, FollowsTesseraCacheDir) {
  ScopedEnv env("TESSERA_CACHE_DIR", std::string("/tmp/tessera-cache-test"));
  EXPECT_EQ(DefaultCacheDirectory(), "/tmp/tessera-cache-test");
}

TEST(StatusOrDeathTest, ValueOfAnErrorAbortsNamingTheStatus) {
  // Runtime::Create().value() with a misspelt backend used to crash with
  // a segfault; now it aborts after printing the status.
  auto bad = [] {
    RuntimeOptions options = CpuOptions();
    options.backend = "cdua";
    Runtime rt = Runtime::Create(options).value();
    (void)rt;
  };
  EXPECT_DEATH(bad(), "StatusOr::value\\(\\) called on an error: NOT_FOUND: unknown backend 'cdua'");
}

}  // namespace
}  // namespace tessera
