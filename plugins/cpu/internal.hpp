// Objects behind the opaque handles of the CPU plugin, and the entry points.
// Every handle starts with a magic word so a destroyed or foreign handle is
// reported as TS_ERROR_INVALID_HANDLE instead of being used.
//
// Locking: the client's scheduler mutex (Scheduler::mutex(), one per client)
// guards every queue, the device stream registries, capture state and the
// registries of live objects (TsDevice::live, TsClient::communicators).
// Events guard their last record with their own mutex (taken before the
// scheduler mutex), executables their kernel map, devices their memory
// accounting (memory_mu), the client its host memory (host_mu, taken after
// the scheduler mutex when a capture notes the host ranges a copy uses;
// never held across a long call such as mlock).
//
// Ownership: every object an entry point creates (buffer, stream, event,
// executable, graph, graph exec; communicator on the client) is registered
// in its device's (client's) registry when it is handed out and removed by
// its destroy_* function (below), which its Destroy/Free entry point calls.
// Client_Destroy frees what the caller left behind through the same
// destroy_* functions, once each (client.cpp says in which order), before
// the scheduler stops and the devices go.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "captured_refs.hpp"
#include "error.hpp"
#include "scheduler.hpp"
#include "signature.hpp"
#include "tessera/cpu_kernel.h"
#include "tessera/plugin.h"

namespace tessera::cpu {

enum : uint32_t {
  kMagicClient = 0x54434c49,  // "TCLI"
  kMagicDevice = 0x54444556,
  kMagicBuffer = 0x54425546,
  kMagicStream = 0x54535452,
  kMagicEvent = 0x54455654,
  kMagicGraph = 0x54475250,
  kMagicGraphExec = 0x54474558,
  kMagicExecutable = 0x54455845,
  kMagicKernel = 0x544b524e,
  kMagicCommunicator = 0x54434f4d,
  kMagicDead = 0xdeadbeef,
};

template <class T>
bool valid(const T* p) {
  return p != nullptr && p->magic == T::kMagic;
}

template <class T>
TsError* check_handle(const T* p, const char* entry, const char* what) {
  return plugin_support::check_handle("cpu", p, entry, what);
}

#define TS_CPU_CHECK_HANDLE(p, entry, what)                          \
  do {                                                               \
    if (TsError* e_ = ::tessera::cpu::check_handle(p, entry, what)) \
      return e_;                                                     \
  } while (0)

// The objects of one device the caller holds: registered by the entry point
// that creates one, removed by its destroy_* function (guarded by the
// scheduler mutex).  Client_Destroy frees what is still here.  The default
// stream is not listed (the device owns it).
struct LiveObjects {
  std::unordered_set<TsBuffer*> buffers;
  std::unordered_set<TsStream*> streams;
  std::unordered_set<TsEvent*> events;
  std::unordered_set<TsExecutable*> executables;
  std::unordered_set<TsGraph*> graphs;
  std::unordered_set<TsGraphExec*> graph_execs;
};

}  // namespace tessera::cpu

struct TsClient {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicClient;
  uint32_t magic = kMagic;
  std::unique_ptr<tessera::cpu::Scheduler> scheduler;
  std::vector<std::unique_ptr<TsDevice>> devices;
  std::vector<TsDevice*> device_list;  // what Client_GetDevices returns
  std::string cpu_model;
  uint64_t physical_memory = 0;
  // Every device's buffers come from the one host memory: their sum is
  // bounded by it (a device alone was: 4 devices granted 4 times the RAM).
  // Guarded by memory_mu (taken after a device's memory_mu).
  std::mutex memory_mu;
  uint64_t bytes_in_use = 0;
  // Bound on waits for other processes (communicators across processes).
  double process_timeout_s = 600;
  // Host_Allocate'd blocks and Host_Register'ed ranges, by start.  `life`
  // expires when the range is freed or unregistered: a graph that copies
  // to or from it notes it (CapturedRefs) and refuses to replay after.
  struct HostRange {
    uint64_t size = 0;
    std::shared_ptr<const void> life = std::make_shared<int>(0);
  };
  std::mutex host_mu;
  std::map<void*, HostRange> host_allocs;
  std::map<void*, HostRange> host_registered;
  // Communicators not destroyed yet (Client_Destroy frees them); guarded by
  // the scheduler mutex.
  std::unordered_set<TsCommunicator*> communicators;
  ~TsClient();
};

struct TsDevice {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicDevice;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  uint32_t ordinal = 0;
  TsStream* default_stream = nullptr;  // owned
  // The objects of this device the caller has not destroyed; guarded by the
  // scheduler mutex (see the file comment).
  tessera::cpu::LiveObjects live;
  // Every stream of this device (default, user, graph lanes); guarded by the
  // scheduler mutex.  Destroyed streams are pruned once idle.
  std::vector<std::shared_ptr<tessera::cpu::StreamState>> streams;
  tessera::cpu::Scheduler& sched() { return *client->scheduler; }
  // What Buffer_Allocate granted and Buffer_Free has not returned, checked
  // against the device's total_memory so an allocation past it is an
  // out-of-memory error, not a grant the machine cannot back (memory.cpp).
  std::mutex memory_mu;
  uint64_t bytes_in_use = 0;   // guarded by memory_mu
  uint64_t buffers_in_use = 0; // guarded by memory_mu
};

struct TsStream {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicStream;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::shared_ptr<tessera::cpu::StreamState> state;
};

struct TsBuffer {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicBuffer;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  TsBufferKind kind = TS_BUFFER_DEVICE;
  uint64_t size = 0;
  uint8_t* data = nullptr;   // aligned start, what callers see
  void* base = nullptr;      // what to free
  uint64_t mapped = 0;       // mmap length, 0 for aligned_alloc
  bool locked = false;       // mlock'ed (pinned)
  bool accounted = false;    // counted in device->bytes_in_use
  bool imported = false;     // Buffer_Import: the owner frees the memory
  // Expires when the buffer is freed: graphs that captured it check it.
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
  std::mutex advice_mu;
  std::vector<std::pair<TsAdvice, TsDevice*>> advice;  // managed only
};

// Where one record of an event lives: a marker on a stream's timeline.
struct EventRecord {
  std::shared_ptr<tessera::cpu::StreamState> stream;
  uint64_t seq = 0;
  std::atomic<int64_t> timestamp_ns{0};  // steady_clock, set when the marker runs
};

struct TsEvent {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicEvent;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  uint32_t flags = 0;
  std::mutex mu;
  std::shared_ptr<EventRecord> record;  // last record, NULL if never recorded
  // Last record made while its stream was capturing (graph.cpp).
  std::shared_ptr<tessera::cpu::CaptureSession> capture;
  std::vector<int64_t> capture_nodes;  // the capturing stream's frontier then
};

struct TsKernel {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicKernel;
  uint32_t magic = kMagic;
  TsExecutable* executable = nullptr;
  std::string name;
  TsCpuKernelFn fn = nullptr;
  // From tessera_signature_<name> when the executable exports one (what the
  // code generator emits); without it launches are not checked.
  bool has_signature = false;
  tessera::cpu::KernelSignature signature;
};

struct TsExecutable {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicExecutable;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  void* handle = nullptr;  // dlopen
  // memfd of an in-memory image, kept open while loaded: glibc matches
  // already-loaded objects by path, so "/proc/self/fd/N" must stay unique.
  int memfd = -1;
  std::string path;        // for messages
  // Expires when the executable is unloaded: graphs that captured a launch
  // of one of its kernels check it.
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<TsKernel>> kernels;
};

namespace tessera::cpu {

// The objects an operation uses, for a graph that captures it (graphs keep
// none of them alive and refuse to replay once one is gone).  Only read when
// the stream is capturing.
struct OpUses {
  const TsKernel* kernel = nullptr;   // a launch: its executable, and
  const TsKernelArg* args = nullptr;  // its buffer arguments
  size_t num_args = 0;
  const TsBuffer* buffers[2] = {nullptr, nullptr};  // a copy's or memset's
  const char* op = "";                              // "copy", "memset"
  // A copy's host memory (NULL: none): its pinned or registered range, if
  // any, is noted like a buffer.
  const void* host = nullptr;
  bool host_is_source = false;
};

// ---- shared helpers (stream.cpp)
// Submits `t` to `stream` with the default-stream rules and pending waits
// applied, or records its op as a graph node when the stream is capturing.
// Takes ownership of `t`.  `share` builds the shared op for a graph; `uses`
// (may be NULL) says which objects the node uses.  `completion_ns` (may be
// NULL; refused while capturing): the caller's memory that gets the task's
// completion time (TsKernel_Launch_Args.completion_ns).
TsError* submit_task(TsStream* stream, Task* t, std::shared_ptr<Op> (*share)(Task*),
                     const OpUses* uses = nullptr, uint64_t* completion_ns = nullptr);
template <class OpT>
std::shared_ptr<Op> share_owned_op(Task* t) {
  return std::make_shared<OpT>(std::move(static_cast<OwnedTask<OpT>*>(t)->op_storage));
}
template <class OpT>
TsError* submit_op(TsStream* stream, OpT&& op, const OpUses* uses = nullptr,
                   uint64_t* completion_ns = nullptr) {
  return submit_task(stream, make_owned_task(std::move(op)), &share_owned_op<OpT>, uses,
                     completion_ns);
}
// Adds to `deps` the implicit default-stream dependencies of work submitted
// to `s` now (mutex held).
void implicit_deps_locked(TsDevice* dev, StreamState* s, DepList& deps);
// Queues `t` on `s` with implicit deps and pending waits (mutex held).
void enqueue_locked(TsDevice* dev, const std::shared_ptr<StreamState>& s, Task* t);
// Waits for everything queued so far on every stream of `dev`.
void device_synchronize(TsDevice* dev);
// Synchronous op: run on the device's default stream and wait.
template <class OpT>
TsError* run_sync(TsDevice* dev, OpT&& op) {
  auto& sched = dev->sched();
  auto st = dev->default_stream->state;
  Task* t = make_owned_task(std::move(op));
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lk(sched.mutex());
    enqueue_locked(dev, st, t);
    seq = t->seq;
  }
  sched.wait(*st, seq);
  return nullptr;
}

// ---- memory.cpp
// Resolves a memory ref to a host address, checking `size` bytes fit.
TsError* resolve_ref(const TsMemoryRef& ref, uint64_t size, const char* entry,
                     const char* what, uint8_t** out);
uint64_t physical_memory_bytes();

// ---- capture (graph.cpp); mutex held
bool capturing_locked(const StreamState& s);
void capture_node_locked(StreamState& s, std::shared_ptr<Op> op, const OpUses* uses);
// Ends the capture `s` takes part in (every member stream is ordinary
// again), producing no graph; nothing if `s` is not capturing.
void abandon_capture_locked(StreamState& s);

// ---- releasing objects: what each Destroy/Free entry point does after
// checking its handle, and what Client_Destroy does for the objects the
// caller left behind.  Each unregisters the object from its device's
// (client's) registry, frees what it holds and deletes it; call it once per
// object, without the scheduler mutex held.
// memory.cpp: waits for the device first (never frees under running work)
// and returns the bytes to the device's accounting.
void destroy_buffer(TsBuffer* b);
// stream.cpp: queued work still runs (the scheduler keeps the state until it
// completes).  Not the default stream.  A capturing stream is refused (an
// error, the stream stays) unless `abandon_capture`, which ends the capture
// without a graph (Client_Destroy).
TsError* destroy_stream(TsStream* s, bool abandon_capture);
// event.cpp: a pending marker owns its record, so the event goes at once.
void destroy_event(TsEvent* ev);
// executable.cpp: waits for the device first (never unloads under running work).
void destroy_executable(TsExecutable* exe);
// graph.cpp: an exec waits for its launches first; a graph holds no work.
void destroy_graph(TsGraph* g);
void destroy_graph_exec(TsGraphExec* x);
// collectives.cpp: queued parts own their call; nothing to wait for.
void destroy_communicator(TsCommunicator* c);
// stream.cpp: waits for everything queued on `s` so far; refused (an error
// naming `entry`) while `s` captures.
TsError* synchronize_stream(TsStream* s, const char* entry);

// ---- client.cpp: what Client_Create takes (Plugin_GetInfo lists it)
extern const TsOptionInfo kClientOptions[];
extern const size_t kNumClientOptions;

// ---- entry points (one TsError* Name(TsName_Args*) per table slot)
TS_PLUGIN_DECLARE_ENTRIES()
TsError* Stream_WriteTimestamp(TsStream_WriteTimestamp_Args* args) noexcept;  // MINOR 3
TsError* Communicator_CreateUniqueId(TsCommunicator_CreateUniqueId_Args* args) noexcept;  // MINOR 4
TsError* Buffer_GetDeviceAddress(TsBuffer_GetDeviceAddress_Args* args) noexcept;  // MINOR 6 (memory.cpp)
TsError* Buffer_Import(TsBuffer_Import_Args* args) noexcept;  // MINOR 6 (memory.cpp)

}  // namespace tessera::cpu

namespace tessera::cpu {
// ---- more capture hooks (graph.cpp); scheduler mutex held
void capture_record_event_locked(StreamState& s, TsEvent* ev);
TsError* capture_wait_event_locked(TsStream* stream, const std::shared_ptr<CaptureSession>& session,
                                   const std::vector<int64_t>& nodes);
// True while the session has not ended.
bool capture_session_open_locked(const CaptureSession& session);
}  // namespace tessera::cpu
