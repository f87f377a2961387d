// Objects behind the opaque handles of the Level Zero plugin, and the helpers
// its files share.  Every handle starts with a magic word so a destroyed or
// foreign handle is reported as TS_ERROR_INVALID_HANDLE instead of used.
//
// One client = one driver (the first with a GPU) and one ze_context_handle_t
// holding all its GPUs.  A stream is an immediate command list on the
// device's compute queue group (in order: ZE_COMMAND_QUEUE_FLAG_IN_ORDER, or
// a barrier before each command on drivers that predate the flag).
//
// ORDERING AND COMPLETION.  Level Zero reports completion only through
// events, so a stream keeps a sequence number per command (last_op) and
// *markers*: events from the device's pools signalled by a command (every
// kProgressEvery-th one) or by a barrier appended on demand (synchronize,
// query, record, a wait from another stream).  A marker covers every command
// up to its `upto`; seeing it signalled advances the stream's done_upto.
// Event slots are recycled only when nothing can still wait on them: a
// marker is reference-counted (TsEvent records, streams that appended a wait
// on it until that wait is known complete) and its slot is reset and reused
// once the last reference is gone and the driver reports it signalled.
//
// LOCKING.  TsDevice::mu guards everything appended to the device's command
// lists and the bookkeeping that goes with it (every stream's counters and
// markers, the stream set, retired streams, kernels' argument state: Level
// Zero forbids appending to one command list, or setting one kernel's
// arguments, from two threads at once).  It is never held while the host
// waits on the device.  EventAllocator::mu guards one pool set (taken under
// TsDevice::mu, never the other way).  TsEvent::mu guards an event's current
// record.  TsClient::host_mu guards the pinned-memory maps.  Lock order:
// staging_mu, then TsDevice::mu, then TsEvent::mu, then EventAllocator::mu.
// TsClient::host_mu may be taken under TsDevice::mu (a captured copy looks
// its host side up), never the other way.  A graph's launch_mu (graph.cpp)
// comes before TsDevice::mu.
//
// GRAPHS (graph.cpp).  A capture records into one regular command list; a
// launch replays it on the graph's own command queue, ordered with the
// stream by two events.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture_joins.hpp"
#include "captured_refs.hpp"
#include "error.hpp"
#include "live_set.hpp"
#include "spirv.hpp"
#include "tessera/plugin.h"
#include "ze_symbols.hpp"

namespace tessera::level_zero {

enum : uint32_t {
  kMagicClient = 0x5a434c49,
  kMagicDevice = 0x5a444556,
  kMagicBuffer = 0x5a425546,
  kMagicStream = 0x5a535452,
  kMagicEvent = 0x5a455654,
  kMagicExecutable = 0x5a455845,
  kMagicKernel = 0x5a4b524e,
  kMagicCommunicator = 0x5a434f4d,
  kMagicGraph = 0x5a475248,
  kMagicGraphExec = 0x5a475845,
  kMagicDead = 0xdeadbeef,
};

// Bounds on what the driver reports (it is not trusted to be sane).
inline constexpr uint32_t kMaxDrivers = 64;
inline constexpr uint32_t kMaxDevices = 256;
inline constexpr uint32_t kMaxQueueGroups = 64;
inline constexpr uint32_t kMaxMemoryProperties = TS_MAX_MEMORY_HEAPS;
inline constexpr size_t kMaxBuildLogBytes = 64 * 1024;
// Events per zeEventPoolCreate, and the most pools one allocator makes.
inline constexpr uint32_t kEventsPerPool = 256;
inline constexpr size_t kMaxEventPools = 4096;
// A command signals a marker every this many commands, so completion is
// seen (and event slots recycled) without an explicit synchronize.
inline constexpr uint32_t kProgressEvery = 16;

template <class T>
TsError* check_handle(const T* p, const char* entry, const char* what) {
  return plugin_support::check_handle("level_zero", p, entry, what);
}

#define TS_ZE_CHECK_HANDLE(p, entry, what)                                  \
  do {                                                                      \
    if (TsError* e_ = ::tessera::level_zero::check_handle(p, entry, what)) \
      return e_;                                                            \
  } while (0)
#define TS_ZE_RETURN_IF_ERROR(expr)      \
  do {                                   \
    if (TsError* e_ = (expr)) return e_; \
  } while (0)

// Frees an error the plugin does not hand on.
inline void destroy_error(TsError* e) {
  TsError_Destroy_Args a{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  plugin_support::Error_Destroy(&a);
}

struct CaptureSession;  // graph.cpp
struct GraphData;       // graph.cpp

// Pinned host memory the client handed out (Host_Allocate) or imported
// (Host_Register); `life` expires when it is freed or unregistered, so a
// graph that copies to or from it can refuse to replay.
struct HostRange {
  uint64_t size = 0;
  plugin_support::LifeToken life = plugin_support::make_life_token();
};

// ---- event.cpp: event slots
struct EventSlot {
  ze_event_handle_t event = nullptr;
};

// The events of one device and one kind (with kernel timestamps or
// without), from pools made on demand (HOST_VISIBLE, visible to every
// device of the context).  Shared by the device and by every marker, so a
// marker that outlives its client releases into a closed allocator safely.
class EventAllocator {
 public:
  EventAllocator(const ZeFns* fn, ze_driver_handle_t driver, ze_context_handle_t ctx,
                 bool timestamps)
      : fn_(fn), driver_(driver), ctx_(ctx), timestamps_(timestamps) {}
  // A reset slot; recycles retired slots that the driver reports signalled.
  TsError* Acquire(EventSlot** out);
  // `appended`: a command may signal it (it is reset when signalled);
  // otherwise it goes back at once.
  void Release(EventSlot* slot, bool appended);
  // Destroys every event and pool (Client_Destroy); later calls do nothing.
  void Close();
  bool timestamps() const { return timestamps_; }

 private:
  const ZeFns* fn_;
  ze_driver_handle_t driver_;
  ze_context_handle_t ctx_;
  const bool timestamps_;
  std::mutex mu_;
  bool closed_ = false;
  std::vector<ze_event_pool_handle_t> pools_;
  std::vector<std::unique_ptr<EventSlot>> slots_;
  std::vector<EventSlot*> free_, retired_;
};

// A point in one stream: signalled when every command up to `upto` is done.
struct Marker {
  std::shared_ptr<EventAllocator> alloc;
  EventSlot* slot = nullptr;
  const TsDevice* device = nullptr;  // whose list signals it
  uint64_t upto = 0;
  bool appended = false;  // a command that signals it was appended
  ze_event_handle_t event() const { return slot->event; }
  ~Marker() {
    if (alloc && slot) alloc->Release(slot, appended);
  }
};
using MarkerRef = std::shared_ptr<Marker>;

// A wait this stream appended (on another stream's marker) at command `seq`:
// the marker stays alive until the stream is known to be past `seq`.
struct HeldWait {
  uint64_t seq = 0;
  MarkerRef marker;
};

// A Stream_WriteTimestamp point (timestamp.cpp): the device writes its
// global timer into `slot` (host USM) once the stream's earlier commands
// completed; the plugin converts it into *out once the stream's done_upto
// reaches `seq`.
struct StampPoint {
  uint64_t seq = 0;
  uint64_t* slot = nullptr;
  uint64_t* out = nullptr;  // the caller's; written once with release
};

// A destroyed stream whose command list still has work: destroyed when
// `done` is signalled (reap_retired_locked), its points then written.
struct RetiredStream {
  ze_command_list_handle_t list = nullptr;
  MarkerRef done;
  std::deque<StampPoint> stamps;
  std::deque<HeldWait> held;
  bool non_blocking = false;
  bool seen_by_default = false;
};

}  // namespace tessera::level_zero

struct TsClient {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicClient;
  uint32_t magic = kMagic;
  tessera::level_zero::ZeFns fn;
  ze_driver_handle_t driver = nullptr;
  uint32_t api_version = 0;     // zeDriverGetApiVersion (ZE_MAKE_VERSION)
  uint32_t driver_version = 0;  // ze_driver_properties_t.driverVersion
  ze_context_handle_t context = nullptr;
  // Intel extensions, NULL when the driver lacks them.
  tessera::level_zero::ZexDriverImportExternalPointerFn import_pointer = nullptr;
  tessera::level_zero::ZexDriverReleaseImportedPointerFn release_pointer = nullptr;
  std::vector<std::unique_ptr<TsDevice>> devices;
  std::vector<TsDevice*> device_list;  // what Client_GetDevices returns
  std::mutex host_mu;                  // guards the two maps
  // Pinned host memory this client handed out or imported: start -> range.
  std::map<uintptr_t, tessera::level_zero::HostRange> host_allocated, host_registered;
  // Communicators not yet destroyed (Client_Destroy frees them).
  tessera::plugin_support::LiveSet<TsCommunicator> live_communicators;
  ~TsClient();
};

struct TsDevice {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicDevice;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  const tessera::level_zero::ZeFns* fn = nullptr;  // the client's
  uint32_t ordinal = 0;
  ze_device_handle_t ze = nullptr;
  ze_device_properties_t props{};
  ze_device_compute_properties_t compute{};
  ze_device_module_properties_t module{};
  ze_device_memory_access_properties_t access{};
  uint32_t fp32_atomics = 0;  // ze_float_atomic_ext_properties_t.fp32Flags (0: unknown)
  uint32_t queue_group = 0;   // the compute queue group's ordinal
  uint32_t queue_count = 1;   // queues in it; streams take them in turn
  std::atomic<uint32_t> next_queue{0};
  double ticks_per_second = 0;  // kernel and global timestamps
  uint32_t timestamp_bits = 64;  // valid bits of kernel timestamps
  uint32_t global_timestamp_bits = 64;  // ... of the global timer
  // Stream_WriteTimestamp (timestamp.cpp), guarded by mu: host USM pages
  // of slots the device writes its timer into, the free slots, and the
  // calibration (the timer read clock_ticks at host time clock_host_ns;
  // 0: none yet).
  std::vector<void*> stamp_pages;
  std::vector<uint64_t*> free_stamp_slots;
  uint64_t clock_ticks = 0, clock_host_ns = 0;
  std::vector<uint8_t> peer_access;  // by ordinal: zeDeviceCanAccessPeer
  TsDeviceProperties ts{};           // filled once at creation
  std::shared_ptr<tessera::level_zero::EventAllocator> events_timed, events_plain;
  TsStream* default_stream = nullptr;  // owned

  std::mutex mu;  // see the file comment
  std::set<TsStream*> streams;  // live created streams (not the default one)
  // The other objects created on the device and not yet destroyed, freed
  // by Client_Destroy (each set has its own lock).
  tessera::plugin_support::LiveSet<TsBuffer> live_buffers;
  tessera::plugin_support::LiveSet<TsEvent> live_events;
  tessera::plugin_support::LiveSet<TsExecutable> live_executables;
  tessera::plugin_support::LiveSet<TsGraph> live_graphs;
  tessera::plugin_support::LiveSet<TsGraphExec> live_graph_execs;
  std::vector<tessera::level_zero::RetiredStream> retired;

  // A host USM bounce buffer for copies of pageable host memory.
  std::mutex staging_mu;
  void* staging = nullptr;
  ~TsDevice();
};

struct TsStream {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicStream;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  ze_command_list_handle_t list = nullptr;
  bool is_default = false;
  bool non_blocking = false;
  bool in_order = true;  // the driver took ZE_COMMAND_QUEUE_FLAG_IN_ORDER
  ze_command_queue_priority_t priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  // Guarded by device->mu.
  uint64_t last_op = 0;    // commands appended (waits included)
  uint64_t last_work = 0;  // the last one that was not a wait
  uint64_t done_upto = 0;  // known complete
  uint32_t unmarked = 0;   // commands since the last marker
  tessera::level_zero::MarkerRef tail;  // the newest marker
  std::deque<tessera::level_zero::MarkerRef> progress;  // not yet seen signalled
  std::deque<tessera::level_zero::HeldWait> held;
  uint64_t seen_by_default = 0;  // last_work the default stream waited for
  uint64_t default_seen = 0;     // the default stream's last_work waited for
  std::deque<tessera::level_zero::StampPoint> stamps;  // not yet written
  // The capture this stream records into (graph.cpp), NULL when none:
  // begun on it, or joined by waiting on an event recorded in one.
  std::shared_ptr<tessera::level_zero::CaptureSession> capture;
};

struct TsBuffer {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicBuffer;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  TsBufferKind kind = TS_BUFFER_DEVICE;
  uint64_t size = 0;
  void* ptr = nullptr;   // the USM allocation (zeMemFree)
  void* host = nullptr;  // host-addressable (host and shared allocations)
  bool imported = false;  // Buffer_Import: the owner frees the memory
  // Expires when the buffer is freed: graphs that captured it check it.
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
};

struct TsEvent {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicEvent;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  uint32_t flags = 0;
  std::mutex mu;                          // guards `record` and the capture fields
  tessera::level_zero::MarkerRef record;  // the latest record outside a capture; NULL: never
  // The latest record made inside a capture (graph.cpp), and whether it came
  // after `record`: the node it follows, the stream, and what each member of
  // the capture had done by then.
  std::shared_ptr<tessera::level_zero::CaptureSession> capture;
  tessera::plugin_support::CaptureJoins<TsStream>::Point capture_point;
  bool last_is_capture = false;
};

struct TsCommunicator {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicCommunicator;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  std::vector<TsDevice*> devices;  // rank -> device
};

struct TsKernel {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicKernel;
  uint32_t magic = kMagic;
  TsExecutable* executable = nullptr;
  std::string name;
  ze_kernel_handle_t kernel = nullptr;
  ze_kernel_properties_t props{};
  tessera::level_zero::spirv::Kernel info;  // from the module
  TsDim3 group{0, 0, 0};  // last zeKernelSetGroupSize (device->mu)
};

struct TsExecutable {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicExecutable;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::string format;
  std::string origin;  // path or "<memory>" for messages
  std::vector<ze_module_handle_t> modules;                // one, or one per archive entry
  std::vector<tessera::level_zero::spirv::Module> infos;  // per module
  std::map<std::string, size_t> entry;  // archive: kernel name -> module index
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<TsKernel>> kernels;
  // Expires when the executable is destroyed: graphs that captured a launch
  // of one of its kernels check it.
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
};

struct TsGraph {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicGraph;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::shared_ptr<tessera::level_zero::GraphData> data;  // shared with its execs
};

struct TsGraphExec {
  static constexpr uint32_t kMagic = tessera::level_zero::kMagicGraphExec;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::shared_ptr<tessera::level_zero::GraphData> data;
};

namespace tessera::level_zero {

// The error of a failed driver call on `dev` (NULL: no device at hand).
inline TsError* dev_error(const TsDevice* dev, ze_result_t r, const std::string& call) noexcept {
  if (!dev) return ze_error(nullptr, nullptr, r, call);
  return ze_error(dev->fn, dev->client->driver, r, call);
}

// Returns from the enclosing function when a driver call on `dev` fails.
// `what` (a std::string or const char*) is evaluated only on failure.
#define TS_ZE_CALL(dev, expr, what)                                             \
  do {                                                                          \
    ze_result_t r_ = (expr);                                                    \
    if (r_ != ZE_RESULT_SUCCESS) return ::tessera::level_zero::dev_error(dev, r_, what); \
  } while (0)

// ---- device.cpp
TsError* create_device(TsClient* client, ze_device_handle_t ze, uint32_t ordinal,
                       std::unique_ptr<TsDevice>* out);
void fill_properties(TsDevice* dev);
// Waits for every stream of the device (retired ones included).
TsError* synchronize_device(TsDevice* dev);

// ---- stream.cpp (all *_locked: device->mu held)
TsError* create_stream(TsDevice* dev, bool is_default, bool non_blocking, int32_t priority,
                       TsStream** out);
// Before a command on `s`: the default stream's implicit waits, and the
// barrier that orders it on a list that is not in order.
TsError* prepare_op_locked(TsStream* s);
// The marker the next command signals (NULL for most commands).
TsError* op_marker_locked(TsStream* s, MarkerRef* out);
// After the command was appended: counts it and records its marker.
void commit_op_locked(TsStream* s, MarkerRef marker);
// A marker covering everything appended to `s` so far (the newest one when
// it does; else a barrier that signals a new one).  `timed`: from the
// timestamp pools, always new.
TsError* marker_locked(TsStream* s, bool timed, MarkerRef* out);
// Makes later commands of `s` wait for `m` (a no-op once it is signalled).
TsError* append_wait_locked(TsStream* s, const MarkerRef& m);
// Advances done_upto from the markers the driver reports signalled.
void poll_locked(TsStream* s);
// Destroys retired command lists whose work is done.
void reap_retired_locked(TsDevice* dev);
// Waits until everything appended to `s` so far is complete.
TsError* synchronize_stream(TsStream* s);
// Waits on `m` from the host.
TsError* wait_marker(const MarkerRef& m, const char* what);

// ---- timestamp.cpp (all *_locked: device->mu held)
// Appends a point to `s` whose completion time goes to *out (the checks of
// Stream_WriteTimestamp done by the caller).
TsError* record_timestamp_locked(TsStream* s, uint64_t* out);
// Writes the points of `points` whose seq is at most `done_upto`, in order
// (poll_locked and reap_retired_locked call it: wherever completion is
// seen, so before any call that observes it returns).
void write_timestamps_locked(TsDevice* dev, std::deque<StampPoint>* points, uint64_t done_upto);
// Event_Synchronize / Event_Query complete: every stream of the device
// polled, so the points before the event are written.
void observe_device_locked(TsDevice* dev);
// ~TsDevice: the slot pages (points not yet written stay unwritten).
void release_timestamp_slots(TsDevice* dev);

// ---- event.cpp
TsError* new_marker(TsDevice* dev, bool timed, MarkerRef* out);

// ---- copy.cpp
// True when the device can use `p` in place: a USM allocation of this
// client's context, or host memory imported with Host_Register.
bool device_accessible(TsClient* c, const void* p, uint64_t size);
// A blocking copy of `size` bytes between `host` (any host memory) and
// `device_ptr` (USM), ordered on `s` after its earlier work, staged through
// the device's host bounce buffer when `host` is pageable.
TsError* blocking_host_copy(TsStream* s, void* device_ptr, void* host, uint64_t size,
                            bool to_device, const char* what);

// ---- memory.cpp
std::string describe_buffer(const TsBuffer* b);

// ---- copy.cpp
// The pinned host range (Host_Allocate or Host_Register) holding
// [p, p + size), or NULL (client->host_mu taken here).
std::weak_ptr<const void> host_range_life(TsClient* c, const void* p, uint64_t size);

// ---- graph.cpp (all *_locked: device->mu held)
// When `s` captures: appends the command `append` makes to the capture's
// list instead of the stream's (a barrier orders it after the command
// before), and counts the node.  A failed append ends the capture with the
// error (Stream_EndCapture then reports it).
template <class Append>
TsError* capture_append_locked(TsStream* s, Append&& append);
// Notes that the node just captured on `s` uses the object behind `token`.
void capture_note_locked(TsStream* s, const std::weak_ptr<const void>& token,
                         const std::string& what);
// FAILED_PRECONDITION when `s` captures: `what` cannot be recorded.
TsError* refuse_in_capture_locked(const TsStream* s, const char* what);
// The capture bookkeeping behind capture_append_locked.
TsError* capture_begin_node_locked(TsStream* s, ze_command_list_handle_t* list);
void capture_fail_locked(TsStream* s, const TsError* e);
// Event_Record inside a capture: no command, the event remembers the node.
void capture_record_event_locked(TsStream* s, TsEvent* ev);
// Stream_WaitEvent on an event whose last record was inside a capture
// (ev->mu held too).
TsError* capture_wait_event_locked(TsStream* s, TsEvent* ev);
// Client_Destroy: ends the capture `s` takes part in, producing no graph.
void abandon_capture_locked(TsStream* s);
// A copy of `size` bytes that lives as long as the graph `s` captures (a
// fill pattern the device reads at each replay).
const void* capture_keep_locked(TsStream* s, const void* bytes, size_t size);

template <class Append>
TsError* capture_append_locked(TsStream* s, Append&& append) {
  ze_command_list_handle_t list = nullptr;
  TS_ZE_RETURN_IF_ERROR(capture_begin_node_locked(s, &list));
  TsError* e = append(list);
  if (e) capture_fail_locked(s, e);
  return e;
}

// ---- client.cpp: what Client_Create takes (Plugin_GetInfo lists it)
extern const TsOptionInfo kClientOptions[];
extern const size_t kNumClientOptions;

// ---- entry points (one TsError* Name(TsName_Args*) per table slot)
TS_PLUGIN_DECLARE_ENTRIES()
TsError* Stream_WriteTimestamp(TsStream_WriteTimestamp_Args* args) noexcept;  // MINOR 3
TsError* Buffer_GetDeviceAddress(TsBuffer_GetDeviceAddress_Args* args) noexcept;  // MINOR 6 (memory.cpp)
TsError* Buffer_Import(TsBuffer_Import_Args* args) noexcept;  // MINOR 6 (memory.cpp)

}  // namespace tessera::level_zero
