// tessera-conformance: certifies a plugin (docs/conformance.md).
//
//   tessera-conformance --backend cpu
//   tessera-conformance --plugin ./libtessera_plugin_x.so --report-dir out
//
// The parent process never loads the plugin.  It runs each area in a child
// (this executable again, with --cts-child-results and a --gtest_filter for
// the area) under a time limit, reads the child's results log, and goes on
// to the next area whatever happened.  A crash inside a test fails that test
// with the signal's name and the rest of the area runs in a fresh child; a
// timeout fails the test that was running and the tests not yet run.
// --in-process runs everything in this process, for debuggers.
#include <sys/stat.h>
#include <cstdio>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "cts/areas.hpp"
#include "cts/cts.hpp"
#include "runner/child_process.hpp"
#include "runner/probe.hpp"
#include "runner/report.hpp"
#include "runner/results_log.hpp"

namespace tessera::cts {
namespace {

constexpr const char kUsage[] = R"(usage: tessera-conformance [options] [--gtest_* flags]

Runs the Tessera conformance suite against one plugin and certifies it.

  --backend NAME      plugin by name (as TESSERA_BACKEND); default: the
                      TESSERA_BACKEND / automatic choice of the core
  --plugin FILE       load exactly this libtessera_plugin_<name>.so
  --areas a,b,...     run only these areas (default: all; --list-areas)
  --timeout SECONDS   time limit of each area's child process (default 120)
  --report-dir DIR    where report.json, junit.xml, report.md and the
                      per-area logs go (default ./conformance-report)
  --in-process        run every area in this process (for debugging; a
                      crash or hang then takes the whole run with it)
  --plugin-option PLUGIN.NAME=VALUE
                      an option of the plugin under test (as
                      TESSERA_<PLUGIN>_<NAME>, which it overrides); repeat it
  --list-areas        print the areas and exit
  --unavailable-exit-code N
                      when the plugin loads but reports no usable driver or
                      device (UNAVAILABLE), run nothing and exit with N
                      (for ctest's SKIP_RETURN_CODE)
  -h, --help          this text

Environment: TESSERA_CTS_RUN_KNOWN_FAILURES=1 runs known failures (an
expected failure that passes is reported as XPASS); TESSERA_CTS_KERNELS_DIR
overrides where the kernel modules are. The multi-device areas (device,
copies, kernels, collectives, errors) run the cpu plugin with 4 devices
unless TESSERA_CPU_DEVICES or --plugin-option cpu.devices=N says otherwise.
Exit status: 0 when no test failed, 1 when one did, 2 on bad usage, and
--unavailable-exit-code's N when the backend is unavailable.
)";

struct Options {
  std::string backend, plugin;
  std::vector<std::string> areas;
  double timeout = 120;
  int unavailable_exit_code = -1;  // -1: run (and fail) as usual
  std::string report_dir = "conformance-report";
  bool in_process = false;
  bool list_areas = false;
  std::vector<std::string> plugin_options;  // PLUGIN.NAME=VALUE, as given
  // Internal (child) modes.
  std::string child_results;
  std::string probe_file;
  bool multi_device = false;  // --cts-multi-device: the defaults for it
  std::vector<std::string> gtest_flags;  // passed to children
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Parses what InitGoogleTest left.  False with *error on bad usage.
bool ParseArgs(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    auto take = [&](const char* name) {
      std::string n = name;
      if (arg == n) {
        if (i + 1 >= argc) {
          *error = n + " needs a value";
          return false;
        }
        value = argv[++i];
        return true;
      }
      if (arg.rfind(n + "=", 0) == 0) {
        value = arg.substr(n.size() + 1);
        return true;
      }
      return false;
    };
    if (take("--backend")) o->backend = value;
    else if (take("--plugin")) o->plugin = value;
    else if (take("--areas")) {
      o->areas = Split(value, ',');
      if (o->areas.empty()) {
        *error = "--areas needs at least one area (--list-areas lists them)";
        return false;
      }
    } else if (take("--report-dir")) {
      // "" would put the reports in / ("" + "/areas").
      if (value.empty()) {
        *error = "--report-dir needs a folder (e.g. --report-dir cts-report)";
        return false;
      }
      o->report_dir = value;
    }
    else if (take("--cts-child-results")) o->child_results = value;
    else if (take("--cts-probe")) o->probe_file = value;
    else if (take("--plugin-option")) {
      size_t dot = value.find('.'), eq = value.find('=');
      if (dot == std::string::npos || eq == std::string::npos || dot == 0 || eq < dot + 2) {
        *error = "--plugin-option takes PLUGIN.NAME=VALUE (e.g. cpu.devices=4), not '" + value + "'";
        return false;
      }
      o->plugin_options.push_back(value);
    }
    else if (take("--unavailable-exit-code")) {
      char* end = nullptr;
      long code = std::strtol(value.c_str(), &end, 10);
      if (!end || *end || code < 0 || code > 255) {
        *error = "--unavailable-exit-code needs an exit status 0..255, not '" + value + "'";
        return false;
      }
      o->unavailable_exit_code = static_cast<int>(code);
    }
    else if (take("--timeout")) {
      char* end = nullptr;
      o->timeout = std::strtod(value.c_str(), &end);
      // !(> 0) refuses NaN too; past a day a child's deadline overflows
      // nothing, but no area needs it.
      if (!end || *end || !(o->timeout > 0) || o->timeout > 86400) {
        *error = "--timeout needs a number of seconds above 0 and at most 86400, not '" + value + "'";
        return false;
      }
    } else if (!error->empty()) {
      return false;  // an option without its value
    } else if (arg == "--cts-multi-device") {
      o->multi_device = true;
    } else if (arg == "--in-process") {
      o->in_process = true;
    } else if (arg == "--list-areas") {
      o->list_areas = true;
    } else if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else {
      *error = "unknown option '" + arg + "' (see --help)";
      return false;
    }
  }
  if (!o->backend.empty() && !o->plugin.empty()) {
    *error = "give --backend or --plugin, not both";
    return false;
  }
  // A --plugin-option for a plugin the run does not test was ignored.
  if (!o->backend.empty() || !o->plugin.empty()) {
    std::vector<std::string> tested = Split(o->backend, ',');
    if (!o->plugin.empty()) {
      std::string file = o->plugin.substr(o->plugin.rfind('/') + 1);
      const std::string prefix = "libtessera_plugin_";
      if (file.rfind(prefix, 0) == 0 && file.size() > prefix.size() + 3 && file.compare(file.size() - 3, 3, ".so") == 0)
        tested.push_back(file.substr(prefix.size(), file.size() - prefix.size() - 3));
      else
        tested.clear();  // a file named otherwise: its plugin name is known only once loaded
    }
    for (const std::string& option : o->plugin_options) {
      const std::string plugin = option.substr(0, option.find('.'));
      if (!tested.empty() && std::find(tested.begin(), tested.end(), plugin) == tested.end()) {
        std::string names;
        for (const std::string& t : tested) names += (names.empty() ? "" : ", ") + t;
        *error = "--plugin-option " + option + " is for plugin '" + plugin + "', but this run tests " + names +
                 " (write " + tested.front() + ".NAME=VALUE)";
        return false;
      }
    }
  }
  if (!o->plugin.empty() && ::access(o->plugin.c_str(), F_OK) != 0) {
    *error = "--plugin " + o->plugin + ": " + std::strerror(errno) + " (give the path of the plugin's .so)";
    return false;
  }
  for (const std::string& a : o->areas)
    if (!FindArea(a)) {
      std::string known;
      for (const Area& k : AllAreas()) known += std::string(known.empty() ? "" : ", ") + k.name;
      *error = "unknown area '" + a + "'; the areas are: " + known;
      return false;
    }
  return true;
}

bool MakeDirs(const std::string& path) {
  std::string partial;
  for (const std::string& part : Split(path, '/')) {
    partial += (partial.empty() && path[0] != '/' ? "" : "/") + part;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

std::string Now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::vector<const Area*> SelectedAreas(const Options& o) {
  std::vector<const Area*> out;
  for (const Area& a : AllAreas()) {
    bool want = o.areas.empty();
    for (const std::string& n : o.areas) want |= n == a.name;
    if (want) out.push_back(&a);
  }
  return out;
}

// The multi-device areas need several devices: the cpu plugin makes 4 unless
// the user chose (TESSERA_CPU_DEVICES or --plugin-option cpu.devices win
// over a default).
void SetMultiDeviceDefaults(Config* config) {
  config->plugin_option_defaults["cpu"] = {tessera::OptionValue::Int("devices", 4)};
}

// ------------------------------------------------------------ child modes
int RunChildMode(const Options& o) {
  InstallResultsLog(o.child_results);
  int rc = RUN_ALL_TESTS();
  // Destroys the runtime (Client_Destroy) before the exit handlers run, so a
  // plugin's teardown is part of what the child checks: a crash there is an
  // incident of the area.
  ResetSharedRuntime();
  return rc;
}

int RunProbeMode(const Options& o) {
  nlohmann::json j = ProbeSharedRuntime();
  ResetSharedRuntime();
  std::ofstream(o.probe_file) << j.dump(2) << "\n";
  return 0;
}

// ------------------------------------------------------------ parent
class Runner {
 public:
  explicit Runner(Options o) : o_(std::move(o)), self_(SelfExecutable()) {}

  std::vector<std::string> ChildArgv(std::vector<std::string> extra) const {
    std::vector<std::string> argv = {self_};
    if (!o_.backend.empty()) argv.push_back("--backend=" + o_.backend);
    if (!o_.plugin.empty()) argv.push_back("--plugin=" + o_.plugin);
    for (const std::string& p : o_.plugin_options) argv.push_back("--plugin-option=" + p);
    for (const std::string& f : o_.gtest_flags) argv.push_back(f);
    for (std::string& e : extra) argv.push_back(std::move(e));
    return argv;
  }

  // A child of a multi-device area gets the runner's device defaults
  // (plugin options, not environment variables).
  std::vector<std::string> AreaFlags(const Area* area) const {
    if (area && area->multi_device) return {"--cts-multi-device"};
    return {};
  }

  void Probe(RunReport* report) {
    std::string file = o_.report_dir + "/areas/probe.json";
    ::unlink(file.c_str());
    // Probe as the multi-device areas see the plugin: the report's device
    // table then lists every device they used.
    static const Area kProbeArea = {"probe", "", false, nullptr, true, ""};
    std::vector<std::string> probe_args = AreaFlags(&kProbeArea);
    probe_args.push_back("--cts-probe=" + file);
    ChildResult r = RunChild(ChildArgv(probe_args), {},
                             o_.report_dir + "/areas/probe.log", o_.timeout);
    nlohmann::json j;
    std::ifstream in(file);
    if (in) j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_object() && j.contains("plugin")) {
      report->plugin = j["plugin"];
      report->devices = j.value("devices", nlohmann::json::array());
      return;
    }
    std::string why = r.timed_out ? "timed out" :
                      r.signal ? "crashed (" + SignalName(r.signal) + ")" :
                      !r.error.empty() ? r.error : "exited with code " + std::to_string(r.exit_code);
    report->plugin = {{"name", o_.backend.empty() ? "unknown" : o_.backend},
                      {"path", o_.plugin},
                      {"error", "probing the plugin " + why + " (see areas/probe.log)"}};
    report->devices = nlohmann::json::array();
  }

  // The tests of an area (--gtest_list_tests in a child: no plugin loaded).
  std::vector<std::string> ListTests(const Area& area) {
    std::string log = o_.report_dir + "/areas/" + area.name + ".list";
    std::vector<std::string> argv = {self_, "--gtest_list_tests",
                                     std::string("--gtest_filter=") + area.suite + ".*"};
    RunChild(argv, {}, log, 30);
    std::vector<std::string> tests;
    std::ifstream in(log);
    std::string line, suite;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (line[0] != ' ') suite = line.substr(0, line.find(' '));
      else tests.push_back(suite + line.substr(2, line.find(' ', 2) - 2));
    }
    ::unlink(log.c_str());
    return tests;
  }

  AreaResult RunArea(const Area& area) {
    AreaResult result;
    result.name = area.name;
    result.suite = area.suite;
    const std::string base = o_.report_dir + "/areas/" + area.name;
    result.log_file = base + ".log";
    std::vector<std::string> excluded;
    std::set<std::string> done;
    auto start = std::chrono::steady_clock::now();
    // Why the tests of the area that never reported stopped being run:
    // each of them is then a failure "not run: <why>", so that a process
    // that dies (or exits 0, or keeps crashing) never shrinks the area.
    std::string not_run;
    constexpr int kAttempts = 64;
    int attempt = 0;
    for (; attempt < kAttempts; ++attempt) {
      std::string results = base + ".results." + std::to_string(attempt) + ".jsonl";
      std::string log = attempt == 0 ? result.log_file
                                     : base + ".retry" + std::to_string(attempt) + ".log";
      std::string filter = std::string("--gtest_filter=") + area.suite + ".*";
      for (size_t i = 0; i < excluded.size(); ++i)
        filter += (i == 0 ? "-" : ":") + excluded[i];
      ::unlink(results.c_str());
      std::vector<std::string> child_args = AreaFlags(&area);
      for (std::string a : {"--cts-child-results=" + results, filter,
                            "--gtest_output=json:" + base + ".gtest." + std::to_string(attempt) + ".json"})
        child_args.push_back(std::move(a));
      ChildResult child = RunChild(ChildArgv(child_args), {}, log, o_.timeout);
      ResultsLog got = ReadResultsLog(results, RunKnownFailures());
      for (TestResult& t : got.finished) {
        done.insert(t.name);
        excluded.push_back(t.name);
        result.tests.push_back(std::move(t));
      }
      if (!child.started) {
        result.incidents.push_back("the child process did not start: " + child.error);
        not_run = "the area's process did not start";
        break;
      }
      std::string where = got.in_flight.empty() ? std::string("outside any test")
                                                : "in " + got.in_flight;
      if (child.timed_out) {
        std::ostringstream what;
        what << "timed out after " << o_.timeout << " s " << where;
        result.incidents.push_back(what.str());
        if (!got.in_flight.empty()) {
          result.tests.push_back({got.in_flight, Outcome::kFailed,
                                  what.str() + " (the area's process was killed)", 0});
          done.insert(got.in_flight);
        }
        not_run = "the area timed out " + where;
        break;
      }
      // A test in flight when the process ended: it crashed, aborted or
      // called exit() -- exit(0) included, which must not read as a pass.
      if (child.signal != 0 || (child.exit_code != 0 && child.exit_code != 1) || !got.in_flight.empty()) {
        std::string how = child.signal ? "crashed (" + SignalName(child.signal) + ")"
                                       : "exited with code " + std::to_string(child.exit_code);
        result.incidents.push_back(how + " " + where + " (log: " + log + ")");
        if (got.in_flight.empty()) {  // nothing to skip past: stop here
          not_run = "the area's process " + how + " " + where;
          break;
        }
        result.tests.push_back({got.in_flight, Outcome::kFailed,
                                "the test process " + how + " during this test", 0});
        done.insert(got.in_flight);
        excluded.push_back(got.in_flight);
        continue;  // the rest of the area in a fresh process
      }
      // The process ended normally: every test should have reported.
      not_run = "the area's process exited with code " + std::to_string(child.exit_code) +
                " before running it (log: " + log + ")";
      break;
    }
    if (attempt == kAttempts)
      not_run = "the area's process ended in a test " + std::to_string(kAttempts) +
                " times; the runner stopped retrying";
    size_t missing = 0;
    for (const std::string& t : ListTests(area))
      if (!done.count(t) && t.find(".DISABLED_") == std::string::npos) {
        result.tests.push_back({t, Outcome::kFailed, "not run: " + not_run, 0});
        ++missing;
      }
    if (missing && (attempt == kAttempts || not_run.rfind("the area's process exited with code", 0) == 0))
      result.incidents.push_back(std::to_string(missing) + " tests not run: " + not_run);
    result.seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start).count();
    return result;
  }

  static bool RunKnownFailures() {
    const char* v = std::getenv("TESSERA_CTS_RUN_KNOWN_FAILURES");
    return v && std::strcmp(v, "1") == 0;
  }

  int Run(const std::string& command) {
    if (!MakeDirs(o_.report_dir + "/areas")) {
      std::cerr << "tessera-conformance: cannot create " << o_.report_dir
                << "/areas: " << std::strerror(errno) << "\n";
      return 2;
    }
    RunReport report;
    report.command = command;
    report.started = Now();
    report.run_known_failures = RunKnownFailures();
    auto start = std::chrono::steady_clock::now();
    std::vector<const Area*> areas = SelectedAreas(o_);

    if (o_.in_process) {
      RunInProcess(areas, &report);
    } else {
      Probe(&report);
      if (o_.unavailable_exit_code >= 0 && report.plugin.contains("error") &&
          report.plugin["error"].get<std::string>().rfind("UNAVAILABLE:", 0) == 0) {
        std::cout << "tessera-conformance: the backend is unavailable; nothing run: "
                  << report.plugin["error"].get<std::string>() << "\n";
        return o_.unavailable_exit_code;
      }
      PrintHeader(report);
      for (const Area* area : areas) {
        report.areas.push_back(RunArea(*area));
        PrintArea(std::cout, report.areas.back());
        std::cout.flush();
      }
    }
    report.seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start).count();
    report.level = CertificationLevel(report.areas);
    std::cout << "\n";
    PrintSummary(std::cout, report);
    std::string error;
    if (!WriteReports(report, o_.report_dir, &error)) {
      std::cerr << "tessera-conformance: " << error << "\n";
      return 1;
    }
    std::cout << "Reports: " << o_.report_dir << "/{report.json,junit.xml,report.md}\n";
    return report.failed() == 0 ? 0 : 1;
  }

  void PrintHeader(const RunReport& report) {
    const nlohmann::json& p = report.plugin;
    std::cout << "Tessera conformance: plugin " << p.value("name", "?");
    if (p.contains("path")) std::cout << " (" << p.value("path", "") << ")";
    if (p.contains("abi_version")) std::cout << ", ABI " << p.value("abi_version", "");
    std::cout << ", " << report.devices.size() << " device(s)\n";
    if (p.contains("error")) std::cout << "  plugin error: " << p.value("error", "") << "\n";
    if (report.run_known_failures)
      std::cout << "  TESSERA_CTS_RUN_KNOWN_FAILURES=1: known failures run\n";
    std::cout << "\n";
  }

  void RunInProcess(const std::vector<const Area*>& areas, RunReport* report) {
    bool multi = false;
    std::string filter;
    for (const Area* a : areas) {
      multi |= a->multi_device;
      filter += (filter.empty() ? "" : ":") + std::string(a->suite) + ".*";
    }
    if (multi) SetMultiDeviceDefaults(&GlobalConfig());
    nlohmann::json probe = ProbeSharedRuntime();
    report->plugin = probe["plugin"];
    report->devices = probe["devices"];
    PrintHeader(*report);
    std::string results = o_.report_dir + "/areas/in-process.results.jsonl";
    InstallResultsLog(results);
    ::testing::GTEST_FLAG(filter) = filter;
    auto start = std::chrono::steady_clock::now();
    if (RUN_ALL_TESTS() != 0) {
      // failures are in the results log
    }
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start).count();
    ResetSharedRuntime();
    ResultsLog got = ReadResultsLog(results, RunKnownFailures());
    for (const Area* a : areas) {
      AreaResult r;
      r.name = a->name;
      r.suite = a->suite;
      for (const TestResult& t : got.finished)
        if (t.name.rfind(std::string(a->suite) + ".", 0) == 0) {
          r.tests.push_back(t);
          r.seconds += t.ms / 1000.0;
        }
      report->areas.push_back(std::move(r));
      PrintArea(std::cout, report->areas.back());
    }
    (void)seconds;
  }

 private:
  Options o_;
  std::string self_;
};

}  // namespace
}  // namespace tessera::cts

int main(int argc, char** argv) {
  using namespace tessera::cts;
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  // Remember the gtest flags before InitGoogleTest removes them, so that
  // children get them too (--gtest_repeat, --gtest_shuffle, ...).
  std::vector<std::string> gtest_flags;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--gtest_", 0) == 0 && a.rfind("--gtest_filter", 0) != 0 &&
        a.rfind("--gtest_output", 0) != 0 && a.rfind("--gtest_list_tests", 0) != 0)
      gtest_flags.push_back(a);
  }
  ::testing::InitGoogleTest(&argc, argv);
  Options options;
  std::string error;
  if (!ParseArgs(argc, argv, &options, &error)) {
    std::cerr << "tessera-conformance: " << error << "\n";
    return 2;
  }
  options.gtest_flags = gtest_flags;
  Config& config = GlobalConfig();
  config.backend = options.backend;
  config.plugin_file = options.plugin;
  for (const std::string& p : options.plugin_options) {  // checked by ParseArgs
    size_t dot = p.find('.'), eq = p.find('=');
    config.plugin_options[p.substr(0, dot)].push_back(
        tessera::OptionValue::String(p.substr(dot + 1, eq - dot - 1), p.substr(eq + 1)));
  }
  if (options.multi_device) SetMultiDeviceDefaults(&config);
  config.kernels_dir = FindKernelsDir(argv[0]);
  const char* run_known = std::getenv("TESSERA_CTS_RUN_KNOWN_FAILURES");
  config.run_known_failures = run_known && std::strcmp(run_known, "1") == 0;

  if (!options.child_results.empty()) return RunChildMode(options);
  if (!options.probe_file.empty()) return RunProbeMode(options);
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
  if (options.list_areas) {
    for (const Area& a : AllAreas())
      std::cout << a.name << "\t" << (a.core ? "Core" : a.level) << "\t"
                << a.summary << "\n";
    return 0;
  }
  Runner runner(options);
  return runner.Run(command);
}
