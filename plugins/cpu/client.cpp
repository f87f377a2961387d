// Client: reads its options (devices, threads: the core turns
// TESSERA_CPU_DEVICES / TESSERA_CPU_THREADS into them), starts the worker
// pool shared by all devices, creates the devices and their default streams.
#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "internal.hpp"
#include "options.hpp"

namespace tessera::cpu {

const TsOptionInfo kClientOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "devices", TS_VALUE_INT64, "1",
     "number of cpu devices (1..64), to exercise peers and collectives"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "threads", TS_VALUE_INT64, "",
     "worker threads shared by the devices (1..1024; default: every core)"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "process_timeout_s", TS_VALUE_FLOAT64, "600",
     "the longest wait for other processes of a communicator across processes (joining, or "
     "any one collective), in seconds"},
};
const size_t kNumClientOptions = sizeof(kClientOptions) / sizeof(kClientOptions[0]);

namespace {

constexpr unsigned long kMaxDevices = 64;
constexpr unsigned long kMaxThreads = 1024;

// Reads option `name` as an integer in [1, max]; absent -> `def`.
TsError* count_option(const plugin_support::OptionValues& options, const char* name,
                      unsigned long def, unsigned long max, unsigned long* out) {
  if (!options.Has(name)) {
    *out = def;
    return nullptr;
  }
  const int64_t n = options.Int(name, static_cast<int64_t>(def));
  if (n < 1 || static_cast<unsigned long long>(n) > max)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Client_Create: option %s=%lld is not a whole number between 1 and "
                  "%lu: set it to e.g. %lu (environment: TESSERA_CPU_%s), or leave it out for "
                  "the default",
                  name, static_cast<long long>(n), max, def,
                  std::string(name) == "devices" ? "DEVICES" : "THREADS");
  *out = static_cast<unsigned long>(n);
  return nullptr;
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) break;
      auto s = line.substr(colon + 1);
      const auto b = s.find_first_not_of(" \t");
      return b == std::string::npos ? std::string("unknown CPU") : s.substr(b);
    }
  }
  return "unknown CPU";
}

}  // namespace

}  // namespace tessera::cpu

TsClient::~TsClient() {
  // Wait for all work, then stop the workers, before any device goes away.
  scheduler.reset();
  for (auto& d : devices) {
    if (d->default_stream) {
      d->default_stream->magic = tessera::cpu::kMagicDead;
      delete d->default_stream;
    }
    d->magic = tessera::cpu::kMagicDead;
  }
  // Host memory the application never freed goes with the client.
  for (auto& [p, range] : host_allocs) {
    munlock(p, range.size);
    munmap(p, range.size);
  }
  for (auto& [p, range] : host_registered) munlock(p, range.size);
}

namespace tessera::cpu {

TS_CPU_ENTRY(Client_Create, TS_CLIENT_CREATE_ARGS_MIN_STRUCT_SIZE) {
  plugin_support::OptionValues options;
  if (TS_FIELD_PRESENT(args, TsClient_Create_Args, num_options))
    if (TsError* e = plugin_support::ParseOptions("cpu", "Client_Create", kClientOptions,
                                                  kNumClientOptions, args->options,
                                                  args->num_options, &options))
      return e;
  unsigned long ndev = 0, nthreads = 0;
  if (TsError* e = count_option(options, "devices", 1, kMaxDevices, &ndev)) return e;
  unsigned long hw = std::thread::hardware_concurrency();
  if (hw == 0) hw = 1;
  if (TsError* e = count_option(options, "threads", hw, kMaxThreads, &nthreads)) return e;
  const double process_timeout_s = options.Float("process_timeout_s", 600);
  if (!(process_timeout_s > 0) || process_timeout_s > 1e6)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Client_Create: option process_timeout_s=%g is not a number of seconds in "
                  "(0, 1e6] (environment: TESSERA_CPU_PROCESS_TIMEOUT_S)",
                  process_timeout_s);
  auto c = std::make_unique<TsClient>();
  c->process_timeout_s = process_timeout_s;
  c->cpu_model = cpu_model_name();
  c->physical_memory = physical_memory_bytes();
  try {
    c->scheduler = std::make_unique<Scheduler>(static_cast<unsigned>(nthreads));
  } catch (const std::system_error& e) {
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                  "cpu: Client_Create: cannot start %lu worker threads: %s: lower "
                  "the threads option (TESSERA_CPU_THREADS)",
                  nthreads, e.what());
  }
  for (unsigned long i = 0; i < ndev; ++i) {
    auto d = std::make_unique<TsDevice>();
    d->client = c.get();
    d->ordinal = static_cast<uint32_t>(i);
    auto st = std::make_shared<StreamState>();
    st->device = d.get();
    st->is_default = true;
    auto* ds = new TsStream;
    ds->device = d.get();
    ds->state = st;
    d->default_stream = ds;
    d->streams.push_back(st);
    c->device_list.push_back(d.get());
    c->devices.push_back(std::move(d));
  }
  args->client = c.release();
  return nullptr;
}

namespace {

template <class T>
std::vector<T*> snapshot(TsDevice* d, std::unordered_set<T*> LiveObjects::*set) {
  std::lock_guard<std::mutex> lk(d->sched().mutex());
  const auto& s = d->live.*set;
  return std::vector<T*>(s.begin(), s.end());
}

// Frees the objects of `d` the caller did not destroy, through the functions
// their own Destroy/Free entry points use (each unregisters what it frees, so
// each object goes once).  The device is idle and no capture is open.
// Order: what refers to another object goes first: graph execs and graphs
// (their ops name buffers and kernels), events (their records hold streams),
// streams, then executables and buffers.
void free_leftovers(TsDevice* d) {
  for (TsGraphExec* x : snapshot(d, &LiveObjects::graph_execs)) destroy_graph_exec(x);
  for (TsGraph* g : snapshot(d, &LiveObjects::graphs)) destroy_graph(g);
  for (TsEvent* ev : snapshot(d, &LiveObjects::events)) destroy_event(ev);
  for (TsStream* s : snapshot(d, &LiveObjects::streams))
    if (TsError* e = destroy_stream(s, true)) {
      TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
      plugin_support::Error_Destroy(&da);
    }
  for (TsExecutable* x : snapshot(d, &LiveObjects::executables)) destroy_executable(x);
  for (TsBuffer* b : snapshot(d, &LiveObjects::buffers)) destroy_buffer(b);
}

}  // namespace

// Waits for all work, then frees everything the client owns (plugin.h): the
// objects the caller left behind (free_leftovers, then the communicators),
// and then, in ~TsClient, the workers, the default streams and the host
// memory.  The caller makes no other call on the client or its objects
// meanwhile.
TS_CPU_ENTRY(Client_Destroy, TS_CLIENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Client_Destroy", "client");
  TsClient* c = args->client;
  for (auto& d : c->devices) {
    {
      std::lock_guard<std::mutex> lk(c->scheduler->mutex());
      for (const auto& s : d->streams) {
        // A capture still open produces no graph (and its session and the
        // streams in it no longer hold each other).
        abandon_capture_locked(*s);
        // Waits no task will take: they may hold the stream itself.
        s->pending_waits.clear();
      }
    }
    device_synchronize(d.get());
  }
  for (auto& d : c->devices) free_leftovers(d.get());
  {
    std::vector<TsCommunicator*> comms;
    {
      std::lock_guard<std::mutex> lk(c->scheduler->mutex());
      comms.assign(c->communicators.begin(), c->communicators.end());
    }
    for (TsCommunicator* x : comms) destroy_communicator(x);
  }
  c->magic = kMagicDead;
  delete c;  // ~TsClient stops the workers, then frees the default streams
  return nullptr;
}

TS_CPU_ENTRY(Client_GetDevices, TS_CLIENT_GETDEVICES_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->client, "Client_GetDevices", "client");
  args->devices = args->client->device_list.data();
  args->num_devices = args->client->device_list.size();
  return nullptr;
}

}  // namespace tessera::cpu
