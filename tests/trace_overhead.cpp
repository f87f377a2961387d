// The cost of TESSERA_TRACE on the launch round trip (docs/runtime.md,
// "Tracing"): a loop of Stream::launch + Stream::synchronize of the empty
// test kernel on cpu, then a loop of launches with one synchronize.  Run by
// tests/trace_overhead.sh (instructions, under callgrind) or by hand (wall
// time, medians of 5).
// With "buffers" the launches are of the `add` test kernel with two buffer
// arguments (what the validation layer's hazard detector tracks) instead.
// Given a .ptx file it runs on the cuda backend instead: the `add_const`
// kernel of plugins/cuda/test_kernels/add_const.ptx over 0 elements (an
// empty kernel with a buffer argument; "buffers" is not taken there).
//   usage: tessera-trace-overhead KERNELS.so|KERNELS.ptx [ITERATIONS] [buffers]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/runtime.hpp"

using namespace tessera;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: tessera-trace-overhead KERNELS.so|KERNELS.ptx [ITERATIONS] [buffers]\n");
    return 2;
  }
  const int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  const std::string path = argv[1];
  const bool ptx = path.size() > 4 && path.compare(path.size() - 4, 4, ".ptx") == 0;
  RuntimeOptions options;
  options.backend = ptx ? "cuda" : "cpu";  // TESSERA_TRACE is read from the environment
  auto runtime = Runtime::Create(options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().ToString().c_str());
    return 1;
  }
  Device device = runtime->devices().at(0);
  auto exe = device.load_executable(ptx ? "ptx" : "elf-native", path);
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", exe.status().ToString().c_str());
    return 1;
  }
  const bool buffers = !ptx && argc > 3 && std::string(argv[3]) == "buffers";
  Kernel kernel = exe->kernel(ptx ? "add_const" : buffers ? "add" : "empty").value();
  if (buffers) kernel.declare_buffer_access({TS_PARAM_WRITE, TS_PARAM_READ});
  Stream stream = device.create_stream().value();
  Buffer dst = device.allocate(64).value(), src = device.allocate(64).value();
  std::vector<KernelArg> args;
  if (buffers)
    args = {KernelArg::buffer(dst), KernelArg::buffer(src), KernelArg::scalar(1.0f),
            KernelArg::scalar(uint32_t{1})};
  else if (ptx)
    args = {KernelArg::buffer(dst), KernelArg::scalar(uint32_t{1}), KernelArg::scalar(uint32_t{0})};
  auto now = [] { return std::chrono::steady_clock::now(); };
  std::vector<double> round_trip, throughput;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = now();
    for (int i = 0; i < n; ++i) {
      if (!stream.launch(kernel, {1, 1, 1}, {1, 1, 1}, args).ok()) return 1;
      if (!stream.synchronize().ok()) return 1;
    }
    auto t1 = now();
    for (int i = 0; i < n; ++i)
      if (!stream.launch(kernel, {1, 1, 1}, {1, 1, 1}, args).ok()) return 1;
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
