// Objects behind the opaque handles of the HIP plugin, and the helpers its
// files share.  Every handle starts with a magic word so a destroyed or
// foreign handle is reported as TS_ERROR_INVALID_HANDLE instead of used.
//
// Devices: the HIP runtime keeps a current device per thread (hipSetDevice).
// Every entry point makes its device current on the calling thread
// (bind()) before it calls the runtime for that device: callers may use any
// thread.
//
// Locking: TsDevice::mu guards the device's list of live streams.
// TsClient::capture_mu guards all capture bookkeeping (which stream captures
// into which session, the capture a recorded event belongs to, the
// per-device capture counts) and the pinned host maps.  The runtime calls
// themselves need no plugin lock (the HIP runtime is thread-safe); a
// capture's bookkeeping is updated under capture_mu around them.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "captured_refs.hpp"
#include "code_object.hpp"
#include "error.hpp"
#include "event_timestamps.hpp"
#include "live_set.hpp"
#include "nccl_library.hpp"
#include "hip_symbols.hpp"
#include "tessera/plugin.h"

namespace tessera::hip {

enum : uint32_t {
  kMagicClient = 0x48434c49,
  kMagicDevice = 0x48444556,
  kMagicBuffer = 0x48425546,
  kMagicStream = 0x48535452,
  kMagicEvent = 0x48455654,
  kMagicGraph = 0x48475250,
  kMagicGraphExec = 0x48474558,
  kMagicExecutable = 0x48455845,
  kMagicKernel = 0x484b524e,
  kMagicCommunicator = 0x48434f4d,
  kMagicDead = 0xdeadbeef,
};

// At most this many devices are taken from hipGetDeviceCount.
inline constexpr int kMaxDevices = 1024;

template <class T>
TsError* check_handle(const T* p, const char* entry, const char* what) {
  return plugin_support::check_handle("hip", p, entry, what);
}

#define TS_HIP_CHECK_HANDLE(p, entry, what)                          \
  do {                                                               \
    if (TsError* e_ = ::tessera::hip::check_handle(p, entry, what)) \
      return e_;                                                     \
  } while (0)
#define TS_HIP_RETURN_IF_ERROR(expr)     \
  do {                                   \
    if (TsError* e_ = (expr)) return e_; \
  } while (0)

// One capture: begun on `origin`, joined by the streams that waited on an
// event recorded in it.  Ended (and its streams released) by EndCapture on
// the origin, whether HIP accepted the graph or not.
struct CaptureSession {
  TsStream* origin = nullptr;
  std::vector<TsStream*> members;  // origin included
  plugin_support::CapturedRefs refs;
  bool ended = false;
};

// Stream_WriteTimestamp (timestamp.cpp): timing events on the device's
// event clock (plugins/common/event_timestamps.hpp), driven by these calls.
// The device must be current on the calling thread.
struct ClockDriver {
  using Event = hipEvent_t;
  using Stream = hipStream_t;
  const TsDevice* dev = nullptr;
  uint64_t now_ns() const { return plugin_support::steady_clock_ns(); }
  TsError* create_event(hipEvent_t* e, const char* what) const;
  void destroy_event(hipEvent_t e) const;
  TsError* record(hipEvent_t e, hipStream_t s, const char* what) const;
  plugin_support::EventState query(hipEvent_t e, TsError** error) const;
  TsError* synchronize(hipEvent_t e, const char* what) const;
  bool elapsed_ms(hipEvent_t from, hipEvent_t to, float* ms) const;
  TsError* create_clock_stream(hipStream_t* s) const;
  void destroy_stream(hipStream_t s) const;
};
using Timestamps = plugin_support::EventTimestamps<ClockDriver>;

// Frees an error the plugin does not hand on.
inline void destroy_error(TsError* e) {
  TsError_Destroy_Args a{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  plugin_support::Error_Destroy(&a);
}

}  // namespace tessera::hip

struct TsClient {
  static constexpr uint32_t kMagic = tessera::hip::kMagicClient;
  uint32_t magic = kMagic;
  tessera::hip::HipFns fn;
  int runtime_version = 0;  // hipRuntimeGetVersion: 50221153 = 5.2.21153
  std::string driver_text;  // "amdgpu 6.3.6" (from /sys), or ""
  std::vector<std::unique_ptr<TsDevice>> devices;
  std::vector<TsDevice*> device_list;  // what Client_GetDevices returns
  std::mutex capture_mu;  // see the file comment
  std::atomic<int> active_captures{0};  // sessions not yet ended (fast path)
  // Pinned host memory this client handed out or registered: start -> size.
  std::map<uintptr_t, uint64_t> host_allocated, host_registered;
  // Communicators not yet destroyed (Client_Destroy frees them).
  tessera::plugin_support::LiveSet<TsCommunicator> live_communicators;
  // RCCL (librccl.so.1 by default, the rccl_library option), opened by
  // Client_Create (collectives.cpp uses it).
  tessera::plugin_support::NcclLoader nccl;
  ~TsClient();
};

struct TsDevice {
  static constexpr uint32_t kMagic = tessera::hip::kMagicDevice;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  const tessera::hip::HipFns* fn = nullptr;  // the client's
  int ordinal = 0;
  std::string arch;  // gcnArchName: "gfx90a:sramecc+:xnack-"
  // Limits read once at creation.
  int max_threads_per_block = 0;
  int max_block[3] = {0, 0, 0};
  int max_grid[3] = {0, 0, 0};
  uint64_t shared_per_block = 0;  // LDS per workgroup (64 KiB on CDNA2/3)
  int warp_size = 64;
  int priority_least = 0, priority_greatest = 0;
  bool managed = false;             // hipDeviceAttributeManagedMemory
  bool concurrent_managed = false;  // ..ConcurrentManagedAccess: prefetch works
  bool host_native_atomics = false;  // ..HostNativeAtomicSupported
  std::vector<uint8_t> peer_access;  // by ordinal: 1 when peer access is enabled
  TsDeviceProperties ts{};           // filled once at creation
  TsStream* default_stream = nullptr;  // owned; the NULL stream

  std::mutex mu;                  // guards `streams`
  std::set<TsStream*> streams;    // live created streams
  // The other objects created on the device and not yet destroyed, freed
  // by Client_Destroy (each set has its own lock).
  tessera::plugin_support::LiveSet<TsBuffer> live_buffers;
  tessera::plugin_support::LiveSet<TsEvent> live_events;
  tessera::plugin_support::LiveSet<TsExecutable> live_executables;
  tessera::plugin_support::LiveSet<TsGraph> live_graphs;
  tessera::plugin_support::LiveSet<TsGraphExec> live_graph_execs;
  // Streams of this device that capture now (guarded by client->capture_mu;
  // read without it as a hint).  A blocking one forbids the NULL stream.
  std::atomic<int> capturing{0};
  std::atomic<int> capturing_blocking{0};
  // Stream_WriteTimestamp points (timestamp.cpp); made with the device.
  std::unique_ptr<tessera::hip::Timestamps> stamps;
  ~TsDevice();
};

struct TsStream {
  static constexpr uint32_t kMagic = tessera::hip::kMagicStream;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  hipStream_t stream = nullptr;  // NULL for the default stream
  bool is_default = false;
  bool non_blocking = false;
  int hip_priority = 0;
  // The capture this stream records into (guarded by client->capture_mu).
  std::shared_ptr<tessera::hip::CaptureSession> capture;
  tessera::hip::Timestamps::Queue stamps;  // Stream_WriteTimestamp points
};

struct TsBuffer {
  static constexpr uint32_t kMagic = tessera::hip::kMagicBuffer;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  TsBufferKind kind = TS_BUFFER_DEVICE;
  uint64_t size = 0;
  void* base = nullptr;       // what was allocated (freed with it)
  uint8_t* dptr = nullptr;    // device address: base rounded up to the alignment
  void* host = nullptr;       // host address of dptr (pinned, managed)
  bool imported = false;      // Buffer_Import: the owner frees the memory
  // Expires when the buffer is freed: graphs that captured it check it.
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
};

struct TsEvent {
  static constexpr uint32_t kMagic = tessera::hip::kMagicEvent;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  hipEvent_t event = nullptr;
  uint32_t flags = 0;
  // Guarded by client->capture_mu: recorded at all; the capture its last
  // record was made in (NULL: an eager record).
  bool recorded = false;
  std::shared_ptr<tessera::hip::CaptureSession> capture;
};

struct TsGraph {
  static constexpr uint32_t kMagic = tessera::hip::kMagicGraph;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  hipGraph_t graph = nullptr;
  std::shared_ptr<const tessera::plugin_support::CapturedRefs> refs;
};

struct TsGraphExec {
  static constexpr uint32_t kMagic = tessera::hip::kMagicGraphExec;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  hipGraphExec_t exec = nullptr;
  std::shared_ptr<const tessera::plugin_support::CapturedRefs> refs;
};

struct TsCommunicator {
  static constexpr uint32_t kMagic = tessera::hip::kMagicCommunicator;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  std::vector<TsDevice*> devices;  // rank -> device
  // NCCL or RCCL communicators (none: every call staged through the host).
  tessera::plugin_support::NcclCommunicator nccl;
};

struct TsKernel {
  static constexpr uint32_t kMagic = tessera::hip::kMagicKernel;
  uint32_t magic = kMagic;
  TsExecutable* executable = nullptr;
  std::string name;
  hipFunction_t function = nullptr;
  int max_threads = 0;         // HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  uint64_t static_shared = 0;  // HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (LDS)
  // Its arguments as the code object records them (owned by the
  // executable's image); null when the object has no metadata note.
  const tessera::hip::KernelMetadata* meta = nullptr;
};

struct TsExecutable {
  static constexpr uint32_t kMagic = tessera::hip::kMagicExecutable;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::string format;
  std::string origin;  // path or "<memory>" for messages
  // The checked images, kept for the executable's life (hipModuleLoadData
  // takes no size and no ownership).
  std::vector<tessera::hip::PreparedImage> images;
  std::vector<hipModule_t> modules;     // one per image
  std::map<std::string, size_t> entry;  // archive: kernel name -> module index
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<TsKernel>> kernels;
};

namespace tessera::hip {

// The error of a failed runtime call on `dev` (NULL: no device at hand).
inline TsError* dev_error(const TsDevice* dev, hipError_t r, const std::string& call) noexcept {
  if (!dev) return hip_error(nullptr, r, call);
  return hip_error(dev->fn, r, call, dev->arch);
}

// Returns from the enclosing function when a runtime call on `dev` fails.
// `what` (a std::string or const char*) is evaluated only on failure.
#define TS_HIP_CALL(dev, expr, what)                                        \
  do {                                                                      \
    hipError_t r_ = (expr);                                                 \
    if (r_ != hipSuccess) return ::tessera::hip::dev_error(dev, r_, what);  \
  } while (0)

// Makes `dev` the calling thread's current HIP device.
inline TsError* bind(const TsDevice* dev) noexcept {
  hipError_t r = dev->fn->hipSetDevice(dev->ordinal);
  return r == hipSuccess ? nullptr
                         : dev_error(dev, r, strprintf("hipSetDevice(%d)", dev->ordinal));
}

// ---- device.cpp
TsError* create_device(TsClient* client, int ordinal, std::unique_ptr<TsDevice>* out);
void fill_properties(TsDevice* dev);
// Waits for all work of the device (Buffer_Free, Executable_Destroy,
// Device_Synchronize): hipDeviceSynchronize, or, while a stream of the
// device captures (HIP forbids synchronizing it), every other stream.
TsError* synchronize_device(TsDevice* dev);

// ---- stream.cpp
// FAILED_PRECONDITION when `s` captures and `what` cannot run in a capture.
TsError* refuse_if_capturing(TsStream* s, const char* what);
// FAILED_PRECONDITION when a blocking stream of `dev` captures: work on the
// device's NULL stream (synchronous copies) would invalidate it.
TsError* refuse_sync_while_capturing(TsDevice* dev, const char* what);

// ---- timestamp.cpp
// Records a point on `s` whose completion time goes to *out (the checks of
// Stream_WriteTimestamp done by the caller).
TsError* record_timestamp(TsStream* s, uint64_t* out);
// FAILED_PRECONDITION when `s` cannot take a timestamp now (capturing).
TsError* refuse_timestamp(TsStream* s, const char* what);
// Writes the times of the points of `s` (of every stream of `dev`) that
// have completed, in stream order.  Called wherever the ABI lets a caller
// observe completion: Stream_Synchronize, Stream_Query idle,
// Device_Synchronize, Event_Synchronize / Event_Query complete.
// `synchronized`: the caller waited for all of that work, so no point is
// queried.
void flush_timestamps(TsStream* s, bool synchronized);
void flush_device_timestamps(TsDevice* dev, bool synchronized);
// Stream_Destroy: the stream's points still pending move to the device.
void orphan_timestamps(TsStream* s);
// ~TsDevice: the spare events, the calibration and the orphans.
void release_device_timestamps(TsDevice* dev);

// ---- graph.cpp (capture bookkeeping)
// Notes that the operation just issued to `s` uses the object behind
// `token`, when `s` captures; describe() gives the text for the message.
template <class Describe>
void capture_note(TsStream* s, const std::weak_ptr<const void>& token, Describe&& describe);
// The session `s` records into, or NULL (takes capture_mu).
std::shared_ptr<CaptureSession> capture_of(TsStream* s);
std::string describe_buffer(const TsBuffer* b);

// ---- client.cpp: what Client_Create takes (Plugin_GetInfo lists it)
extern const TsOptionInfo kClientOptions[];
extern const size_t kNumClientOptions;
inline constexpr const char* kDefaultLibrary = "libamdhip64.so.5";

// ---- entry points (one TsError* Name(TsName_Args*) per table slot)
TS_PLUGIN_DECLARE_ENTRIES()
TsError* Stream_WriteTimestamp(TsStream_WriteTimestamp_Args* args) noexcept;  // MINOR 3
TsError* Buffer_GetDeviceAddress(TsBuffer_GetDeviceAddress_Args* args) noexcept;  // MINOR 6 (memory.cpp)
TsError* Buffer_Import(TsBuffer_Import_Args* args) noexcept;  // MINOR 6 (memory.cpp)

template <class Describe>
void capture_note(TsStream* s, const std::weak_ptr<const void>& token, Describe&& describe) {
  TsClient* c = s->device->client;
  if (c->active_captures.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lk(c->capture_mu);
  if (!s->capture) return;
  s->capture->refs.add(token, describe());
}

}  // namespace tessera::hip
