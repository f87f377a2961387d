// The cost of TESSERA_TRACE on the launch round trip (docs/runtime.md,
// "Tracing"): a loop of Stream::launch + Stream::synchronize of the empty
// test kernel on cpu, then a loop of launches with one synchronize.  Run by
// tests/trace_overhead.sh (instructions, under callgrind) or by hand (wall
// time, medians of 5).
//   usage: tessera-trace-overhead KERNELS.so [ITERATIONS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tessera/runtime.hpp"

using namespace tessera;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tessera-trace-overhead KERNELS.so [ITERATIONS]\n");
    return 2;
  }
  const int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  RuntimeOptions options;
  options.backend = "cpu";  // TESSERA_TRACE is read from the environment
  auto runtime = Runtime::Create(options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().ToString().c_str());
    return 1;
  }
  Device device = runtime->devices().at(0);
  auto exe = device.load_executable("elf-native", argv[1]);
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", exe.status().ToString().c_str());
    return 1;
  }
  Kernel kernel = exe->kernel("empty").value();
  Stream stream = device.create_stream().value();
  auto now = [] { return std::chrono::steady_clock::now(); };
  std::vector<double> round_trip, throughput;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = now();
    for (int i = 0; i < n; ++i) {
      if (!stream.launch(kernel, {1, 1, 1}, {1, 1, 1}, {}).ok()) return 1;
      if (!stream.synchronize().ok()) return 1;
    }
    auto t1 = now();
    for (int i = 0; i < n; ++i)
      if (!stream.launch(kernel, {1, 1, 1}, {1, 1, 1}, {}).ok()) return 1;
    if (!stream.synchronize().ok()) return 1;
    auto t2 = now();
    round_trip.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
    throughput.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count() / n);
  }
  std::sort(round_trip.begin(), round_trip.end());
  std::sort(throughput.begin(), throughput.end());
  std::printf("round trip %.3f us, launch %.3f us (medians of 5 x %d)\n",
              round_trip[2], throughput[2], n);
  return 0;
}
