// Plugin discovery, loading and backend selection, including every kind of
// broken plugin: each must give a clear reason and never stop the cpu
// backend from being selected.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>

#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuOptions;
using testing::ScopedEnv;

RuntimeOptions TestPluginOptions(const std::string& backend = "") {
  RuntimeOptions options;
  options.backend = backend;
  options.read_environment = false;
  options.plugin_path = {TESSERA_TEST_PLUGIN_DIR};
  return options;
}

const PluginCandidate* FindCandidate(
    const std::vector<PluginCandidate>& candidates, const std::string& name) {
  for (const PluginCandidate& c : candidates)
    if (c.name == name) return &c;
  return nullptr;
}

const Runtime::ProbeResult* FindProbe(
    const std::vector<Runtime::ProbeResult>& probes, const std::string& name) {
  for (const Runtime::ProbeResult& p : probes)
    if (p.candidate.name == name) return &p;
  return nullptr;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string Describe(const PluginCandidate& c) {
  return c.name + " [" + PluginStateName(c.state) + "] " + c.path +
         " abi=" + c.abi_version + " reason=" + c.reason;
}

class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    probes_ = Runtime::ProbeAll(TestPluginOptions());
  }
  const PluginCandidate& Candidate(const std::string& name) {
    const Runtime::ProbeResult* p = FindProbe(probes_, name);
    if (p == nullptr) {
      ADD_FAILURE() << "ProbeAll did not list the '" << name << "' plugin";
      static PluginCandidate missing;
      return missing;
    }
    return p->candidate;
  }
  std::vector<Runtime::ProbeResult> probes_;
};

TEST_F(ProbeTest, ListsEveryCandidate) {
  for (const char* name : {"garbage", "noentry", "major2", "nulltable",
                           "nodriver", "oldminor", "newminor", "cpu"}) {
    EXPECT_NE(FindProbe(probes_, name), nullptr)
        << "ProbeAll did not list '" << name << "'";
  }
  for (const auto& p : probes_) {
    EXPECT_FALSE(p.candidate.path.empty()) << Describe(p.candidate);
    if (p.candidate.state == PluginState::kRejected ||
        p.candidate.state == PluginState::kUnavailable ||
        p.candidate.state == PluginState::kShadowed) {
      EXPECT_FALSE(p.candidate.reason.empty()) << Describe(p.candidate);
    }
  }
}

TEST_F(ProbeTest, CpuIsAvailableWithDevices) {
  const Runtime::ProbeResult* cpu = FindProbe(probes_, "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->candidate.state == PluginState::kAvailable ||
              cpu->candidate.state == PluginState::kLoaded)
      << Describe(cpu->candidate);
  EXPECT_GE(cpu->devices.size(), 1u);
  EXPECT_EQ(cpu->candidate.abi_version,
            std::to_string(TESSERA_ABI_VERSION_MAJOR) + "." +
                std::to_string(TESSERA_ABI_VERSION_MINOR));
}

TEST_F(ProbeTest, NotASharedObjectIsRejectedWithDlerrorText) {
  // What the dynamic loader itself says about the file, e.g.
  // "<path>: invalid ELF header"; the reason must carry it.
  ASSERT_EQ(dlopen(TESSERA_TEST_PLUGIN_GARBAGE, RTLD_NOW | RTLD_LOCAL), nullptr);
  std::string dl = dlerror();
  std::string what = dl.substr(dl.rfind(": ") + 2);
  ASSERT_FALSE(what.empty()) << dl;

  const PluginCandidate& c = Candidate("garbage");
  EXPECT_EQ(c.state, PluginState::kRejected) << Describe(c);
  TS_EXPECT_CONTAINS(c.reason, what);
}

TEST_F(ProbeTest, MissingEntryPointNamesTheSymbol) {
  const PluginCandidate& c = Candidate("noentry");
  EXPECT_EQ(c.state, PluginState::kRejected) << Describe(c);
  TS_EXPECT_CONTAINS(c.reason, TESSERA_PLUGIN_ENTRY_POINT);
}

TEST_F(ProbeTest, OtherMajorNamesBothVersions) {
  const PluginCandidate& c = Candidate("major2");
  EXPECT_EQ(c.state, PluginState::kRejected) << Describe(c);
  EXPECT_EQ(c.abi_version, "2.0");
  TS_EXPECT_CONTAINS(c.reason, "2.0");
  TS_EXPECT_CONTAINS(c.reason, std::to_string(TESSERA_ABI_VERSION_MAJOR) + "." +
                                   std::to_string(TESSERA_ABI_VERSION_MINOR));
}

TEST_F(ProbeTest, NullTableIsRejected) {
  const PluginCandidate& c = Candidate("nulltable");
  EXPECT_EQ(c.state, PluginState::kRejected) << Describe(c);
  TS_EXPECT_CONTAINS(Lower(c.reason), "null");
}

TEST_F(ProbeTest, PluginWithoutDriverIsUnavailableWithVendorReason) {
  const PluginCandidate& c = Candidate("nodriver");
  EXPECT_EQ(c.state, PluginState::kUnavailable) << Describe(c);
  TS_EXPECT_CONTAINS(c.reason, "libfoo.so.1: cannot open shared object file");
  EXPECT_EQ(c.vendor, "Tessera test suite");
}

TEST_F(ProbeTest, CompatibleMinorVersionsAreAvailable) {
  const PluginCandidate& old_minor = Candidate("oldminor");
  EXPECT_EQ(old_minor.state, PluginState::kAvailable) << Describe(old_minor);
  const PluginCandidate& new_minor = Candidate("newminor");
  EXPECT_EQ(new_minor.state, PluginState::kAvailable) << Describe(new_minor);
  EXPECT_EQ(new_minor.abi_version, "1.99");
}

// Loading one bad file with plugin_file: the runtime is not created and its
// error carries the same reason.
struct BadPluginCase {
  const char* path;
  const char* expected;  // substring of the error message
};
void PrintTo(const BadPluginCase& c, std::ostream* os) { *os << c.path; }

std::string BadPluginCaseName(
    const ::testing::TestParamInfo<BadPluginCase>& info) {
  static const char* const kNames[] = {"Garbage", "NoEntry", "Major2",
                                       "NullTable", "NoDriver"};
  return kNames[info.index];
}

class BadPluginFileTest : public ::testing::TestWithParam<BadPluginCase> {};

TEST_P(BadPluginFileTest, CreateFailsWithReason) {
  RuntimeOptions options;
  options.read_environment = false;
  options.plugin_file = GetParam().path;
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok()) << "a runtime was created from " << GetParam().path;
  TS_EXPECT_CONTAINS(rt.status().message(), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Loader, BadPluginFileTest,
    ::testing::Values(
        BadPluginCase{TESSERA_TEST_PLUGIN_GARBAGE, "invalid ELF header"},
        BadPluginCase{TESSERA_TEST_PLUGIN_NOENTRY, TESSERA_PLUGIN_ENTRY_POINT},
        BadPluginCase{TESSERA_TEST_PLUGIN_MAJOR2, "2.0"},
        BadPluginCase{TESSERA_TEST_PLUGIN_NULLTABLE, "NULL"},
        BadPluginCase{TESSERA_TEST_PLUGIN_NODRIVER,
                      "libfoo.so.1: cannot open shared object file"}),
    BadPluginCaseName);

TEST(Loader, BrokenPluginsNeverPreventCpu) {
  auto rt = Runtime::Create(TestPluginOptions("cpu"));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
  ASSERT_GE(rt->devices().size(), 1u);
  // The broken ones are still listed.
  EXPECT_NE(FindCandidate(rt->candidates(), "garbage"), nullptr);
  EXPECT_NE(FindCandidate(rt->candidates(), "major2"), nullptr);
  const PluginCandidate* cpu = FindCandidate(rt->candidates(), "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->state, PluginState::kLoaded) << Describe(*cpu);
}

TEST(Loader, AutomaticSelectionIgnoresBrokenPluginsAndPicksCpu) {
  auto rt = Runtime::Create(TestPluginOptions(""));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
}

TEST(Loader, DefaultCpuRuntime) {
  auto rt = Runtime::Create(CpuOptions());
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
  ASSERT_EQ(rt->devices().size(), 1u);  // TESSERA_CPU_DEVICES defaults to 1
  const DeviceInfo& info = rt->devices()[0].info();
  EXPECT_EQ(info.type, TS_DEVICE_TYPE_CPU);
  EXPECT_TRUE(info.supports(TS_BUFFER_DEVICE));
  EXPECT_FALSE(info.executable_formats.empty());
  EXPECT_NE(rt->plugin_api(), nullptr);
  EXPECT_NE(rt->raw_client(), nullptr);
}

TEST(Loader, UnknownBackendListsKnownNamesAndSuggestsNearest) {
  RuntimeOptions options = CpuOptions();
  options.backend = "cdua";
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  const std::string& m = rt.status().message();
  TS_EXPECT_CONTAINS(m, "cdua");
  // The suggestion must be cuda, not cpu (both are two plain edits away;
  // an adjacent swap counts as one).
  TS_EXPECT_CONTAINS(m, "did you mean 'cuda'?");
  TS_EXPECT_CONTAINS(m, "cpu");   // a known name
  TS_EXPECT_CONTAINS(m, "vulkan");
}

TEST(Loader, UnknownBackendFromEnvironment) {
  ScopedEnv env("TESSERA_BACKEND", std::string("cdua"));
  RuntimeOptions options;  // read_environment = true
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "did you mean 'cuda'?");
  TS_EXPECT_CONTAINS(rt.status().message(), "TESSERA_BACKEND=cdua");
}

TEST(Loader, BackendFromEnvironment) {
  ScopedEnv env("TESSERA_BACKEND", std::string("cpu"));
  auto rt = Runtime::Create(RuntimeOptions{});
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
}

TEST(Loader, VulkanCommaCpuFallsThrough) {
  RuntimeOptions options = CpuOptions();
  options.backend = "vulkan,cpu";
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  // Where a vulkan plugin with a device exists (lavapipe), naming it selects
  // it; everywhere else the list falls through to cpu.
  EXPECT_TRUE(rt->backend() == "cpu" || rt->backend() == "vulkan")
      << rt->backend();
  if (rt->backend() == "cpu") {
    if (const PluginCandidate* vk = FindCandidate(rt->candidates(), "vulkan")) {
      EXPECT_FALSE(vk->reason.empty()) << Describe(*vk);
    }
  }
}

TEST(Loader, UnavailablePluginFallsThroughToNextName) {
  auto rt = Runtime::Create(TestPluginOptions("nodriver,cpu"));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
  const PluginCandidate* c = FindCandidate(rt->candidates(), "nodriver");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->state, PluginState::kUnavailable) << Describe(*c);
  TS_EXPECT_CONTAINS(c->reason, "libfoo.so.1");
}

TEST(Loader, NamedPluginWithoutDeviceIsAnErrorThatSaysWhy) {
  auto rt = Runtime::Create(TestPluginOptions("nodriver"));
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "nodriver");
  TS_EXPECT_CONTAINS(rt.status().message(),
                     "libfoo.so.1: cannot open shared object file");
}

TEST(Loader, NamedRejectedPluginIsAnErrorThatSaysWhy) {
  auto rt = Runtime::Create(TestPluginOptions("major2"));
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "2.0");
}

TEST(Loader, PluginPathFromEnvironment) {
  ScopedEnv env("TESSERA_PLUGIN_PATH", std::string(TESSERA_TEST_PLUGIN_DIR));
  RuntimeOptions options;  // read_environment = true
  options.backend = "nodriver,cpu";
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
  EXPECT_NE(FindCandidate(rt->candidates(), "nodriver"), nullptr);
}

TEST(Loader, PluginPathAcceptsFiles) {
  RuntimeOptions options = CpuOptions();
  options.backend = "newminor";
  options.plugin_path = {TESSERA_TEST_PLUGIN_NEWMINOR};
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "newminor");
  // Only that file was added: the other test plugins are not candidates.
  EXPECT_EQ(FindCandidate(rt->candidates(), "nodriver"), nullptr);
}

TEST(Loader, LaterCandidateOfTheSameNameIsShadowed) {
  RuntimeOptions options = CpuOptions();
  options.plugin_path = {TESSERA_TEST_PLUGIN_NODRIVER, TESSERA_TEST_PLUGIN_DIR};
  auto probes = Runtime::ProbeAll(options);
  int shadowed = 0, total = 0;
  for (const auto& p : probes) {
    if (p.candidate.name != "nodriver") continue;
    ++total;
    if (p.candidate.state == PluginState::kShadowed) {
      ++shadowed;
      EXPECT_FALSE(p.candidate.reason.empty());
    }
  }
  EXPECT_EQ(total, 2);
  EXPECT_EQ(shadowed, 1);
}

TEST(Loader, DefaultPluginDirectoriesAreListed) {
  EXPECT_FALSE(Runtime::DefaultPluginDirectories().empty());
}

// A plugin's compiler part (libtessera_plugin_<name>_compiler.so) is not a
// plugin: it lives in compilers/ under the plugin folder, so discovery never
// lists it (it was listed as a rejected plugin 'cpu_compiler', and named as
// a known backend in selection errors).
TEST(Loader, CompilerPartsAreNotPlugins) {
  RuntimeOptions options;
  options.read_environment = false;
  for (const Runtime::ProbeResult& p : Runtime::ProbeAll(options)) {
    const std::string& name = p.candidate.name;
    EXPECT_FALSE(name.size() > 9 && name.compare(name.size() - 9, 9, "_compiler") == 0)
        << Describe(p.candidate);
  }
  options.backend = "no_such_backend";
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().message().find("_compiler"), std::string::npos) << rt.status().message();
}

// ------------------------------------------------------- visible devices
TEST(VisibleDevices, OptionFiltersAndKeepsOrdinals) {
  RuntimeOptions options = CpuOptions();
  options.visible_devices = "1,3";
  auto rt = testing::CreateCpuRuntime(4, 0, options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  ASSERT_EQ(rt->devices().size(), 2u);
  EXPECT_EQ(rt->devices()[0].info().ordinal, 1u);
  EXPECT_EQ(rt->devices()[1].info().ordinal, 3u);
}

TEST(VisibleDevices, EnvironmentFilters) {
  ScopedEnv env("TESSERA_VISIBLE_DEVICES", std::string("2"));
  RuntimeOptions options;  // read_environment = true
  options.backend = "cpu";
  auto rt = testing::CreateCpuRuntime(4, 0, options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  ASSERT_EQ(rt->devices().size(), 1u);
  EXPECT_EQ(rt->devices()[0].info().ordinal, 2u);
}

// Errors name where the list came from (the option, or the variable).
TEST(VisibleDevices, ErrorsNameTheirSource) {
  RuntimeOptions options = CpuOptions();
  options.visible_devices = "7";
  auto rt = testing::CreateCpuRuntime(2, 0, options);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "RuntimeOptions::visible_devices=7: device 7 does not exist");
  ScopedEnv env("TESSERA_VISIBLE_DEVICES", std::string("x"));
  RuntimeOptions from_env;
  from_env.backend = "cpu";
  rt = testing::CreateCpuRuntime(2, 0, from_env);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "TESSERA_VISIBLE_DEVICES=x: 'x' is not a device ordinal");
}

// With no TESSERA_BACKEND the message says what automatic selection tried
// (it read "no backend in the default= can be used").
TEST(Loader, AutomaticSelectionFailureSaysSo) {
  RuntimeOptions options;
  options.read_environment = false;
  options.plugin_options["cpu"] = {OptionValue::Int("devices", 100000)};  // cpu cannot start
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "automatic selection");
  EXPECT_EQ(rt.status().message().find("default="), std::string::npos) << rt.status().message();
}

TEST(VisibleDevices, UnsetShowsAll) {
  auto rt = testing::CreateCpuRuntime(4);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  ASSERT_EQ(rt->devices().size(), 4u);
  for (uint32_t i = 0; i < 4; ++i)
    EXPECT_EQ(rt->devices()[i].info().ordinal, i);
}

TEST(VisibleDevices, ReadEnvironmentFalseIgnoresEnvironment) {
  ScopedEnv env("TESSERA_VISIBLE_DEVICES", std::string("0"));
  auto rt = testing::CreateCpuRuntime(4);  // CpuOptions: no environment
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->devices().size(), 4u);
}

}  // namespace
}  // namespace tessera
