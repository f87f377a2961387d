// Objects behind the opaque handles of the CUDA plugin, and the helpers its
// files share.  Every handle starts with a magic word so a destroyed or
// foreign handle is reported as TS_ERROR_INVALID_HANDLE instead of used.
//
// Contexts: each device uses its primary context (cuDevicePrimaryCtxRetain),
// made current on the calling thread (bind()) by every entry point before it
// calls the driver on that device: callers may use any thread.
//
// Locking: TsDevice::mu guards the device's list of live streams.
// TsClient::capture_mu guards all capture bookkeeping (which stream captures
// into which session, the capture a recorded event belongs to, the
// per-device capture counts) and the pinned host map.  The driver calls
// themselves need no plugin lock (the driver API is thread-safe); a
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
#include "event_timestamps.hpp"
#include "cubin.hpp"
#include "cuda_symbols.hpp"
#include "error.hpp"
#include "live_set.hpp"
#include "nccl_library.hpp"
#include "tessera/plugin.h"

namespace tessera::cuda {

enum : uint32_t {
  kMagicClient = 0x43434c49,
  kMagicDevice = 0x43444556,
  kMagicBuffer = 0x43425546,
  kMagicStream = 0x43535452,
  kMagicEvent = 0x43455654,
  kMagicGraph = 0x43475250,
  kMagicGraphExec = 0x43474558,
  kMagicExecutable = 0x43455845,
  kMagicKernel = 0x434b524e,
  kMagicCommunicator = 0x43434f4d,
  kMagicDead = 0xdeadbeef,
};

// The oldest driver accepted (cuGraphGetEdges_v2 and friends): CUDA 12.3.
inline constexpr int kMinDriverVersion = 12030;

template <class T>
TsError* check_handle(const T* p, const char* entry, const char* what) {
  return plugin_support::check_handle("cuda", p, entry, what);
}

#define TS_CU_CHECK_HANDLE(p, entry, what)                            \
  do {                                                                \
    if (TsError* e_ = ::tessera::cuda::check_handle(p, entry, what)) \
      return e_;                                                      \
  } while (0)
#define TS_CU_RETURN_IF_ERROR(expr)      \
  do {                                   \
    if (TsError* e_ = (expr)) return e_; \
  } while (0)

// One capture: begun on `origin`, joined by the streams that waited on an
// event recorded in it.  Ended (and its streams released) by EndCapture on
// the origin, whether CUDA accepted the graph or not.
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
  using Event = CUevent;
  using Stream = CUstream;
  const TsDevice* dev = nullptr;
  uint64_t now_ns() const { return plugin_support::steady_clock_ns(); }
  TsError* create_event(CUevent* e, const char* what) const;
  void destroy_event(CUevent e) const;
  TsError* record(CUevent e, CUstream s, const char* what) const;
  plugin_support::EventState query(CUevent e, TsError** error) const;
  TsError* synchronize(CUevent e, const char* what) const;
  bool elapsed_ms(CUevent from, CUevent to, float* ms) const;
  TsError* create_clock_stream(CUstream* s) const;
  void destroy_stream(CUstream s) const;
};
using Timestamps = plugin_support::EventTimestamps<ClockDriver>;

// Frees an error the plugin does not hand on.
inline void destroy_error(TsError* e) {
  TsError_Destroy_Args a{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  plugin_support::Error_Destroy(&a);
}

}  // namespace tessera::cuda

struct TsClient {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicClient;
  uint32_t magic = kMagic;
  tessera::cuda::CudaFns fn;
  int driver_version = 0;  // cuDriverGetVersion: 13000 = CUDA 13.0
  std::string driver_text; // "NVIDIA 580.65.06" (from /proc), or ""
  std::vector<std::unique_ptr<TsDevice>> devices;
  std::vector<TsDevice*> device_list;  // what Client_GetDevices returns
  std::mutex capture_mu;  // see the file comment
  std::atomic<int> active_captures{0};  // sessions not yet ended (fast path)
  // Pinned host memory this client handed out or registered: start -> size.
  std::map<uintptr_t, uint64_t> host_allocated, host_registered;
  // Communicators not yet destroyed (Client_Destroy frees them).
  tessera::plugin_support::LiveSet<TsCommunicator> live_communicators;
  // NCCL (libnccl.so.2 by default, the nccl_library option), opened by
  // Client_Create (collectives.cpp uses it).
  tessera::plugin_support::NcclLoader nccl;
  ~TsClient();
};

struct TsDevice {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicDevice;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  const tessera::cuda::CudaFns* fn = nullptr;  // the client's
  uint32_t ordinal = 0;
  CUdevice cu = 0;
  CUcontext ctx = nullptr;  // primary context, retained
  int cc_major = 0, cc_minor = 0;
  // Limits read once at creation.
  int max_threads_per_block = 0;
  int max_block[3] = {0, 0, 0};
  int max_grid[3] = {0, 0, 0};
  uint64_t shared_per_block = 0;        // default limit (48 KiB)
  uint64_t shared_per_block_optin = 0;  // with the function attribute set
  int priority_least = 0, priority_greatest = 0;
  bool managed = false;             // CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
  bool concurrent_managed = false;  // ..._CONCURRENT_MANAGED_ACCESS: prefetch works
  // CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: the device's atomics
  // on host memory are atomic with the host's (NVLink-C2C, PCIe atomics).
  // Without it a system-scope atom.sys on pinned memory races with the host.
  bool host_native_atomics = false;
  std::vector<uint8_t> peer_access;  // by ordinal: 1 when peer access is enabled
  TsDeviceProperties ts{};           // filled once at creation
  TsStream* default_stream = nullptr;  // owned; CU_STREAM_LEGACY

  std::mutex mu;                       // guards `streams`
  std::set<TsStream*> streams;         // live created streams
  // The other objects created on the device and not yet destroyed, freed
  // by Client_Destroy (each set has its own lock).
  tessera::plugin_support::LiveSet<TsBuffer> live_buffers;
  tessera::plugin_support::LiveSet<TsEvent> live_events;
  tessera::plugin_support::LiveSet<TsExecutable> live_executables;
  tessera::plugin_support::LiveSet<TsGraph> live_graphs;
  tessera::plugin_support::LiveSet<TsGraphExec> live_graph_execs;
  // Streams of this device that capture now (guarded by client->capture_mu;
  // read without it as a hint).  A blocking one forbids the legacy stream.
  std::atomic<int> capturing{0};
  std::atomic<int> capturing_blocking{0};
  // Stream_WriteTimestamp points (timestamp.cpp); made with the device.
  std::unique_ptr<tessera::cuda::Timestamps> stamps;
  ~TsDevice();
};

struct TsStream {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicStream;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  CUstream stream = nullptr;  // CU_STREAM_LEGACY for the default stream
  bool is_default = false;
  bool non_blocking = false;
  int cuda_priority = 0;
  // The capture this stream records into (guarded by client->capture_mu).
  std::shared_ptr<tessera::cuda::CaptureSession> capture;
  tessera::cuda::Timestamps::Queue stamps;  // Stream_WriteTimestamp points
};

struct TsBuffer {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicBuffer;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  TsBufferKind kind = TS_BUFFER_DEVICE;
  uint64_t size = 0;
  CUdeviceptr base = 0;     // what was allocated (freed with it)
  CUdeviceptr dptr = 0;     // base rounded up to the requested alignment
  void* host_base = nullptr;  // cuMemHostAlloc'd block (HOST_PINNED)
  void* host = nullptr;       // host address of dptr (pinned, managed)
  bool imported = false;      // Buffer_Import: the owner frees the memory
  // Expires when the buffer is freed: graphs that captured it check it.
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
};

struct TsEvent {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicEvent;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  CUevent event = nullptr;
  uint32_t flags = 0;
  // Guarded by client->capture_mu: recorded at all; the capture its last
  // record was made in (NULL: an eager record).
  bool recorded = false;
  bool recorded_eagerly = false;  // some eager record happened (ElapsedTime)
  std::shared_ptr<tessera::cuda::CaptureSession> capture;
};

struct TsGraph {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicGraph;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  CUgraph graph = nullptr;
  std::shared_ptr<const tessera::plugin_support::CapturedRefs> refs;
};

struct TsGraphExec {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicGraphExec;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  CUgraphExec exec = nullptr;
  std::shared_ptr<const tessera::plugin_support::CapturedRefs> refs;
};

struct TsCommunicator {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicCommunicator;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  std::vector<TsDevice*> devices;  // rank -> device
  // NCCL or RCCL communicators (none: every call staged through the host).
  tessera::plugin_support::NcclCommunicator nccl;
};

struct TsKernel {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicKernel;
  uint32_t magic = kMagic;
  TsExecutable* executable = nullptr;
  std::string name;
  CUfunction function = nullptr;
  int max_threads = 0;         // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  uint64_t static_shared = 0;  // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  // Parameter layout (cuFuncGetParamInfo, CUDA 12.4+): sizes in order.
  bool params_known = false;
  std::vector<uint32_t> param_sizes;
  // TMA tensor maps the kernel takes after the launch's arguments, encoded
  // at each launch from the buffers it names (tensor_map.hpp).
  std::vector<tessera::cuda::TensorMapSpec> tensor_maps;
  // The dynamic shared memory the function is currently allowed
  // (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), raised on demand.
  std::mutex mu;
  uint64_t dynamic_allowed = 0;
};

struct TsExecutable {
  static constexpr uint32_t kMagic = tessera::cuda::kMagicExecutable;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::string format;
  std::string origin;  // path or "<memory>" for messages
  std::vector<CUmodule> modules;        // one, or one per archive entry
  std::map<std::string, size_t> entry;  // archive: kernel name -> module index
  std::map<std::string, std::vector<tessera::cuda::TensorMapSpec>> tensor_maps;  // archive: by kernel
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<TsKernel>> kernels;
};

namespace tessera::cuda {

// The error of a failed driver call on `dev` (NULL: no device at hand).
inline TsError* dev_error(const TsDevice* dev, CUresult r, const std::string& call) noexcept {
  if (!dev) return cu_error(nullptr, r, call, 0, 0, 0);
  return cu_error(dev->fn, r, call, dev->client->driver_version, dev->cc_major, dev->cc_minor);
}

// Returns from the enclosing function when a driver call on `dev` fails.
// `what` (a std::string or const char*) is evaluated only on failure.
#define TS_CU_CALL(dev, expr, what)                                        \
  do {                                                                     \
    CUresult r_ = (expr);                                                  \
    if (r_ != CUDA_SUCCESS) return ::tessera::cuda::dev_error(dev, r_, what); \
  } while (0)

// Makes the device's primary context current on this thread.
inline TsError* bind(const TsDevice* dev) noexcept {
  CUresult r = dev->fn->cuCtxSetCurrent(dev->ctx);
  return r == CUDA_SUCCESS ? nullptr : dev_error(dev, r, "cuCtxSetCurrent");
}

// ---- device.cpp
TsError* create_device(TsClient* client, int ordinal, std::unique_ptr<TsDevice>* out);
void fill_properties(TsDevice* dev);
// Waits for all work of the device (Buffer_Free, Executable_Destroy,
// Device_Synchronize): cuCtxSynchronize, or, while a stream of the device
// captures (CUDA forbids synchronizing it), every other stream.
TsError* synchronize_device(TsDevice* dev);

// ---- stream.cpp
// FAILED_PRECONDITION when `s` captures and `what` cannot run in a capture.
TsError* refuse_if_capturing(TsStream* s, const char* what);
// FAILED_PRECONDITION when a blocking stream of `dev` captures: work on
// CUDA's legacy default stream (synchronous copies) would invalidate it.
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
// `synchronized`: the caller waited for all of that work (cuStreamSynchronize,
// cuCtxSynchronize), so no point is queried.
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

// ---- memory.cpp
// The device address of a host pointer in pinned memory (UVA: the same
// address on 64-bit Linux), for copies.
inline CUdeviceptr host_address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// ---- client.cpp: what Client_Create takes (Plugin_GetInfo lists it)
extern const TsOptionInfo kClientOptions[];
extern const size_t kNumClientOptions;

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

}  // namespace tessera::cuda
