// What a Program adds per run: the same compiled Tile IR kernel (a 4096
// element saxpy) run through Program::Run, and launched directly on the
// stream from its executable (the reference).  program_launch: the CPU cost
// of enqueueing one run (drained every 256); program_roundtrip: run + wait.
#include "bench_env.hpp"

#if TESSERA_BENCH_HAVE_IR
#include "ir_compile.hpp"
#endif

namespace tessera_bench {

#if TESSERA_BENCH_HAVE_IR
namespace {

constexpr int kSyncEvery = 256;

const char kSaxpy[] = R"(
func.func @saxpy(%a: f32, %x: memref<4096xf32>, %y: memref<4096xf32>)
    attributes {tessera_tile.group_size = array<i64: 64>, tessera_tile.grid = array<i64: 16>} {
  %g = tessera_tile.group_id 0 : index
  %l = tessera_tile.lane_id 0 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %base = arith.muli %g, %c256 : index
  %off = arith.muli %l, %c4 : index
  %i = arith.addi %base, %off : index
  %xv = tessera_tile.load %x[%i] : memref<4096xf32>, vector<4xf32>
  %yv = tessera_tile.load %y[%i] : memref<4096xf32>, vector<4xf32>
  %av = vector.broadcast %a : f32 to vector<4xf32>
  %r = tessera_tile.math fma(%av, %xv, %yv) : vector<4xf32>
  tessera_tile.store %r, %y[%i] : vector<4xf32>, memref<4096xf32>
  return
}
)";

// The program, its buffers, and the same kernel loaded on its own.
struct Setup {
  IrProgram prog;
  tessera::Executable exe;
  tessera::Kernel kernel;
  tessera::Buffer x, y;
  std::vector<tessera::KernelArg> args;
  TsDim3 grid{1, 1, 1}, group{1, 1, 1};
  uint64_t shared = 0;
  std::string error;
};

Setup* GetSetup(benchmark::State& state, BenchEnv* env) {
  static Setup* setup = [env] {
    auto* s = new Setup;
    if (!CompileGraphIR(kSaxpy, env->device, {}, &s->prog, &s->error)) return s;
    const tessera::ProgramImage& im = s->prog.program.image();
    const tessera::ExecutableImage& e = im.executables.front();
    auto exe = env->device.load_executable(e.format, e.data.data(), e.data.size());
    if (!exe.ok()) return s->error = exe.status().ToString(), s;
    s->exe = *exe;
    auto k = s->exe.kernel(im.steps.front().kernel);
    if (!k.ok()) return s->error = k.status().ToString(), s;
    s->kernel = *k;
    s->grid = im.steps.front().grid;
    s->group = im.steps.front().group_size;
    s->shared = im.steps.front().shared_memory_bytes;
    auto x = env->device.allocate(4096 * 4), y = env->device.allocate(4096 * 4);
    if (!x.ok() || !y.ok()) return s->error = "allocation failed", s;
    s->x = *x;
    s->y = *y;
    s->args = {tessera::KernelArg::scalar(1.5f), tessera::KernelArg::buffer(s->x), tessera::KernelArg::buffer(s->y)};
    // Warm both paths the same before either is timed: whichever benchmark
    // ran first otherwise paid for the state the compile left behind (heap,
    // caches, idle workers), which measured as a 2x gap that swapped with
    // the order.
    tessera::Stream stream = env->device.default_stream();
    for (int round = 0; round < 8; ++round)
      for (int i = 0; i < kSyncEvery; ++i) {
        tessera::Status st = (i % 2) ? s->prog.program.Run(stream, s->args)
                                     : stream.launch(s->kernel, s->grid, s->group, s->args, s->shared);
        if (!st.ok()) return s->error = "warm-up: " + st.ToString(), s;
        if (i % 64 == 63) stream.synchronize().IgnoreError();
      }
    stream.synchronize().IgnoreError();
    return s;
  }();
  if (!setup->error.empty()) {
    state.SkipWithError(setup->error.c_str());
    return nullptr;
  }
  return setup;
}

tessera::Status RunOnce(Setup& s, const tessera::Stream& stream, bool program) {
  if (program) return s.prog.program.Run(stream, s.args);
  return stream.launch(s.kernel, s.grid, s.group, s.args, s.shared);
}

void BM_ProgramLaunch(benchmark::State& state, bool program) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  Setup* s = GetSetup(state, env);
  if (!s) return;
  tessera::Stream stream = env->device.default_stream();
  int pending = 0;
  for (auto _ : state) {
    if (tessera::Status st = RunOnce(*s, stream, program); !st.ok()) {
      CheckOrSkip(state, st, "run");
      break;
    }
    if (++pending == kSyncEvery) {
      state.PauseTiming();
      stream.synchronize().IgnoreError();
      pending = 0;
      state.ResumeTiming();
    }
  }
  stream.synchronize().IgnoreError();
  state.SetItemsProcessed(state.iterations());
}

void BM_ProgramRoundtrip(benchmark::State& state, bool program) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  Setup* s = GetSetup(state, env);
  if (!s) return;
  tessera::Stream stream = env->device.default_stream();
  for (auto _ : state) {
    tessera::Status st = RunOnce(*s, stream, program);
    if (st.ok()) st = stream.synchronize();
    if (!st.ok()) {
      CheckOrSkip(state, st, "run + synchronize");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace
#endif

void RegisterProgramBenchmarks(const RegisterOptions& options) {
#if TESSERA_BENCH_HAVE_IR
  for (bool program : {true, false}) {
    const std::string impl = program ? "tessera_program" : "direct_launch";
    Configure(benchmark::RegisterBenchmark(("program_launch/" + impl + "/saxpy4k").c_str(), BM_ProgramLaunch, program),
              options, 0.2)
        ->UseRealTime();
    Configure(benchmark::RegisterBenchmark(("program_roundtrip/" + impl + "/saxpy4k").c_str(), BM_ProgramRoundtrip,
                                           program),
              options, 0.2)
        ->UseRealTime();
  }
#else
  (void)options;
#endif
}

}  // namespace tessera_bench
