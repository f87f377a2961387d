// Objects behind the opaque handles of the Vulkan plugin, and the shared
// helpers of its files.  Every handle starts with a magic word so a destroyed
// or foreign handle is reported as TS_ERROR_INVALID_HANDLE instead of used.
//
// Locking: one mutex per device (TsDevice::mu) guards all stream, batch,
// event-record and capture state of that device, the VkQueue and the
// device's registry of live objects (TsDevice::live).  Host waits
// (vkWaitSemaphores) run without it.  Executables guard their kernel map
// with their own mutex; the client guards its pinned-host ranges (host_mu)
// and its communicators (objects_mu).
//
// Ownership: every object an entry point creates (buffer, stream, event,
// executable, graph, graph exec; communicator on the client) is registered
// in its device's (client's) registry when it is handed out and removed by
// its destroy_* function (below), which its Destroy/Free entry point calls.
// Client_Destroy frees what the caller left behind through the same
// destroy_* functions, once each (client.cpp says in which order), before
// any VkDevice goes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "capture_joins.hpp"
#include "captured_refs.hpp"
#include "error.hpp"
#include "tessera/plugin.h"
#include "vulkan_symbols.hpp"

namespace tessera::vk {

enum : uint32_t {
  kMagicClient = 0x56434c49,
  kMagicDevice = 0x56444556,
  kMagicBuffer = 0x56425546,
  kMagicStream = 0x56535452,
  kMagicEvent = 0x56455654,
  kMagicGraph = 0x56475250,
  kMagicGraphExec = 0x56474558,
  kMagicExecutable = 0x56455845,
  kMagicKernel = 0x564b524e,
  kMagicCommunicator = 0x56434f4d,
  kMagicDead = 0xdeadbeef,
};

template <class T>
TsError* check_handle(const T* p, const char* entry, const char* what) {
  return plugin_support::check_handle("vulkan", p, entry, what);
}

#define TS_VK_CHECK_HANDLE(p, entry, what)                          \
  do {                                                              \
    if (TsError* e_ = ::tessera::vk::check_handle(p, entry, what)) \
      return e_;                                                    \
  } while (0)
#define TS_VK_RETURN_IF_ERROR(expr)    \
  do {                                 \
    if (TsError* e_ = (expr)) return e_; \
  } while (0)

// A VkBuffer bound to its own VkDeviceMemory (no sub-allocation).
struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t size = 0;
  uint8_t* mapped = nullptr;  // persistently mapped when host-visible
  uint32_t type = 0;
};

enum class MemoryUse {
  kDevice,   // DEVICE_LOCAL, preferably not host-visible
  kHost,     // HOST_VISIBLE|HOST_COHERENT, preferably cached, not device-local
  kManaged,  // DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT
};

struct StreamState;
struct GraphData;
struct CaptureSession;

// Commands of one submission (a stream batch) or of one graph (a capture).
struct CommandList {
  VkCommandBuffer cb = VK_NULL_HANDLE;
  bool begun = false;
  uint32_t commands = 0;  // operations recorded; a barrier separates them
  std::vector<VkDescriptorPool> pools;  // descriptor sets of its launches
  std::vector<Allocation> staging;      // freed when the work completes
  std::vector<std::shared_ptr<GraphData>> graphs;  // replayed graphs, kept alive
};

// A cross-stream dependency: wait until `stream`'s timeline reaches `value`.
struct Wait {
  std::shared_ptr<StreamState> stream;
  uint64_t value = 0;
};

// A record of an event whose batch may not have completed: the event's
// timestamp slot is written until `stream` reaches `value` (a stream that is
// gone has completed its work).
struct EventWriter {
  std::weak_ptr<StreamState> stream;
  uint64_t value = 0;
};

// A timestamp (timestamp.cpp): query `index` of `pool`, which the device
// copies into `result` (host-visible: the ticks, then the availability
// word) right after writing it, so the host never calls
// vkGetQueryPoolResults: lavapipe's waits for the whole queue to drain,
// WAIT_BIT or not, i.e. behind work queued after the timestamp.  A
// Stream_WriteTimestamp point is stored into `out` when its batch is reaped.
struct StampSlot {
  VkQueryPool pool = VK_NULL_HANDLE;
  uint32_t index = 0;
  VkBuffer readback = VK_NULL_HANDLE;
  uint64_t* result = nullptr;  // [0] ticks, [1] availability (0: not written)
  uint64_t* out = nullptr;
};

// One vkQueueSubmit: waits, one command buffer, signals `value`.
struct Batch {
  uint64_t value = 0;
  CommandList cl;
  std::vector<Wait> waits;
  bool referenced = false;  // an event or another stream points at `value`
  std::vector<StampSlot> stamps;  // written by reap_locked
};

// A stream: an in-order timeline on the device's (shared) VkQueue.  Every
// batch signals the stream's timeline semaphore with the next value and waits
// on the previous one, so order survives many streams on one queue.
// Lifetime: shared by the TsStream handle, events recorded on it and waits
// of other streams; the device keeps it until its work completes.
struct StreamState {
  TsDevice* dev = nullptr;
  VkSemaphore sem = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  bool is_default = false;
  bool non_blocking = false;
  bool destroyed = false;
  std::string label;        // "stream 3" for messages
  uint64_t submitted = 0;   // highest value handed to vkQueueSubmit
  Batch open;               // recording; value == submitted + 1
  std::deque<Batch> inflight;  // submitted, not yet reaped
  std::vector<VkCommandBuffer> free_cbs;
  uint64_t last_op = 0;         // value of the batch holding the latest op
  uint64_t default_seen = 0;    // blocking stream: default's last_op already waited for
  uint64_t seen_by_default = 0; // blocking stream: my last_op the default waits for
  std::shared_ptr<CaptureSession> capture;  // non-null while capturing
  // The open batch holds operations the device's flusher will submit
  // (stream.cpp, batching policy): when the stream drains if it was busy
  // when the batch began, else once the host has been quiet for a moment.
  bool deferred = false;
  bool deferred_on_busy = false;  // earlier submits were running then
  std::chrono::steady_clock::time_point deferred_since;  // the batch's first op
  std::chrono::steady_clock::time_point last_op_time;    // its latest op
  // A submit the flusher made failed: reported by the next synchronize.
  TsErrorCode async_error_code = TS_ERROR_INTERNAL;
  std::string async_error;
  ~StreamState();
};

// Host memory the device can reach: Host_Allocate'd, Host_Register'ed or the
// mapping of a HOST_PINNED buffer.  `views[ordinal]` is a VkBuffer over the
// range on that device (imported with VK_EXT_external_memory_host), or empty
// when the device cannot see it (copies are then staged, and blocking).
struct HostRange {
  enum Origin { kAllocated, kRegistered, kPinnedBuffer } origin = kAllocated;
  uint8_t* start = nullptr;  // what the user sees
  uint64_t size = 0;
  uint8_t* view_base = nullptr;  // start of the imported range (page aligned)
  void* heap = nullptr;          // Host_Allocate's aligned_alloc, or NULL
  std::vector<Allocation> views; // by device ordinal; not owned for kPinnedBuffer
};

// A resolved host pointer on one device.
struct HostView {
  VkBuffer buffer = VK_NULL_HANDLE;  // NULL: pageable (or not visible here)
  uint64_t offset = 0;
  std::shared_ptr<HostRange> range;  // what `buffer` views (graphs note it)
};

// Vulkan features the device was created with (what shaders may use).
struct EnabledFeatures {
  VkPhysicalDeviceFeatures2 f2{};
  VkPhysicalDeviceVulkan11Features v11{};
  VkPhysicalDeviceVulkan12Features v12{};
  VkPhysicalDeviceVulkan13Features v13{};
  // VK_EXT_shader_atomic_float (OpAtomicFAddEXT), enabled when present.
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{};
  // VK_EXT_subgroup_size_control on a Vulkan 1.2 device (1.3: in v13).
  VkPhysicalDeviceSubgroupSizeControlFeatures subgroup_size_control{};
  // Subgroup operations the device offers in compute shaders
  // (VkPhysicalDeviceSubgroupProperties, less what a test hook masks).
  VkSubgroupFeatureFlags subgroup_ops = 0;
  // Pipelines may set REQUIRE_FULL_SUBGROUPS (computeFullSubgroups on).
  bool full_subgroups = false;
  bool size_control = false;  // subgroupSizeControl on
  uint32_t min_subgroup_size = 0;  // VkPhysicalDeviceSubgroupSizeControlProperties
  uint32_t max_subgroup_size = 0;
  // VK_EXT_shader_atomic_float2 (OpAtomicFMinEXT / OpAtomicFMaxEXT on f32,
  // capability AtomicFloat32MinMaxEXT), enabled when present: only the f32
  // buffer/shared min/max features.  Tessera's own SPIR-V lowering emits
  // compare-exchange loops for float min/max (MLIR 16 has no such op); a
  // module from another producer (glslang's GL_EXT_shader_atomic_float2)
  // uses them natively.
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT atomic_float2{};
};

// Test-only: the client option test_mask_features="shaderInt64,subgroupShuffle,..."
// (environment: TESSERA_VULKAN_TEST_MASK_FEATURES)
// makes the plugin treat those features (VkPhysicalDevice*Features member
// names, subgroup<Op> for VkSubgroupFeatureFlagBits, or
// VK_EXT_external_memory_host) as unsupported, so
// the load-time capability checks can be tested on a device that has them
// all (lavapipe).  Never set it outside tests.
bool test_masks_feature(const TsClient* client, const char* name);

// The objects of one device the caller holds: registered by the entry point
// that creates one, removed by its destroy_* function (guarded by
// TsDevice::mu).  Client_Destroy frees what is still here.  The default
// stream is not listed (the device owns it).
struct LiveObjects {
  std::unordered_set<TsBuffer*> buffers;
  std::unordered_set<TsStream*> streams;
  std::unordered_set<TsEvent*> events;
  std::unordered_set<TsExecutable*> executables;
  std::unordered_set<TsGraph*> graphs;
  std::unordered_set<TsGraphExec*> graph_execs;
};

}  // namespace tessera::vk

struct TsClient {
  static constexpr uint32_t kMagic = tessera::vk::kMagicClient;
  uint32_t magic = kMagic;
  tessera::vk::InstanceFns fn;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;  // validation messages -> stderr
  bool validation_layer = false;  // VK_LAYER_KHRONOS_validation enabled by name
  // Options (Client_Create): where the pipeline cache is kept ("" none), the
  // features a test masks (test_masks_feature).
  std::string cache_dir;
  std::string test_mask_features;
  std::vector<std::unique_ptr<TsDevice>> devices;
  std::vector<TsDevice*> device_list;  // what Client_GetDevices returns
  std::mutex host_mu;
  std::map<uintptr_t, std::shared_ptr<tessera::vk::HostRange>> host_ranges;
  // Communicators not destroyed yet (Client_Destroy frees them); guarded by
  // objects_mu.
  std::mutex objects_mu;
  std::unordered_set<TsCommunicator*> communicators;
  ~TsClient();
};

struct TsDevice {
  static constexpr uint32_t kMagic = tessera::vk::kMagicDevice;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  uint32_t ordinal = 0;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  tessera::vk::DeviceFns fn;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  VkPhysicalDeviceDriverProperties driver{};
  VkPhysicalDeviceFloatControlsProperties float_controls{};  // inf/NaN preservation (executable.cpp)
  VkPhysicalDeviceMemoryProperties memory{};
  // Bytes of each heap that live buffers hold (Buffer_Allocate / _Free): a
  // buffer past a heap's size is an out-of-memory error even where the
  // driver would grant it (lavapipe does, from host memory).
  std::mutex heap_mu;
  uint64_t heap_in_use[VK_MAX_MEMORY_HEAPS] = {};   // guarded by heap_mu
  uint64_t heap_buffers[VK_MAX_MEMORY_HEAPS] = {};  // guarded by heap_mu
  VkPhysicalDeviceMaintenance3Properties maint3{};
  tessera::vk::EnabledFeatures features;
  bool import_host = false;       // VK_EXT_external_memory_host enabled
  uint64_t import_alignment = 4096;
  bool timestamps = false;        // timestampValidBits > 0 on our family
  uint32_t timestamp_bits = 0;    // timestampValidBits of our family
  bool calibrated_timestamps = false;  // VK_EXT_calibrated_timestamps enabled
  // Its CLOCK_MONOTONIC reading was outside the host's own reads around the
  // call once: the queue calibrates from then on (timestamp.cpp).
  std::atomic<bool> calibrated_timestamps_bad{false};
  bool test_skew_calibrated_host = false;  // test hook: that reading is 10 s late
  // Test hook (test_mask_features=end_command_buffer_once): the next
  // vkEndCommandBuffer of a stream fails with VK_ERROR_OUT_OF_HOST_MEMORY.
  std::atomic<bool> test_fail_end_command_buffer{false};
  int type_device = -1, type_host = -1, type_managed = -1;  // memory types
  TsDeviceProperties ts{};        // filled once at creation

  std::mutex mu;  // see the file comment
  tessera::vk::LiveObjects live;  // guarded by mu
  std::vector<std::shared_ptr<tessera::vk::StreamState>> streams;  // live
  std::vector<std::shared_ptr<tessera::vk::StreamState>> retired;  // destroyed, running
  TsStream* default_stream = nullptr;  // owned
  std::vector<VkDescriptorPool> free_pools;
  // Timeline semaphores of streams that are gone, for new streams to reuse.
  // A stream's semaphore is never destroyed before the device: Mesa's
  // threaded queue (lavapipe) still touches the timelines a submission
  // waited on or signalled after the host has seen it complete (it releases
  // its time points under the timeline's mutex), so destroying one as soon
  // as its values were reached crashed about one run in four of the
  // conformance events area (a destroyed mutex locked, or a SIGSEGV, in
  // lavapipe's submit thread).  Guarded by sem_mu (taken after mu).
  std::mutex sem_mu;
  std::vector<VkSemaphore> free_semaphores;
  VkCommandPool graph_pool = VK_NULL_HANDLE;  // secondary cbs of graphs
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  std::string cache_path;
  size_t cache_loaded_size = 0;
  tessera::vk::Allocation patterns;  // byte v repeated at [4v, 4v+4): memset edges
  std::mutex staging_mu;             // sync copies through `staging`
  tessera::vk::Allocation staging;
  uint32_t next_stream_id = 1;
  // Timestamps (timestamp.cpp), guarded by mu: the slots of points and
  // timed events, and the device tick that matches a host time (the clock).
  struct StampPool {
    VkQueryPool queries = VK_NULL_HANDLE;
    tessera::vk::Allocation readback;  // host-visible, 16 bytes per query
  };
  std::vector<StampPool> stamp_pools;
  std::vector<tessera::vk::StampSlot> free_stamps;
  // Slots of destroyed events whose records may still be written (Event_Destroy
  // does not wait): free again once every writer has completed.
  struct RetiringStamp {
    tessera::vk::StampSlot slot;
    std::vector<tessera::vk::EventWriter> writers;
  };
  std::vector<RetiringStamp> retiring_stamps;
  struct StampClock {
    bool valid = false;
    uint64_t ticks = 0, host_ns = 0;  // a device tick and its host time
    uint64_t window_ns = 0;           // how well the offset is known
    uint64_t taken_ns = 0;            // host time of the last calibration
  } stamp_clock;
  std::mutex calibrate_mu;  // one calibration at a time; taken before mu
  // Until when the clock needs no look (host ns): the traced launch's
  // check, without locks.
  std::atomic<uint64_t> stamp_clock_fresh_until{0};
  std::shared_ptr<tessera::vk::StreamState> calibration_stream;
  // The flusher (stream.cpp): one thread per device that submits the open
  // batches the host left behind (the batching policy), so queued work
  // starts without waiting for the host's next call.  Its state is guarded
  // by mu.  While a batch is deferred, or for kFlusherLinger (100 ms) after
  // the last deferral, it wakes at least every kFlusherPoll (1 ms): in
  // vkWaitSemaphores while a deferred stream is busy (until it drains),
  // otherwise on flusher_cv (kPolling; a new deferral needs no wake-up
  // call, which would cost every launch a context switch).  After that it
  // waits on flusher_cv with no timeout (kIdle: the next deferral
  // notifies).
  enum class FlusherState { kBusy, kIdle, kPolling };
  std::thread flusher;
  std::condition_variable flusher_cv;
  FlusherState flusher_state = FlusherState::kBusy;
  bool flusher_stop = false;
  std::chrono::steady_clock::time_point last_deferral;  // guarded by mu
  // What the device did (vulkan_ext.h TsVulkanDeviceStats); only grow.
  std::atomic<uint64_t> stat_submits{0};   // vkQueueSubmit calls
  std::atomic<uint64_t> stat_commands{0};  // operations in them
  std::atomic<uint64_t> stat_staged{0};    // staged host<->device copies
  std::atomic<uint64_t> stat_imports{0};   // imported host ranges
  std::atomic<uint64_t> stat_semaphores{0};  // timeline semaphores created
  std::atomic<uint64_t> stat_queue_calibrations{0};  // clock measured through the queue
  // Pipelines built through pipeline_cache: without one the cache has
  // nothing new and is not written back (a device opened only to be
  // probed, e.g. by the core's probe process, leaves the file alone).
  std::atomic<uint64_t> pipelines_built{0};
  ~TsDevice();
};

struct TsStream {
  static constexpr uint32_t kMagic = tessera::vk::kMagicStream;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::shared_ptr<tessera::vk::StreamState> state;
};

struct TsBuffer {
  static constexpr uint32_t kMagic = tessera::vk::kMagicBuffer;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  TsBufferKind kind = TS_BUFFER_DEVICE;
  uint64_t size = 0;
  tessera::vk::Allocation alloc;
  uint64_t accounted = 0;  // bytes counted in device->heap_in_use[heap]
  uint32_t heap = 0;
  // Expires when the buffer is freed: graphs that captured it check it.
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
};

struct TsEvent {
  static constexpr uint32_t kMagic = tessera::vk::kMagicEvent;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  uint32_t flags = 0;
  // Its timestamp (timing events on a device with timestamps), and the
  // records that may still write it (guarded by device->mu).
  bool timed = false;
  tessera::vk::StampSlot stamp;
  std::vector<tessera::vk::EventWriter> writers;
  // Last eager record (guarded by device->mu); stream NULL: never recorded.
  std::shared_ptr<tessera::vk::StreamState> stream;
  uint64_t value = 0;
  // Last record made inside a capture (graph.cpp), and which came last.
  std::shared_ptr<tessera::vk::CaptureSession> capture;
  // The node it follows and what the capture's streams had done by then.
  tessera::plugin_support::CaptureJoins<tessera::vk::StreamState>::Point capture_point;
  bool last_is_capture = false;
};

struct TsGraph {
  static constexpr uint32_t kMagic = tessera::vk::kMagicGraph;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::shared_ptr<tessera::vk::GraphData> data;
};

struct TsGraphExec {
  static constexpr uint32_t kMagic = tessera::vk::kMagicGraphExec;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::shared_ptr<tessera::vk::GraphData> data;
};

struct TsCommunicator {
  static constexpr uint32_t kMagic = tessera::vk::kMagicCommunicator;
  uint32_t magic = kMagic;
  TsClient* client = nullptr;
  std::vector<TsDevice*> devices;  // rank -> device
};

struct TsKernel {
  static constexpr uint32_t kMagic = tessera::vk::kMagicKernel;
  uint32_t magic = kMagic;
  TsExecutable* executable = nullptr;
  std::string name;
  uint32_t local[3] = {1, 1, 1};
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::vector<std::pair<uint32_t, VkDescriptorType>> bindings;  // by binding
  std::vector<std::pair<uint32_t, uint32_t>> push_members;      // (offset, size)
  uint32_t push_size = 0;
  uint64_t shared_bytes = 0;
  bool full_subgroups = false;  // pipeline created with REQUIRE_FULL_SUBGROUPS
};

namespace tessera::vk {
// One SPIR-V module of an executable: a "spirv" executable has one, an
// "archive:spirv" one per entry of the archive (tessera/kernel_archive.hpp).
struct ShaderImage {
  VkShaderModule module = VK_NULL_HANDLE;
  std::vector<uint32_t> words;  // the SPIR-V, for reflection per kernel
  std::string origin;           // for messages
};
}  // namespace tessera::vk

struct TsExecutable {
  static constexpr uint32_t kMagic = tessera::vk::kMagicExecutable;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  std::vector<tessera::vk::ShaderImage> images;
  std::string origin;           // path or "<memory>" for messages
  // Expires when the executable is destroyed: graphs that captured a launch
  // of one of its kernels check it.
  tessera::plugin_support::LifeToken life = tessera::plugin_support::make_life_token();
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<TsKernel>> kernels;
};

namespace tessera::vk {

// ---- memory.cpp
// `align` (a power of two, 0: the driver's): where the host pointer of a
// host-visible allocation must start.
TsError* allocate(TsDevice* dev, uint64_t size, MemoryUse use, Allocation* out,
                  const char* what, uint64_t align = 0);
// Imports [host, host+size) (page aligned) as a VkBuffer on `dev`.
TsError* import_host(TsDevice* dev, void* host, uint64_t size, Allocation* out);
void release(TsDevice* dev, Allocation& a);
// Where a host pointer lies in memory `dev` can reach (views of HostRanges).
HostView resolve_host(TsDevice* dev, const void* p, uint64_t size);
VkBufferUsageFlags buffer_usage();

// ---- stream.cpp (device mutex held where the name says _locked)
// Creates a stream state with its semaphore and command pool.
TsError* create_stream_state(TsDevice* dev, bool is_default, bool non_blocking,
                             std::shared_ptr<StreamState>* out);
// Starts an operation on `s`: applies the default-stream rules, and returns
// the command list to record it into (the open batch, or the capture), with a
// barrier after the previous operation already recorded.
TsError* begin_op_locked(StreamState& s, CommandList** out);
// Ends it, and submits the batch when the stream has nothing in flight or
// the batch is long (the batching policy, stream.cpp).
TsError* end_op_locked(StreamState& s);
// Submits the open batch (and, first, any batch it waits on).
TsError* flush_locked(StreamState& s);
// Recycles batches whose values the semaphore has reached.
void reap_locked(StreamState& s);
// timestamp.cpp.  ensure_stamp_clock: a calibration of the device's
// timestamps against the host clock (takes calibrate_mu and mu: call with
// neither held); it never waits for queued work.
// calibrate_stamp_clock_at_creation: the first calibration, with
// VK_EXT_calibrated_timestamps (its answer checked) or through the idle
// queue; a failure leaves it to the first timestamp.  record_stamp_locked: a point at the
// end of the open batch.  write_stamps_locked: the points of a completed
// batch, into their memory.
TsError* ensure_stamp_clock(TsDevice* dev);
void calibrate_stamp_clock_at_creation(TsDevice* dev);
TsError* record_stamp_locked(StreamState& s, uint64_t* out);
void write_stamps_locked(TsDevice* dev, Batch& b);
void release_stamps(TsDevice* dev);  // ~TsDevice: the query pools
// Whether an event's record has completed (mu held).
bool event_writer_done(const EventWriter& w);
// A timestamp slot (mu held): a free one, a retired event's whose writers
// are done, or one of a new pool.
TsError* take_stamp_slot_locked(TsDevice* dev, StampSlot* out);
// Records, into `cb`, the write of `slot` at `stage` and its copy to the
// host-visible result (after clearing the result's availability word).
void record_stamp_commands(TsDevice* dev, VkCommandBuffer cb, const StampSlot& slot,
                           VkPipelineStageFlagBits stage);
// The ticks the device copied to `slot`'s result, once the batch that wrote
// it has completed; false when it was never written (a failed submit).
bool read_stamp(const StampSlot& slot, uint64_t* ticks);
// Wakes the device's flusher: a stream has deferred its open batch.
void wake_flusher_locked(TsDevice* dev);
// Starts / stops the device's flusher thread (stop: mutex NOT held).
TsError* start_flusher(TsDevice* dev);
void stop_flusher(TsDevice* dev);
uint64_t counter_value(StreamState& s);
// Host wait for `value` on `s` (mutex NOT held); then reaps.
TsError* wait_value(StreamState& s, uint64_t value);
// Flushes `s` and waits for everything submitted to it (mutex NOT held).
TsError* synchronize_stream(const std::shared_ptr<StreamState>& s);
// Waits for all work of the device (mutex NOT held).
TsError* synchronize_device(TsDevice* dev);
// Records an op into `s` and waits until it has run (mutex NOT held).
template <class F>
TsError* run_blocking(const std::shared_ptr<StreamState>& s, F&& record);
// Allocates a descriptor set for one launch from `cl`'s pools.
TsError* allocate_descriptor_set(TsDevice* dev, CommandList& cl,
                                 VkDescriptorSetLayout layout, VkDescriptorSet* out);
// A full memory barrier between two operations of one command buffer.
void record_barrier(TsDevice* dev, VkCommandBuffer cb);
// Returns a command list's resources to the device (mutex held).
void recycle_list_locked(TsDevice* dev, CommandList& cl, bool reset_cb);
StreamState* default_state(TsDevice* dev);

// ---- graph.cpp (mutex held)
TsError* capture_begin_op_locked(StreamState& s, CommandList** out);
// Notes that the operation just begun on capturing stream `s` uses the
// object behind `token`; `what` describes the use ("buffer argument 1 of the
// launch of kernel 'k'"), the node is appended.  GraphExec_Launch refuses to
// replay once the object is gone.
void capture_note_locked(StreamState& s, const std::weak_ptr<const void>& token,
                         const std::string& what);
// "a 256 B device buffer"
std::string describe_buffer(const TsBuffer* b);
void capture_record_event_locked(StreamState& s, TsEvent* ev);
TsError* capture_wait_event_locked(StreamState& s, TsEvent* ev);

// ---- copy.cpp
// Blocking copy between a buffer and pageable host memory, ordered on `s`.
TsError* staged_copy(const std::shared_ptr<StreamState>& s, TsBuffer* buf,
                     uint64_t offset, void* host, uint64_t size, bool to_device);

// ---- releasing objects: what each Destroy/Free entry point does after
// checking its handle, and what Client_Destroy does for the objects the
// caller left behind.  Each unregisters the object from its device's
// (client's) registry, frees its Vulkan objects and deletes it; call it once
// per object, without the device mutex.  An error is returned after the
// object is gone, except where the function says otherwise.
// memory.cpp: waits for the device first (never frees under running work).
TsError* destroy_buffer(TsBuffer* b);
// stream.cpp: submits the stream's queued work (the device keeps the state
// until it completes).  Not the default stream.  A capturing stream is
// refused (error, the stream stays) unless `abandon_capture`, which ends the
// capture without a graph (Client_Destroy); so is a failed submit, unless
// `abandon_capture` (the stream is freed all the same).
TsError* destroy_stream(TsStream* s, bool abandon_capture);
// event.cpp: waits for a pending timestamp write to land.
TsError* destroy_event(TsEvent* ev);
// executable.cpp: waits for the device first (never unloads under running work).
TsError* destroy_executable(TsExecutable* exe);
// graph.cpp: batches still replaying the commands keep them.
void destroy_graph(TsGraph* g);
void destroy_graph_exec(TsGraphExec* x);
// collectives.cpp
void destroy_communicator(TsCommunicator* c);
// graph.cpp (mutex held): ends the capture `s` takes part in, producing no
// graph; its recorded commands go once nothing refers to them.
void abandon_capture_locked(StreamState& s);

// ---- device.cpp / client.cpp
TsError* create_device(TsClient* client, VkPhysicalDevice phys, uint32_t ordinal,
                       std::unique_ptr<TsDevice>* out, std::string* skip_reason);
void fill_properties(TsDevice* dev);
// Writes the pipeline cache to its file when it grew.
void save_pipeline_cache(TsDevice* dev);

// ---- client.cpp: what Client_Create takes (Plugin_GetInfo lists it)
extern const TsOptionInfo kClientOptions[];
extern const size_t kNumClientOptions;

TsError* Stream_WriteTimestamp(TsStream_WriteTimestamp_Args* args) noexcept;  // MINOR 3
// ---- entry points (one TsError* Name(TsName_Args*) per table slot)
TS_PLUGIN_DECLARE_ENTRIES()

template <class F>
TsError* run_blocking(const std::shared_ptr<StreamState>& s, F&& record) {
  uint64_t value;
  {
    std::lock_guard<std::mutex> lk(s->dev->mu);
    if (s->capture)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "vulkan: a blocking operation on %s while it is capturing a "
                    "graph: end the capture first",
                    s->label.c_str());
    CommandList* cl = nullptr;
    TS_VK_RETURN_IF_ERROR(begin_op_locked(*s, &cl));
    TS_VK_RETURN_IF_ERROR(record(*cl));
    // The batch holding the op; end_op may submit it already.
    s->open.referenced = true;
    value = s->open.value;
    TS_VK_RETURN_IF_ERROR(end_op_locked(*s));
    if (s->submitted < value) TS_VK_RETURN_IF_ERROR(flush_locked(*s));
  }
  return wait_value(*s, value);
}

}  // namespace tessera::vk
