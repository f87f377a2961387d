// tessera-bench: every benchmark of the runtime in one binary.
//
// Benchmark names are exactly <metric>/<implementation>[/<size>] so that a
// reference and Tessera that share a metric (and size) can be compared by
// name in one run (bench/compare.py).  Google Benchmark appends the run
// settings to a name ("/min_time:0.100/repeats:5/real_time"); the reporters
// below drop those parts, so the JSON "name"/"run_name" fields carry the
// plain names (aggregates keep the library's "_median", "_mean" suffixes).
//
// Usage: tessera-bench [--benchmark_format=json] [--benchmark_filter=RE]
//                      [--benchmark_out=FILE] [any Google Benchmark flag]
//        python3 bench/compare.py results.json
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_env.hpp"
#include "vulkan_bench.hpp"
#include "gemm_bench.hpp"
#include "attention_bench.hpp"

namespace tessera_bench {
namespace {

std::atomic<bool> g_any_error{false};

void Normalize(std::vector<benchmark::BenchmarkReporter::Run>& runs) {
  for (auto& run : runs) {
    run.run_name.min_time.clear();
    run.run_name.min_warmup_time.clear();
    run.run_name.iterations.clear();
    run.run_name.repetitions.clear();
    run.run_name.time_type.clear();
    run.run_name.threads.clear();
    // A benchmark whose backend is missing on this machine ("not available:
    // ..."; e.g. the Vulkan ones without a driver) is skipped, not failed.
    if (run.error_occurred && run.error_message.rfind("not available", 0) != 0)
      g_any_error = true;
  }
}

class PlainNameJsonReporter : public benchmark::JSONReporter {
 public:
  void ReportRuns(const std::vector<Run>& reports) override {
    std::vector<Run> copy = reports;
    Normalize(copy);
    JSONReporter::ReportRuns(copy);
  }
};

class PlainNameConsoleReporter : public benchmark::ConsoleReporter {
 public:
  explicit PlainNameConsoleReporter(OutputOptions options)
      : ConsoleReporter(options) {}
  void ReportRuns(const std::vector<Run>& reports) override {
    std::vector<Run> copy = reports;
    Normalize(copy);
    ConsoleReporter::ReportRuns(copy);
  }
};

// The value of --NAME=VALUE (or --NAME VALUE) in argv, "" if absent.
bool FindFlag(int argc, char** argv, const char* name, std::string* value) {
  const std::string prefix = std::string("--") + name;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == prefix) {
      *value = "true";
      return true;
    }
    if (arg.rfind(prefix + "=", 0) == 0) {
      *value = arg.substr(prefix.size() + 1);
      return true;
    }
  }
  return false;
}

std::unique_ptr<benchmark::BenchmarkReporter> MakeReporter(
    const std::string& format, bool color, bool tabular) {
  if (format == "json") return std::make_unique<PlainNameJsonReporter>();
  if (format == "console") {
    int options = benchmark::ConsoleReporter::OO_None;
    if (color) options |= benchmark::ConsoleReporter::OO_Color;
    if (tabular) options |= benchmark::ConsoleReporter::OO_Tabular;
    return std::make_unique<PlainNameConsoleReporter>(
        static_cast<benchmark::ConsoleReporter::OutputOptions>(options));
  }
  return nullptr;  // csv (deprecated upstream): the library's own reporter
}

bool IsTrue(const std::string& v) {
  return v == "true" || v == "1" || v == "yes" || v == "on";
}

}  // namespace
}  // namespace tessera_bench

int main(int argc, char** argv) {
  using namespace tessera_bench;
  UseBestOpenBlasKernels(argv);

  std::string value;
  RegisterOptions options;
  options.set_repetitions = !FindFlag(argc, argv, "benchmark_repetitions", &value);
  if (FindFlag(argc, argv, "benchmark_min_time", &value)) {
    char* end = nullptr;
    options.min_time_s = std::strtod(value.c_str(), &end);
    // "2s" is Google Benchmark's own spelling; inf ran for ever.
    if (end && *end == 's' && end[1] == 0) ++end;
    if (end == value.c_str() || *end != 0 || !(options.min_time_s > 0) || options.min_time_s > 3600) {
      std::fprintf(stderr, "tessera-bench: --benchmark_min_time=%s: want a "
                   "number of seconds above 0 and at most 3600\n", value.c_str());
      return 1;
    }
  }

  std::string format = "console";
  if (FindFlag(argc, argv, "benchmark_format", &value)) format = value;
  std::string out_format = "json";
  if (FindFlag(argc, argv, "benchmark_out_format", &value)) out_format = value;
  // An unknown format wrote no file and exited 0.
  for (const auto& [flag, f] : {std::pair<const char*, std::string>{"benchmark_format", format},
                                {"benchmark_out_format", out_format}})
    if (f != "console" && f != "json" && f != "csv") {
      std::fprintf(stderr, "tessera-bench: --%s=%s: want console, json or csv\n", flag, f.c_str());
      return 1;
    }
  const bool has_out = FindFlag(argc, argv, "benchmark_out", &value) && !value.empty();
  bool color = isatty(STDOUT_FILENO) != 0;
  if (FindFlag(argc, argv, "benchmark_color", &value))
    color = IsTrue(value) || (value == "auto" && isatty(STDOUT_FILENO));
  const bool tabular = FindFlag(argc, argv, "benchmark_counters_tabular", &value) &&
                       IsTrue(value);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  RegisterLaunchBenchmarks(options);
  RegisterCallBenchmarks(options);
  RegisterCopyBenchmarks(options);
  RegisterVulkanBenchmarks(options);
  RegisterCudaBenchmarks(options);
  RegisterGemmBenchmarks(options);
  RegisterAttentionBenchmarks(options);
  RegisterProgramBenchmarks(options);

  std::unique_ptr<benchmark::BenchmarkReporter> display =
      MakeReporter(format, color, tabular);
  std::unique_ptr<benchmark::BenchmarkReporter> file;
  if (has_out) file = MakeReporter(out_format, false, tabular);

  if (display && file) {
    benchmark::RunSpecifiedBenchmarks(display.get(), file.get());
  } else if (display) {
    benchmark::RunSpecifiedBenchmarks(display.get());
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();

  if (g_any_error) {
    std::fprintf(stderr,
                 "tessera-bench: at least one benchmark failed (see its "
                 "error_message)\n");
    return 1;
  }
  return 0;
}
