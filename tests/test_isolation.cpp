// Isolation and the defensive core (issue 17, items 1 and 2): plugins that
// crash, abort, exit or hang while being opened, files named like plugins
// that are no shared object, and plugins whose answers lie.  Each must be
// reported, naming the file and what happened, and never keep the cpu
// backend from being selected.  The plugins are tests/plugins/hostile.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "tessera/compiler.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::ScopedEnv;

std::string HostilePlugin(const std::string& name) {
  return std::string(TESSERA_HOSTILE_PLUGIN_DIR) + "/libtessera_plugin_" + name + ".so";
}

// Only that plugin file, then the embedded cpu plugin; no environment.  The
// hanging plugin's probe is given a short time (the default is 20 s).
RuntimeOptions OptionsFor(const std::string& name, const std::string& backend) {
  RuntimeOptions options;
  options.read_environment = false;
  options.plugin_path = {HostilePlugin(name)};
  options.backend = backend;
  options.plugin_probe_timeout = 1.0;
  return options;
}

const PluginCandidate* Find(const std::vector<PluginCandidate>& candidates, const std::string& name) {
  for (const PluginCandidate& c : candidates)
    if (c.name == name) return &c;
  return nullptr;
}

// ------------------------------------------------------------ isolation
struct Misbehaviour {
  const char* plugin;
  const char* what;   // what the report must say happened
  const char* where;  // and in which step
};
void PrintTo(const Misbehaviour& m, std::ostream* os) { *os << m.plugin; }

class IsolationTest : public ::testing::TestWithParam<Misbehaviour> {};

// TESSERA_BACKEND=<bad>,cpu: the bad plugin is rejected, the report names
// its file, what happened and where, with its last words; cpu is selected.
TEST_P(IsolationTest, BadPluginThenCpuFallsThrough) {
  const Misbehaviour& m = GetParam();
  auto rt = Runtime::Create(OptionsFor(m.plugin, std::string(m.plugin) + ",cpu"));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
  const PluginCandidate* c = Find(rt->candidates(), m.plugin);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->state, PluginState::kRejected) << c->reason;
  TS_EXPECT_CONTAINS(c->reason, HostilePlugin(m.plugin));
  TS_EXPECT_CONTAINS(c->reason, m.what);
  TS_EXPECT_CONTAINS(c->reason, m.where);
  TS_EXPECT_CONTAINS(c->reason, "its last output: hostile plugin:");
  // And the runtime works.
  TS_ASSERT_OK_AND_ASSIGN(Buffer buffer, rt->devices()[0].allocate(64));
  TS_EXPECT_OK(buffer.destroy());
}

// Naming only the bad plugin: an error that says why, not a dead process.
TEST_P(IsolationTest, BadPluginAloneIsAnError) {
  const Misbehaviour& m = GetParam();
  auto rt = Runtime::Create(OptionsFor(m.plugin, m.plugin));
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), HostilePlugin(m.plugin));
  TS_EXPECT_CONTAINS(rt.status().message(), m.what);
}

// tessera-info's view: every candidate listed with its reason.
TEST_P(IsolationTest, ProbeAllListsItWithTheReason) {
  const Misbehaviour& m = GetParam();
  auto probes = Runtime::ProbeAll(OptionsFor(m.plugin, ""));
  const Runtime::ProbeResult* bad = nullptr;
  const Runtime::ProbeResult* cpu = nullptr;
  for (const auto& p : probes) {
    if (p.candidate.name == m.plugin) bad = &p;
    if (p.candidate.name == "cpu" && !cpu) cpu = &p;  // the embedded one
  }
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->candidate.state, PluginState::kRejected);
  TS_EXPECT_CONTAINS(bad->candidate.reason, m.what);
  EXPECT_TRUE(bad->devices.empty());
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->candidate.state, PluginState::kAvailable) << cpu->candidate.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Isolation, IsolationTest,
    ::testing::Values(
        Misbehaviour{"crash_create", "crashed its probe process (SIGSEGV)", "in Client_Create"},
        Misbehaviour{"abort_ctor", "crashed its probe process (SIGABRT)",
                     "loading it (its library constructors)"},
        Misbehaviour{"exit_create", "ended its probe process with exit status 0",
                     "in Client_Create"},
        Misbehaviour{"hang_create", "hangs: its probe process did not finish within 1 s",
                     "in Client_Create"},
        Misbehaviour{"crash_entry", "crashed its probe process (SIGSEGV)",
                     "calling its entry point " TESSERA_PLUGIN_ENTRY_POINT "()"},
        Misbehaviour{"lying_table", "crashed its probe process (SIGSEGV)", "in Client_Create"}),
    [](const ::testing::TestParamInfo<Misbehaviour>& info) { return std::string(info.param.plugin); });

// The same through the environment, as a user writes it:
// TESSERA_PLUGIN_PATH=<bad plugin> TESSERA_BACKEND=<bad>,cpu.
TEST(Isolation, EnvironmentBadThenCpuFallsThrough) {
  ScopedEnv path("TESSERA_PLUGIN_PATH", HostilePlugin("crash_create"));
  ScopedEnv backend("TESSERA_BACKEND", std::string("crash_create,cpu"));
  auto rt = Runtime::Create(RuntimeOptions{});
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
}

// Listing compile targets opens every plugin too: the crashing ones are
// skipped, the embedded cpu plugin's targets are listed (where its
// compiler part is built: a plugin lists only targets it can compile for).
TEST(Isolation, CompileTargetsSurviveCrashingPlugins) {
  RuntimeOptions options = OptionsFor("crash_entry", "");
  options.plugin_path.push_back(HostilePlugin("abort_ctor"));
  bool cpu = false;
  for (const CompileTargetInfo& t : Compiler::ListTargets(options)) cpu |= t.plugin == "cpu";
#ifdef TESSERA_TEST_HAVE_CPU_COMPILER
  EXPECT_TRUE(cpu) << "the cpu plugin's compile targets are missing";
#else
  EXPECT_FALSE(cpu) << "a cpu plugin without its compiler part lists compile targets";
#endif
}

// A probe that got through but could not open the backend (no driver, a
// broken answer) is reused, not repeated in this process: the error and the
// candidate's state and reason must be what opening it here says.
TEST(Isolation, CleanFailuresReadAsInProcess) {
  for (const std::string& file : {std::string(TESSERA_TEST_PLUGIN_NODRIVER), HostilePlugin("code0_error"),
                                  HostilePlugin("null_client")}) {
    std::string messages[2], reasons[2];
    PluginState states[2] = {};
    for (int isolate = 0; isolate < 2; ++isolate) {
      RuntimeOptions options;
      options.read_environment = false;
      options.plugin_file = file;
      options.isolate_plugins = isolate == 1;
      auto rt = Runtime::Create(options);
      ASSERT_FALSE(rt.ok()) << file;
      messages[isolate] = rt.status().message();
      auto probes = Runtime::ProbeAll(options);
      ASSERT_EQ(probes.size(), 1u);
      reasons[isolate] = probes[0].candidate.reason;
      states[isolate] = probes[0].candidate.state;
    }
    EXPECT_EQ(messages[1], messages[0]) << file;
    EXPECT_EQ(reasons[1], reasons[0]) << file;
    EXPECT_EQ(states[1], states[0]) << file;
    EXPECT_FALSE(reasons[1].empty()) << file;
  }
}

// TESSERA_PLUGIN_PROBE_TIMEOUT bounds the hang (read with read_environment).
TEST(Isolation, ProbeTimeoutFromEnvironment) {
  ScopedEnv timeout("TESSERA_PLUGIN_PROBE_TIMEOUT", std::string("0.5"));
  RuntimeOptions options = OptionsFor("hang_create", "hang_create,cpu");
  options.read_environment = true;
  options.plugin_probe_timeout = 0;
  auto rt = Runtime::Create(options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
  const PluginCandidate* c = Find(rt->candidates(), "hang_create");
  ASSERT_NE(c, nullptr);
  TS_EXPECT_CONTAINS(c->reason, "did not finish within 0.5 s");
}

// A FIFO named like a plugin would block dlopen's open() for ever; a folder
// or a device is no shared object either.  Each is reported as what it is,
// with or without isolation, and never opened.
class NotAFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-not-a-file-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    ASSERT_EQ(::mkfifo((dir_ + "/libtessera_plugin_fifo.so").c_str(), 0644), 0);
    ASSERT_EQ(::mkdir((dir_ + "/libtessera_plugin_folder.so").c_str(), 0755), 0);
    std::filesystem::create_symlink("/dev/zero", dir_ + "/libtessera_plugin_zero.so");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  RuntimeOptions Options(const std::string& backend, bool isolate) {
    RuntimeOptions options;
    options.read_environment = false;
    options.plugin_path = {dir_};
    options.backend = backend;
    options.isolate_plugins = isolate;
    return options;
  }
  std::string dir_;
};

TEST_F(NotAFileTest, EachIsRejectedAsWhatItIs) {
  for (bool isolate : {true, false}) {
    auto probes = Runtime::ProbeAll(Options("", isolate));
    std::map<std::string, std::string> reasons;
    for (const auto& p : probes) {
      if (p.candidate.path.rfind(dir_, 0) != 0) continue;  // the real plugins
      EXPECT_EQ(p.candidate.state, PluginState::kRejected) << p.candidate.name;
      reasons[p.candidate.name] = p.candidate.reason;
    }
    TS_EXPECT_CONTAINS(reasons["fifo"], "a FIFO");
    TS_EXPECT_CONTAINS(reasons["folder"], "a folder");
    TS_EXPECT_CONTAINS(reasons["zero"], "a character device");
  }
}

TEST_F(NotAFileTest, FifoThenCpuFallsThrough) {
  auto rt = Runtime::Create(Options("fifo,folder,zero,cpu", true));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->backend(), "cpu");
}

}  // namespace
}  // namespace tessera
