// A process that only runs precompiled programs maps no compiler: it links
// libtessera (not libtessera_compiler), loads a .tsp written by
// tessera-compile, runs it on the cpu backend, checks the result, and then
// reads /proc/self/maps: neither libMLIR nor LLVM 16 may be mapped (the cpu
// plugin's compiler part is loaded only by a compile).  It prints how long
// Runtime::Create and Program::Load took.
//   usage: tessera-load-only-check PROGRAM.tsp   (saxpy over 65536 floats)
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tessera/program.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PROGRAM.tsp\n", argv[0]);
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const auto t0 = Clock::now();
  tessera::RuntimeOptions ro;
  ro.backend = "cpu";
  auto rt = tessera::Runtime::Create(ro);
  const auto t1 = Clock::now();
  if (!rt.ok()) return std::fprintf(stderr, "FAILED: %s\n", rt.status().ToString().c_str()), 1;
  tessera::Device dev = rt->devices()[0];
  auto program = tessera::Program::Load({dev}, argv[1]);
  const auto t2 = Clock::now();
  if (!program.ok()) return std::fprintf(stderr, "FAILED: %s\n", program.status().ToString().c_str()), 1;

  const size_t n = 65536;
  std::vector<float> x(n), y(n), out(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97), y[i] = 1.0f;
  auto bx = dev.allocate(n * 4), by = dev.allocate(n * 4);
  if (!bx.ok() || !by.ok()) return std::fprintf(stderr, "FAILED: allocation\n"), 1;
  if (!tessera::copy(*bx, x.data(), n * 4).ok() || !tessera::copy(*by, y.data(), n * 4).ok())
    return std::fprintf(stderr, "FAILED: upload\n"), 1;
  tessera::Stream s = dev.default_stream();
  tessera::Status st = program->Run(s, {tessera::KernelArg::scalar(2.0f), tessera::KernelArg::buffer(*bx),
                                        tessera::KernelArg::buffer(*by)});
  if (st.ok()) st = s.synchronize();
  if (st.ok()) st = tessera::copy(out.data(), *by, n * 4);
  if (!st.ok()) return std::fprintf(stderr, "FAILED: %s\n", st.ToString().c_str()), 1;
  for (size_t i = 0; i < n; ++i)
    if (out[i] != 2.0f * x[i] + 1.0f)
      return std::fprintf(stderr, "FAILED: y[%zu] = %g, expected %g\n", i, out[i], 2.0f * x[i] + 1.0f), 1;

  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libMLIR") != std::string::npos || line.find("libLLVM-16") != std::string::npos ||
        line.find("libLLVM.so.16") != std::string::npos || line.find("_compiler.so") != std::string::npos) {
      std::fprintf(stderr, "FAILED: a process that only runs a precompiled program maps %s\n", line.c_str());
      return 1;
    }
  std::printf("ran %s without a compiler mapped: Runtime::Create %.2f ms, Program::Load %.2f ms\n", argv[1],
              ms(t0, t1), ms(t1, t2));
  return 0;
}
