// Launch costs: async launch, launch + synchronize round trip against a bare
// thread-pool hand-off, and graph replay per node against eager launches.
#include <chrono>
#include <thread>

#include "bare_pool.hpp"
#include "bench_env.hpp"

namespace tessera_bench {
namespace {

using Clock = std::chrono::steady_clock;

// launch_async: launches are timed back to back; every kSyncEvery launches
// the stream is drained with the timer paused, so the queue stays bounded
// and the figure is the CPU cost of issuing one launch.
constexpr int kSyncEvery = 256;

void BM_LaunchAsync(benchmark::State& state) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  if (!CheckOrSkip(state, env->stream.synchronize(), "synchronize")) return;
  int pending = 0;
  for (auto _ : state) {
    tessera::Status s = LaunchEmpty(*env, env->stream);
    if (!s.ok()) {
      CheckOrSkip(state, s, "launch");
      break;
    }
    if (++pending == kSyncEvery) {
      state.PauseTiming();
      env->stream.synchronize().IgnoreError();
      pending = 0;
      state.ResumeTiming();
    }
  }
  env->stream.synchronize().IgnoreError();
  state.SetItemsProcessed(state.iterations());
}

// launch_roundtrip/tessera_cpu: launch one empty kernel and wait for it.
void BM_LaunchRoundtripTessera(benchmark::State& state) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  for (auto _ : state) {
    tessera::Status s = LaunchEmpty(*env, env->stream);
    if (s.ok()) s = env->stream.synchronize();
    if (!s.ok()) {
      CheckOrSkip(state, s, "launch + synchronize");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

// launch_roundtrip/bare_pool: the same hand-off through BarePool, with as
// many workers as the cpu plugin's default (one per hardware thread).
void BM_LaunchRoundtripBarePool(benchmark::State& state) {
  static BarePool* pool = new BarePool(std::thread::hardware_concurrency());
  int counter = 0;
  for (auto _ : state) {
    pool->RunAndWait([&counter] { benchmark::DoNotOptimize(++counter); });
  }
  state.SetItemsProcessed(state.iterations());
}

// Nodes per captured graph.
constexpr int kGraphNodes = 100;

// graph_replay_per_node/tessera_cpu: kGraphNodes empty launches captured on
// one stream, instantiated once; each iteration is GraphExec launch + sync,
// and the manual time reported is that divided by kGraphNodes, so the
// figure IS the cost per node.
void BM_GraphReplayPerNode(benchmark::State& state) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  auto stream_or = env->device.create_stream();
  if (!CheckOrSkip(state, stream_or.status(), "create_stream")) return;
  tessera::Stream stream = std::move(stream_or).value();

  if (!CheckOrSkip(state, stream.begin_capture(), "begin_capture")) return;
  for (int i = 0; i < kGraphNodes; ++i) {
    tessera::Status s = LaunchEmpty(*env, stream);
    if (!s.ok()) {
      stream.end_capture().status().IgnoreError();
      CheckOrSkip(state, s, "launch during capture");
      return;
    }
  }
  auto graph_or = stream.end_capture();
  if (!CheckOrSkip(state, graph_or.status(), "end_capture")) return;
  tessera::Graph graph = std::move(graph_or).value();
  auto exec_or = graph.instantiate();
  if (!CheckOrSkip(state, exec_or.status(), "instantiate")) return;
  tessera::GraphExec exec = std::move(exec_or).value();

  for (auto _ : state) {
    const auto t0 = Clock::now();
    tessera::Status s = stream.launch(exec);
    if (s.ok()) s = stream.synchronize();
    const auto t1 = Clock::now();
    if (!s.ok()) {
      CheckOrSkip(state, s, "graph launch + synchronize");
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() /
                           kGraphNodes);
  }
  state.SetItemsProcessed(state.iterations());  // nodes
  state.counters["nodes_per_graph"] = kGraphNodes;
  stream.synchronize().IgnoreError();
  exec.destroy().IgnoreError();
  graph.destroy().IgnoreError();
  stream.destroy().IgnoreError();
}

// graph_replay_per_node/tessera_cpu_eager: the same kGraphNodes launches
// issued eagerly, then one synchronize, per node: what the graph saves.
void BM_EagerPerNode(benchmark::State& state) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  if (!CheckOrSkip(state, env->stream.synchronize(), "synchronize")) return;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    tessera::Status s;
    for (int i = 0; i < kGraphNodes && s.ok(); ++i) s = LaunchEmpty(*env, env->stream);
    if (s.ok()) s = env->stream.synchronize();
    const auto t1 = Clock::now();
    if (!s.ok()) {
      CheckOrSkip(state, s, "eager launches + synchronize");
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() /
                           kGraphNodes);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["nodes_per_graph"] = kGraphNodes;
}

}  // namespace

void RegisterLaunchBenchmarks(const RegisterOptions& o) {
  using benchmark::RegisterBenchmark;
  Configure(RegisterBenchmark("launch_async/tessera_cpu", BM_LaunchAsync), o, 0.1)
      ->UseRealTime();
  Configure(RegisterBenchmark("launch_roundtrip/tessera_cpu",
                              BM_LaunchRoundtripTessera), o, 0.1)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  Configure(RegisterBenchmark("launch_roundtrip/bare_pool",
                              BM_LaunchRoundtripBarePool), o, 0.1)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  // The manual time is per node, 1/kGraphNodes of the wall time: scale the
  // minimum time down so a repetition still takes about 0.1 s of wall time.
  Configure(RegisterBenchmark("graph_replay_per_node/tessera_cpu",
                              BM_GraphReplayPerNode), o, 0.1, kGraphNodes)
      ->UseManualTime();
  Configure(RegisterBenchmark("graph_replay_per_node/tessera_cpu_eager",
                              BM_EagerPerNode), o, 0.1, kGraphNodes)
      ->UseManualTime();
}

}  // namespace tessera_bench
