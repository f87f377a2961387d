// TESSERA_TRACE / RuntimeOptions::trace_path: the Chrome trace event file
// (docs/runtime.md, "Tracing").  A two-stream program (copies, kernels, an
// event recorded on one stream and waited on by the other) runs on cpu; the
// file is parsed and its host API slices, stream tracks, device-timed
// operations and the flow arrow of the event wait are checked.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "tessera/trace.hpp"
#include "test_util.hpp"
#include "tessera/compiler.hpp"

namespace tessera {
namespace {

using nlohmann::json;
using testing::CpuOptions;
using testing::CreateCpuRuntime;
using testing::Download;
using testing::NativeFormat;
using testing::ScopedEnv;

// A new path each time: runtimes of one process that name the same path
// share one trace (--gtest_repeat would add up the runs).
std::string TracePath(const std::string& name) {
  static int serial = 0;
  return ::testing::TempDir() + "tessera_trace_" + std::to_string(::getpid()) +
         "_" + name + "_" + std::to_string(++serial) + ".json";
}

json ReadTrace(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "no trace file " << path;
  if (!in.good()) return json();
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << path << " is not valid JSON";
  return j;
}

std::vector<json> Events(const json& trace, const std::string& ph) {
  std::vector<json> out;
  if (!trace.contains("traceEvents")) return out;
  for (const json& e : trace["traceEvents"])
    if (e.value("ph", "") == ph) out.push_back(e);
  return out;
}

using Track = std::pair<int, int>;  // pid, tid
Track TrackOf(const json& e) { return {e["pid"].get<int>(), e["tid"].get<int>()}; }

// A cpu runtime (one device) tracing into `path`, with the test kernels.
void OpenTracedCpu(const std::string& path, Runtime* runtime, Executable* exe) {
  RuntimeOptions options = CpuOptions();
  options.trace_path = path;
  auto rt = CreateCpuRuntime(1, 0, options);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  *runtime = std::move(rt).value();
  const Device& dev = runtime->devices().at(0);
  TS_ASSERT_OK_AND_ASSIGN(*exe, dev.load_executable(NativeFormat(dev), TESSERA_TEST_KERNELS_PATH));
}

// Runs the two-stream program; every handle is gone when it returns, so the
// runtime has been destroyed and the file written.
void RunTwoStreams(const std::string& path, int launches = 2) {
  Runtime runtime;
  Executable exe;
  OpenTracedCpu(path, &runtime, &exe);
  if (::testing::Test::HasFatalFailure()) return;
  const Device& dev = runtime.devices().at(0);
  TS_ASSERT_OK_AND_ASSIGN(Kernel fill, exe.kernel("fill"));
  TS_ASSERT_OK_AND_ASSIGN(Kernel affine, exe.kernel("affine"));
  constexpr uint32_t n = 4096;
  TS_ASSERT_OK_AND_ASSIGN(Buffer x, dev.allocate(n * 4));
  TS_ASSERT_OK_AND_ASSIGN(Buffer y, dev.allocate(n * 4));
  TS_ASSERT_OK_AND_ASSIGN(Buffer host, dev.allocate(n * 4, TS_BUFFER_HOST_PINNED));
  TS_ASSERT_OK_AND_ASSIGN(Stream a, dev.create_stream());
  TS_ASSERT_OK_AND_ASSIGN(Stream b, dev.create_stream());
  TS_ASSERT_OK_AND_ASSIGN(Event ready, dev.create_event());
  const TsDim3 groups{n / 32, 1, 1}, lanes{32, 1, 1};
  for (int i = 0; i < launches; ++i)
    TS_ASSERT_OK(a.launch(fill, groups, lanes,
                          {KernelArg::buffer(x), KernelArg::scalar(2.0f),
                           KernelArg::scalar(n)}));
  TS_ASSERT_OK(ready.record(a));
  TS_ASSERT_OK(b.wait(ready));
  TS_ASSERT_OK(b.launch(affine, groups, lanes,
                        {KernelArg::buffer(y), KernelArg::buffer(x),
                         KernelArg::scalar(3.0f), KernelArg::scalar(1.0f),
                         KernelArg::scalar(n)}));
  TS_ASSERT_OK(b.copy_async(MemoryRef(host), MemoryRef(y), n * 4));
  TS_ASSERT_OK(b.synchronize());
  const float* out = static_cast<const float*>(host.host_pointer());
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(out[n - 1], 7.0f);
}

TEST(TraceTest, TwoStreamsKernelsCopiesAndAnEventWait) {
  const std::string path = TracePath("two_streams");
  std::remove(path.c_str());
  RunTwoStreams(path);
  json trace = ReadTrace(path);
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(trace["otherData"]["dropped_events"], 0);

  // Host API slices, on the calling thread's track of the host process.
  std::multiset<std::string> api;
  std::set<Track> api_tracks;
  for (const json& e : Events(trace, "X"))
    if (e["cat"] == "api") {
      api.insert(e["name"].get<std::string>());
      api_tracks.insert(TrackOf(e));
      EXPECT_EQ(e["pid"], 1);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
  for (const json& e : Events(trace, "X"))
    if (e["name"] == "Stream::launch") EXPECT_TRUE(e["args"].contains("kernel")) << e.dump();
  EXPECT_EQ(api.count("Device::allocate"), 3u);
  EXPECT_EQ(api.count("Device::load_executable"), 1u);
  EXPECT_EQ(api.count("Device::create_stream"), 2u);
  EXPECT_EQ(api.count("Device::create_event"), 1u);
  EXPECT_EQ(api.count("Stream::launch"), 3u);
  EXPECT_EQ(api.count("Event::record"), 1u);
  EXPECT_EQ(api.count("Stream::wait"), 1u);
  EXPECT_EQ(api.count("Stream::copy_async"), 1u);
  EXPECT_EQ(api.count("Stream::synchronize"), 1u);
  EXPECT_EQ(api_tracks.size(), 1u);

  // Names: the host process, the device process, the two streams.
  std::map<Track, std::string> thread_names;
  std::map<int, std::string> process_names;
  for (const json& e : Events(trace, "M")) {
    if (e["name"] == "thread_name") thread_names[TrackOf(e)] = e["args"]["name"];
    if (e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
  }
  TS_EXPECT_CONTAINS(process_names[1], "tessera host");

  // Stream operations: one track per stream, device-timed.
  std::map<Track, std::vector<json>> ops;
  for (const json& e : Events(trace, "X"))
    if (e["cat"] != "api") ops[TrackOf(e)].push_back(e);
  ASSERT_EQ(ops.size(), 2u) << trace.dump(1);
  Track track_a, track_b;
  for (auto& [track, list] : ops) {
    TS_EXPECT_CONTAINS(thread_names[track], "stream");
    TS_EXPECT_CONTAINS(process_names[track.first], "cpu device 0");
    EXPECT_NE(track.first, 1);
    for (const json& e : list) {
      EXPECT_EQ(e["args"]["clock"], "device (plugin timestamps)") << e.dump();
      if (e["name"] == "fill") track_a = track;
      if (e["name"] == "affine") track_b = track;
    }
  }
  ASSERT_NE(track_a, track_b);
  auto names = [&](const Track& t) {
    std::vector<std::string> out;
    for (const json& e : ops[t]) out.push_back(e["name"]);
    return out;
  };
  EXPECT_EQ(names(track_a),
            (std::vector<std::string>{"fill", "fill", "record event"}));
  EXPECT_EQ(names(track_b), (std::vector<std::string>{
                                "wait event", "affine", "copy device to host"}));
  // In stream order, without overlap.
  for (auto& [track, list] : ops)
    for (size_t i = 1; i < list.size(); ++i)
      EXPECT_GE(list[i]["ts"].get<double>() + 1.0,
                list[i - 1]["ts"].get<double>() + list[i - 1]["dur"].get<double>());
  const json& copy = ops[track_b][2];
  EXPECT_EQ(copy["cat"], "copy");
  EXPECT_EQ(copy["args"]["bytes"], 4096 * 4);
  EXPECT_EQ(ops[track_a][0]["cat"], "kernel");
  EXPECT_EQ(ops[track_a][0]["args"]["grid"], json::parse("[128,1,1]"));
  EXPECT_EQ(ops[track_a][0]["args"]["group_size"], json::parse("[32,1,1]"));

  // The flow arrow: from the record on stream a to the wait on stream b.
  std::vector<json> starts = Events(trace, "s"), finishes = Events(trace, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(starts[0]["id"], finishes[0]["id"]);
  EXPECT_EQ(TrackOf(starts[0]), track_a);
  EXPECT_EQ(TrackOf(finishes[0]), track_b);
  EXPECT_EQ(finishes[0]["bp"], "e");
  EXPECT_DOUBLE_EQ(starts[0]["ts"].get<double>(), ops[track_a][2]["ts"].get<double>());
  // The wait ends after the record it waited for: both streams are timed
  // against the runtime's one anchor event (1 us: rounding).
  const json& wait = ops[track_b][0];
  EXPECT_GE(wait["ts"].get<double>() + wait["dur"].get<double>() + 1.0,
            ops[track_a][2]["ts"].get<double>());
  std::remove(path.c_str());
}

// The same trace from another plugin: copies, a memset and an event wait
// across two streams on vulkan (lavapipe here), device-timed.  Skipped where
// vulkan has no device.
// TESSERA_TRACE_CLOCK=events: the plugin's events even where it has
// Stream_WriteTimestamp (the cpu plugin has), with the same slices.
TEST(TraceTest, EventsClockOnAPluginWithTimestamps) {
  ScopedEnv clock("TESSERA_TRACE_CLOCK", "events");
  const std::string path = TracePath("events_clock");
  RunTwoStreams(path);
  json trace = ReadTrace(path);
  int ops = 0;
  for (const json& e : Events(trace, "X"))
    if (e["cat"] != "api") {
      ++ops;
      EXPECT_EQ(e["args"]["clock"], "device (plugin events)") << e.dump();
    }
  EXPECT_GT(ops, 4);
  EXPECT_EQ(Events(trace, "s").size(), 1u) << "the event wait's flow arrow";
  std::remove(path.c_str());
}

TEST(TraceTest, VulkanCopiesAndAnEventWait) {
  const std::string path = TracePath("vulkan");
  std::remove(path.c_str());
  {
    RuntimeOptions options = CpuOptions();
    options.backend = "vulkan";
    options.trace_path = path;
    auto rt = Runtime::Create(options);
    if (!rt.ok()) GTEST_SKIP() << "no vulkan: " << rt.status().ToString();
    const Device& dev = rt->devices().at(0);
    constexpr uint64_t n = 1 << 20;
    TS_ASSERT_OK_AND_ASSIGN(void* host, rt->pinned_malloc(n));
    TS_ASSERT_OK_AND_ASSIGN(Buffer x, dev.allocate(n));
    TS_ASSERT_OK_AND_ASSIGN(Buffer y, dev.allocate(n));
    TS_ASSERT_OK_AND_ASSIGN(Stream a, dev.create_stream());
    TS_ASSERT_OK_AND_ASSIGN(Stream b, dev.create_stream());
    TS_ASSERT_OK_AND_ASSIGN(Event ready, dev.create_event());
    TS_ASSERT_OK(a.copy_async(MemoryRef(x), host, n));
    TS_ASSERT_OK(a.memset_async(x, 0, 7, 4096));
    TS_ASSERT_OK(ready.record(a));
    TS_ASSERT_OK(b.wait(ready));
    TS_ASSERT_OK(b.copy_async(MemoryRef(y), MemoryRef(x), n));
    TS_ASSERT_OK(b.copy_async(host, MemoryRef(y), n));
    TS_ASSERT_OK(b.synchronize());
    EXPECT_EQ(static_cast<unsigned char*>(host)[0], 7);
    TS_EXPECT_OK(rt->pinned_free(host));
  }
  json trace = ReadTrace(path);
  std::map<Track, std::vector<std::string>> ops;
  for (const json& e : Events(trace, "X"))
    if (e["cat"] != "api") {
      ops[TrackOf(e)].push_back(e["name"]);
      // The vulkan plugin has Stream_WriteTimestamp (timestamp queries).
      EXPECT_EQ(e["args"]["clock"], "device (plugin timestamps)") << e.dump();
    }
  ASSERT_EQ(ops.size(), 2u);
  std::vector<std::vector<std::string>> lists;
  for (auto& [track, list] : ops) lists.push_back(list);
  EXPECT_EQ(lists[0], (std::vector<std::string>{"copy host to device", "memset",
                                                "record event"}));
  EXPECT_EQ(lists[1], (std::vector<std::string>{"wait event", "copy device to device",
                                                "copy device to host"}));
  ASSERT_EQ(Events(trace, "s").size(), 1u);
  ASSERT_EQ(Events(trace, "f").size(), 1u);
  EXPECT_EQ(TrackOf(Events(trace, "s")[0]), ops.begin()->first);
  EXPECT_EQ(TrackOf(Events(trace, "f")[0]), std::next(ops.begin())->first);
  std::remove(path.c_str());
}

// Two devices: one process each, and the flow arrow from a record on device
// 0 to a wait on device 1 (one anchor serves both: Event_ElapsedTime spans
// the devices of a client).
TEST(TraceTest, TwoDevicesAndACrossDeviceWait) {
  const std::string path = TracePath("two_devices");
  std::remove(path.c_str());
  {
    RuntimeOptions options = CpuOptions();
    options.trace_path = path;
    auto rt = CreateCpuRuntime(2, 0, options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    const Device& d0 = rt->devices().at(0);
    const Device& d1 = rt->devices().at(1);
    TS_ASSERT_OK_AND_ASSIGN(Buffer x, d0.allocate(4096));
    TS_ASSERT_OK_AND_ASSIGN(Buffer y, d1.allocate(4096));
    TS_ASSERT_OK_AND_ASSIGN(Stream s0, d0.create_stream());
    TS_ASSERT_OK_AND_ASSIGN(Stream s1, d1.create_stream());
    TS_ASSERT_OK_AND_ASSIGN(Event ready, d0.create_event());
    TS_ASSERT_OK(s0.memset_async(x, 0, 1, 4096));
    TS_ASSERT_OK(ready.record(s0));
    TS_ASSERT_OK(s1.wait(ready));
    TS_ASSERT_OK(s1.memset_async(y, 0, 2, 4096));
    TS_ASSERT_OK(s1.synchronize());
  }
  json trace = ReadTrace(path);
  std::set<int> pids;
  for (const json& e : Events(trace, "X"))
    if (e["cat"] != "api") {
      pids.insert(e["pid"].get<int>());
      EXPECT_EQ(e["args"]["clock"], "device (plugin timestamps)") << e.dump();
    }
  EXPECT_EQ(pids.size(), 2u);
  ASSERT_EQ(Events(trace, "s").size(), 1u);
  ASSERT_EQ(Events(trace, "f").size(), 1u);
  EXPECT_NE(Events(trace, "s")[0]["pid"], Events(trace, "f")[0]["pid"]);
  std::remove(path.c_str());
}

// Stream capture: what is captured is not run, and no timing event may be
// recorded into the graph; those slices are host-timed, the graph's launch
// device-timed, and the graph still computes the right thing.
TEST(TraceTest, CaptureAndGraphLaunch) {
  const std::string path = TracePath("capture");
  std::remove(path.c_str());
  {
    RuntimeOptions options = CpuOptions();
    options.trace_path = path;
    auto rt = CreateCpuRuntime(1, 0, options);
    ASSERT_TRUE(rt.ok());
    const Device& dev = rt->devices().at(0);
    TS_ASSERT_OK_AND_ASSIGN(Executable exe,
                            dev.load_executable(NativeFormat(dev), TESSERA_TEST_KERNELS_PATH));
    TS_ASSERT_OK_AND_ASSIGN(Kernel fill, exe.kernel("fill"));
    TS_ASSERT_OK_AND_ASSIGN(Buffer x, dev.allocate(64 * 4));
    TS_ASSERT_OK_AND_ASSIGN(Stream s, dev.create_stream());
    TS_ASSERT_OK(s.begin_capture());
    TS_ASSERT_OK(s.launch(fill, {2, 1, 1}, {32, 1, 1},
                          {KernelArg::buffer(x), KernelArg::scalar(5.0f),
                           KernelArg::scalar(uint32_t{64})}));
    TS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
    EXPECT_EQ(g.num_nodes(), 1u);  // no timing event was captured
    TS_ASSERT_OK_AND_ASSIGN(GraphExec ge, g.instantiate());
    TS_ASSERT_OK(s.launch(ge));
    TS_ASSERT_OK(s.launch(ge));
    TS_ASSERT_OK(s.synchronize());
    EXPECT_EQ(Download<float>(x, 64), std::vector<float>(64, 5.0f));
  }
  json trace = ReadTrace(path);
  std::vector<json> ops;
  for (const json& e : Events(trace, "X"))
    if (e["cat"] != "api") ops.push_back(e);
  ASSERT_EQ(ops.size(), 3u) << trace.dump(1);
  EXPECT_EQ(ops[0]["name"], "fill");
  EXPECT_EQ(ops[0]["args"]["clock"], "host enqueue (stream capture)");
  for (int i : {1, 2}) {
    EXPECT_EQ(ops[i]["name"], "graph");
    EXPECT_EQ(ops[i]["args"]["clock"], "device (plugin timestamps)");
  }
  std::remove(path.c_str());
}

// Host threads get one track each, streams used from several threads one
// each; the writer is shared.
TEST(TraceTest, OneTrackPerHostThread) {
  const std::string path = TracePath("threads");
  std::remove(path.c_str());
  {
    RuntimeOptions options = CpuOptions();
    options.trace_path = path;
    auto rt = CreateCpuRuntime(1, 0, options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    Device dev = rt->devices().at(0);
    auto exe = dev.load_executable(NativeFormat(dev), TESSERA_TEST_KERNELS_PATH);
    ASSERT_TRUE(exe.ok()) << exe.status().ToString();
    auto empty = exe->kernel("empty");
    ASSERT_TRUE(empty.ok());
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
      threads.emplace_back([dev, kernel = *empty] {
        auto stream = dev.create_stream();
        ASSERT_TRUE(stream.ok());
        for (int i = 0; i < 50; ++i) {
          auto buffer = dev.allocate(64);
          EXPECT_TRUE(buffer.ok());
          EXPECT_TRUE(stream->launch(kernel, {1, 1, 1}, {1, 1, 1}, {}).ok());
          if (i % 10 == 9) EXPECT_TRUE(stream->synchronize().ok());
        }
      });
    for (std::thread& t : threads) t.join();
  }
  json trace = ReadTrace(path);
  // Every launch is on its stream's track, device-timed.
  std::map<Track, int> per_stream;
  for (const json& e : Events(trace, "X"))
    if (e["cat"] == "kernel") {
      ++per_stream[TrackOf(e)];
      EXPECT_EQ(e["args"]["clock"], "device (plugin timestamps)");
    }
  ASSERT_EQ(per_stream.size(), 3u);
  for (auto [track, count] : per_stream) EXPECT_EQ(count, 50);
  std::map<int, int> per_thread;
  for (const json& e : Events(trace, "X"))
    if (e["name"] == "Device::allocate") ++per_thread[e["tid"].get<int>()];
  ASSERT_EQ(per_thread.size(), 3u);
  for (auto [tid, count] : per_thread) EXPECT_EQ(count, 50);
  std::remove(path.c_str());
}

// Work nobody synchronized: when the runtime goes, the trace waits for it
// (Stream_Synchronize) and the operations keep their device times, the
// gated one ending after the gate opened.  Also a stream destroyed with
// work in flight: its operations are resolved before it goes.
TEST(TraceTest, UnsynchronizedWorkIsTimedWhenItsStreamOrRuntimeGoes) {
  const std::string path = TracePath("unsynchronized");
  uint64_t opened_ns = 0;
  {
    Runtime runtime;
    Executable exe;
    OpenTracedCpu(path, &runtime, &exe);
    if (HasFatalFailure()) return;
    const Device& dev = runtime.devices().at(0);
    TS_ASSERT_OK_AND_ASSIGN(Kernel gate_kernel, exe.kernel("gate"));
    TS_ASSERT_OK_AND_ASSIGN(Kernel fill, exe.kernel("fill"));
    TS_ASSERT_OK_AND_ASSIGN(Buffer x, dev.allocate(64 * 4));
    TS_ASSERT_OK_AND_ASSIGN(Stream s, dev.create_stream());
    TS_ASSERT_OK_AND_ASSIGN(Stream doomed, dev.create_stream());
    testing::HostGate gate;
    TS_ASSERT_OK(s.launch(gate_kernel, {1, 1, 1}, {1, 1, 1}, gate.args()));
    TS_ASSERT_OK(s.launch(fill, {2, 1, 1}, {32, 1, 1},
                          {KernelArg::buffer(x), KernelArg::scalar(1.0f),
                           KernelArg::scalar(uint32_t{64})}));
    TS_ASSERT_OK(doomed.memset_async(x, 0, 0, 4));
    TS_ASSERT_OK(doomed.destroy());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    opened_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
    gate.open();
  }  // the runtime goes with the gate's work possibly still running
  json trace = ReadTrace(path);
  std::map<std::string, json> ops;
  for (const json& e : Events(trace, "X"))
    if (e["cat"] != "api") ops[e["name"].get<std::string>()] = e;
  ASSERT_EQ(ops.count("gate"), 1u) << trace.dump(1);
  ASSERT_EQ(ops.count("fill"), 1u);
  ASSERT_EQ(ops.count("memset"), 1u);
  for (auto& [name, e] : ops)
    EXPECT_EQ(e["args"]["clock"], "device (plugin timestamps)") << e.dump();
  // Trace times are microseconds of the same steady clock.
  const double gate_end = ops["gate"]["ts"].get<double>() + ops["gate"]["dur"].get<double>();
  EXPECT_GE(gate_end + 1.0, static_cast<double>(opened_ns) / 1000.0)
      << "the gate's slice ends before the gate was opened";
  std::remove(path.c_str());
}

// TESSERA_TRACE_MAX_EVENTS caps the events kept; the rest are counted.
TEST(TraceTest, EventCap) {
  const std::string path = TracePath("cap");
  std::remove(path.c_str());
  {
    ScopedEnv cap("TESSERA_TRACE_MAX_EVENTS", "20");
    RunTwoStreams(path, 100);
  }
  json trace = ReadTrace(path);
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(Events(trace, "X").size(), 20u);
  EXPECT_EQ(trace["otherData"]["max_events"], 20);
  EXPECT_GT(trace["otherData"]["dropped_events"].get<int>(), 100);
  std::remove(path.c_str());
}

// TESSERA_TRACE, and a program that exits with its runtime alive: the file
// is written at exit, complete.
TEST(TraceTest, EnvironmentAndExitWithRuntimeAlive) {
  const std::string path = TracePath("exit");
  std::remove(path.c_str());
  EXPECT_EXIT(
      {
        ScopedEnv env("TESSERA_TRACE", path);
        RuntimeOptions options;
        options.backend = "cpu";  // read_environment stays true
        // Alive at exit on purpose; reachable from a static, so not a leak
        // for LeakSanitizer.
        static auto* runtime = new StatusOr<Runtime>(Runtime::Create(options));
        if (!runtime->ok()) std::_Exit(3);
        Device dev = (*runtime)->devices().at(0);
        if (!dev.allocate(64).ok()) std::_Exit(4);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  json trace = ReadTrace(path);
  ASSERT_TRUE(trace.is_object());
  int allocations = 0;
  for (const json& e : Events(trace, "X")) allocations += e["name"] == "Device::allocate";
  EXPECT_EQ(allocations, 1);
  std::remove(path.c_str());
}

// TraceScope: slices of one's own (compile phases) on the thread's track,
// and Compiler::Compile's own slice.
TEST(TraceTest, TraceScopeAndCompile) {
  const std::string path = TracePath("scope");
  std::remove(path.c_str());
  {
    RuntimeOptions options = CpuOptions();
    options.trace_path = path;
    auto rt = CreateCpuRuntime(1, 0, options);
    ASSERT_TRUE(rt.ok());
    EXPECT_TRUE(TraceActive());
    {
      TraceScope phase("compile", "lower to tile IR");
      phase.AddArg("module", "softmax \"v2\"");
    }
    const Device& dev = rt->devices().at(0);
    auto compiler = Compiler::ForDevice(dev);
    if (compiler.ok()) {
      CompileRequest request;
      request.target = compiler->targets().front().name;
      request.module = "not a module";
      (void)compiler->Compile(request, &dev);
    }
  }
  json trace = ReadTrace(path);
  bool phase = false, compile = false;
  for (const json& e : Events(trace, "X")) {
    if (e["name"] == "lower to tile IR") {
      phase = true;
      EXPECT_EQ(e["cat"], "compile");
      EXPECT_EQ(e["pid"], 1);
      EXPECT_EQ(e["args"]["module"], "softmax \"v2\"");
    }
    if (e["name"] == "Compiler::Compile") {
      compile = true;
      EXPECT_EQ(e["cat"], "compile");
      EXPECT_EQ(e["args"]["module_bytes"], 12);
    }
  }
  EXPECT_TRUE(phase);
  EXPECT_TRUE(compile || !Compiler::ForDevice(CreateCpuRuntime(1)->devices()[0]).ok());
  std::remove(path.c_str());
}

// Off: no file, whatever the runtime does.
TEST(TraceTest, OffWritesNothing) {
  const std::string path = TracePath("off");
  std::remove(path.c_str());
  auto rt = CreateCpuRuntime(1);
  ASSERT_TRUE(rt.ok());
  auto buffer = rt->devices().at(0).allocate(64);
  EXPECT_TRUE(buffer.ok());
  FILE* f = std::fopen(path.c_str(), "r");
  EXPECT_EQ(f, nullptr);
  if (f) std::fclose(f);
}

}  // namespace
}  // namespace tessera
