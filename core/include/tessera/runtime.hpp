// The Tessera C++ runtime API: RAII objects over the plugin ABI.
//
// Ownership: every object here is a cheap, copyable handle to a shared
// implementation object.  The implementation lives until the last handle is
// dropped or destroy() is called explicitly, whichever is first; destroy()
// makes every copy of the handle invalid, and any later use returns
// INVALID_HANDLE instead of crashing.  Objects keep what they need alive: a
// Buffer keeps its Device, a Device its Runtime, a Runtime its plugin.
//
// Thread-safety: all methods may be called concurrently from several threads,
// on the same or different objects, except destroy() racing with other uses
// of the same object (undefined, as in CUDA).
#ifndef TESSERA_RUNTIME_HPP_
#define TESSERA_RUNTIME_HPP_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/plugin.h"
#include "tessera/status.hpp"
#include "tessera/validation.hpp"

namespace tessera {

namespace detail {
struct RuntimeImpl;
struct DeviceImpl;
struct BufferImpl;
struct StreamImpl;
struct EventImpl;
struct GraphImpl;
struct GraphExecImpl;
struct ExecutableImpl;
struct CommunicatorImpl;
}  // namespace detail

class Runtime;
class Device;
class Buffer;
class Stream;
class Event;
class Graph;
class GraphExec;
class Executable;
class Kernel;
class Communicator;
class CollectiveProvider;  // tessera/process_group.hpp

// ------------------------------------------------------------ plugin info
enum class PluginState {
  kLoaded,      // selected and serving devices
  kAvailable,   // loads and has devices, not selected
  kUnavailable, // loads, but no driver or no device (reason says why)
  kRejected,    // not a usable plugin: not a shared object, no entry point,
                // wrong ABI MAJOR, null table (reason says which)
  kShadowed,    // another plugin of the same name came first in the path
  kNotProbed,   // discovered, never opened (selection stopped earlier)
};
const char* PluginStateName(PluginState state);

// One named option for a plugin (TsNamedValue): its name and a typed value.
struct OptionValue {
  std::string name;
  TsValueType type = TS_VALUE_STRING;
  std::string string_value;
  int64_t int64_value = 0;
  double float64_value = 0;
  bool bool_value = false;

  static OptionValue String(std::string name, std::string value);
  static OptionValue Int(std::string name, int64_t value);
  static OptionValue Float(std::string name, double value);
  static OptionValue Bool(std::string name, bool value);
  std::string ValueText() const;  // "4", "true", "/tmp/x"
};

// An option a plugin (or a compile target) declares (TsOptionInfo).
struct OptionInfo {
  std::string name;
  TsValueType type = TS_VALUE_STRING;
  std::string default_value;  // "" when computed
  std::string description;
};
const char* ValueTypeName(TsValueType type);

// One compile target of a plugin (TsCompilerTarget): "cpu", "vulkan",
// "cuda" with the architectures it takes after ':'.
struct CompileTargetInfo {
  std::string plugin;             // the plugin that compiles it
  std::string name;
  std::vector<std::string> archs; // {"*"}: any the plugin's compiler knows
  std::string default_arch;
  std::string executable_format;
  std::vector<std::string> emit_kinds;
  uint32_t input_levels = 0;      // TS_IR_LEVEL_* bits
  std::string schedule;           // graph-to-schedule options it is tuned for
  std::vector<OptionInfo> options;
  std::string build_id;           // the compiler's build ("" unknown): cache keys
};

struct PluginCandidate {
  std::string name;            // "cpu", "vulkan", ...
  std::string path;            // file, or "<embedded>"
  std::string abi_version;     // "1.0" as reported by the plugin; "" unknown
  std::string vendor;
  std::string plugin_version;
  PluginState state = PluginState::kNotProbed;
  std::string reason;          // why rejected / unavailable / shadowed
  // ABI 1.2: what Client_Create takes, and what the plugin compiles for
  // (known once the plugin was opened; empty for an older plugin).
  std::vector<OptionInfo> options;
  std::vector<CompileTargetInfo> compile_targets;
};

// Registers a plugin linked into the program rather than loaded from a file
// (IREE's hal/drivers/init.c does the same): it is searched where the search
// path says "<embedded>", after TESSERA_PLUGIN_PATH.  The core itself embeds
// none; libtessera.so (what applications link) registers the cpu plugin.
// A second registration of a name replaces the first.  Thread-safe.
void RegisterStaticPlugin(const std::string& name, TsPluginGetApiFn get_api);
// The names registered so far, in registration order.
std::vector<std::string> StaticPluginNames();

// The folder of Tessera's caches (compiled kernels, pipeline caches):
// $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera;
// "" when none of these is set.
std::string DefaultCacheDirectory();

struct RuntimeOptions {
  // Comma-separated ordered list; empty means read TESSERA_BACKEND, and if
  // that is unset too, the automatic choice of DESIGN.md.
  std::string backend;
  // Extra directories or files searched before everything else.
  std::vector<std::string> plugin_path;
  // Load exactly this plugin file and nothing else (conformance --plugin).
  std::string plugin_file;
  // Read TESSERA_BACKEND, TESSERA_PLUGIN_PATH, TESSERA_VISIBLE_DEVICES.
  bool read_environment = true;
  // Comma-separated device ordinals to keep; empty: TESSERA_VISIBLE_DEVICES.
  std::string visible_devices;
  // Options of Client_Create, by plugin name: {"cpu", {Int("devices", 4)}}.
  // With read_environment, each TESSERA_<PLUGIN>_<OPTION>=value (e.g.
  // TESSERA_CPU_DEVICES=4 -> cpu option "devices") is an option too, as are
  // TESSERA_CACHE_DIR (-> "cache_dir" of plugins that take one) and
  // TESSERA_VALIDATE (-> "validation"); options given here win over the
  // environment (docs/runtime.md).
  std::map<std::string, std::vector<OptionValue>> plugin_options;
  // Defaults a tool chooses for a plugin's options: used only where neither
  // the environment nor plugin_options sets the option (tessera-run gives
  // the cpu plugin as many devices as a program's mesh needs, unless the
  // user set TESSERA_CPU_DEVICES), and dropped for plugins that take no
  // options.
  std::map<std::string, std::vector<OptionValue>> plugin_option_defaults;
  // Isolation (docs/runtime.md): each plugin file is first opened in a probe
  // process, so a plugin that crashes, aborts, exits or hangs is reported
  // instead of taking this process down.  false loads plugin files directly
  // (as does TESSERA_PLUGIN_ISOLATION=off with read_environment).
  bool isolate_plugins = true;
  // Seconds a probe may take before its plugin counts as hanging; 0:
  // TESSERA_PLUGIN_PROBE_TIMEOUT (with read_environment), else 20.
  double plugin_probe_timeout = 0;
  // Write a Chrome trace (Perfetto, chrome://tracing) of this runtime's
  // calls, streams and event edges to this file; empty: TESSERA_TRACE (with
  // read_environment), else no trace (docs/runtime.md, "Tracing").
  std::string trace_path;
  // Fault injection, e.g. "alloc:3" (fail the 3rd allocation), "copy:N",
  // "launch:N", "compile:N", "device_lost[:N]", comma-separated; empty:
  // TESSERA_FAULT (with read_environment) (docs/runtime.md, "Fault
  // injection").
  std::string fault_injection;
  // The validation layer (tessera/validation.hpp, docs/runtime.md):
  // 1 on, 0 off, -1 TESSERA_VALIDATE (with read_environment; "1" turns it
  // on), else off.  Off, the plugin's table is called directly: no cost.
  int validate = -1;
  // Where its reports go; empty: stderr.
  ValidationCallback validation_callback;
};

// Properties of a device, copied out of TsDeviceProperties.
struct DeviceInfo {
  std::string name;
  std::string vendor;
  std::string driver_version;
  TsDeviceType type = TS_DEVICE_TYPE_CPU;
  uint32_t ordinal = 0;
  uint64_t total_memory = 0;
  TsBufferKindMask buffer_kinds = 0;
  bool managed_memory = false;
  TsHintResult prefetch_hint = TS_HINT_IGNORED;
  TsHintResult advise_hint = TS_HINT_IGNORED;
  TsPeerCopyMode peer_copy = TS_PEER_COPY_NONE;
  bool graphs = false;
  uint32_t collectives = 0;   // TS_COLLECTIVE_CAP_* bits
  uint32_t atomic_scopes = 0; // TS_ATOMIC_SCOPE_* bits
  uint32_t subgroup_size = 0;
  uint64_t shared_memory_per_group = 0;
  uint32_t max_group_size = 0;
  uint32_t compute_units = 0;
  bool stream_weights = false;
  std::vector<std::string> executable_formats;
  std::string api_version;           // "Vulkan 1.3.230"; may be empty
  uint32_t max_scalar_arg_bytes = 0; // 0: no limit
  // Bytes one buffer argument may span (buffer size - offset); 0: no limit.
  uint64_t max_buffer_arg_bytes = 0;
  // What kernels may use (plugin ABI 1.1).  kernel_features_known is false
  // for an older plugin, which reports none of the fields below.
  bool kernel_features_known = false;
  uint32_t shader_types = 0;    // TS_SHADER_TYPE_* bits
  uint32_t subgroup_ops = 0;    // TS_SUBGROUP_OP_* bits
  uint32_t float_atomics = 0;   // TS_FLOAT_ATOMIC_* bits (native)
  uint32_t subgroup_size_min = 0;
  uint32_t subgroup_size_max = 0;
  bool subgroup_size_control = false;
  bool full_subgroups = false;
  bool host_memory_import = false;  // pinned memory used in place, not staged
  // Kernels on different streams can run at the same time.  An older
  // plugin does not say: then compute_units >= 2 is the best guess.
  bool concurrent_streams = false;
  // The architecture the plugin compiles for on this device when a target
  // names none ("sm_90a", "gfx90a"; plugin ABI 1.5); "" the target's
  // default.  Graph IR is scheduled for it (the target schedule's
  // "ARCH:key=value" tokens).
  std::string compile_arch;
  std::vector<TsMemoryHeap> memory_heaps;
  std::vector<TsMemoryType> memory_types;

  bool supports(TsBufferKind kind) const {
    return (buffer_kinds >> kind) & 1u;
  }
};

const char* DeviceTypeName(TsDeviceType type);
const char* BufferKindName(TsBufferKind kind);
const char* HintResultName(TsHintResult result);
const char* PeerCopyModeName(TsPeerCopyMode mode);

// ------------------------------------------------------------- runtime
class Runtime {
 public:
  Runtime() = default;  // invalid until Create()

  // Discovers plugins, selects a backend, creates its client and devices.
  static StatusOr<Runtime> Create(const RuntimeOptions& options = {});

  // Opens every plugin that could be found (without selecting one) and
  // reports each with its devices: what tessera-info shows.
  struct ProbeResult {
    PluginCandidate candidate;
    std::vector<DeviceInfo> devices;
  };
  static std::vector<ProbeResult> ProbeAll(const RuntimeOptions& options = {});

  // The directories searched, in order (after TESSERA_PLUGIN_PATH).
  static std::vector<std::string> DefaultPluginDirectories();

  bool valid() const { return impl_ != nullptr; }
  const std::string& backend() const;  // selected plugin name
  const std::vector<PluginCandidate>& candidates() const;
  const std::vector<Device>& devices() const;  // after filtering
  // The selected plugin's function table, for callers that must bypass the
  // core (benchmarks measuring its overhead).  Valid while the Runtime lives.
  const TsPluginApi* plugin_api() const;
  // The plugin's own table, beneath any layer the core stacks over it
  // (TESSERA_VALIDATE): what the conformance suite's "abi" area certifies.
  const TsPluginApi* plugin_own_api() const;
  TsClient* raw_client() const;

  // Page-locked host memory (cudaMallocHost).  Async copies need it.
  StatusOr<void*> pinned_malloc(size_t size) const;
  Status pinned_free(void* pointer) const;
  // Page-locks existing memory (cudaHostRegister) / undoes it.
  Status register_host(void* pointer, size_t size) const;
  Status unregister_host(void* pointer) const;
  // True when [pointer, pointer+size) lies in pinned or registered memory.
  bool is_pinned(const void* pointer, size_t size) const;

  StatusOr<Communicator> create_communicator(
      const std::vector<Device>& devices) const;

  // A communicator whose ranks span processes, made by the plugin itself
  // (ABI 1.4: plugins whose devices report TS_COLLECTIVE_CAP_MULTI_PROCESS;
  // NCCL on cuda, RCCL on hip, shared memory on cpu), as
  // ncclGetUniqueId / ncclCommInitRank: one process makes the id, hands it
  // to the others (MPI_Bcast, a file, ...), then every process calls
  // create_communicator with it, `num_ranks` (the ranks of all processes)
  // and the rank of each of its own `devices`.  Returns once every rank has
  // joined; fails after the plugin's bound otherwise.  Collectives then take
  // one buffer and stream per local device; see docs/spmd.md.
  using CollectiveId = std::vector<uint8_t>;  // TS_UNIQUE_ID_BYTES bytes
  StatusOr<CollectiveId> create_collective_id() const;
  StatusOr<Communicator> create_communicator(const std::vector<Device>& devices, uint32_t num_ranks,
                                             const std::vector<uint32_t>& ranks,
                                             const CollectiveId& id) const;

  const std::shared_ptr<detail::RuntimeImpl>& impl() const { return impl_; }

  // Internal: handles are made by the runtime.
  explicit Runtime(std::shared_ptr<detail::RuntimeImpl> impl);

 private:
  struct AcrossProcesses {
    uint32_t num_ranks;
    const std::vector<uint32_t>* ranks;
    const CollectiveId* id;
  };
  StatusOr<Communicator> CreateCommunicator(const std::vector<Device>& devices,
                                            const AcrossProcesses* across) const;

  // Lifetime: the runtime (plugin, client, devices) lives while any Runtime,
  // Device or object handle refers to it, and is destroyed with the last one.
  std::shared_ptr<detail::RuntimeImpl> impl_;
  std::vector<Device> devices_;  // each shares ownership of *impl_
};

// ------------------------------------------------------------- memory refs
// A place in memory: a buffer at an offset, or a host pointer.
struct MemoryRef {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  void* host = nullptr;

  MemoryRef(const Buffer& b, uint64_t off = 0) : buffer(&b), offset(off) {}  // NOLINT
  MemoryRef(void* h) : host(h) {}                                             // NOLINT
  MemoryRef(const void* h) : host(const_cast<void*>(h)) {}                    // NOLINT
};

// One place per rank for a collective: whole buffers (a std::vector<Buffer>,
// each at offset 0) or parts of buffers ({MemoryRef(a, off), ...}).  It
// points at the caller's Buffers: pass it to the call, do not keep it.
class MemoryRefs {
 public:
  MemoryRefs(const std::vector<Buffer>& buffers);     // NOLINT: implicit by design
  MemoryRefs(std::vector<MemoryRef> refs) : refs_(std::move(refs)) {}  // NOLINT
  MemoryRefs(std::initializer_list<MemoryRef> refs) : refs_(refs) {}  // NOLINT
  size_t size() const { return refs_.size(); }
  const MemoryRef& operator[](size_t i) const { return refs_[i]; }
  std::vector<MemoryRef>::const_iterator begin() const { return refs_.begin(); }
  std::vector<MemoryRef>::const_iterator end() const { return refs_.end(); }

 private:
  std::vector<MemoryRef> refs_;
};

struct StreamOptions {
  uint32_t weight = 1;    // share of the device under contention
  int32_t priority = 0;   // larger first when both are ready
  bool non_blocking = false;  // not ordered with the default stream
};

// ------------------------------------------------------------- device
class Device {
 public:
  Device() = default;
  bool valid() const { return impl_ != nullptr; }
  const DeviceInfo& info() const;
  const std::string& backend() const;
  TsDevice* raw() const;
  // The runtime the device belongs to (a handle sharing its ownership).
  Runtime runtime() const;

  StatusOr<Buffer> allocate(uint64_t size,
                            TsBufferKind kind = TS_BUFFER_DEVICE) const;
  // A buffer over `size` bytes another library allocated on this device,
  // at `address` as Buffer::device_address() gives addresses (a
  // CUdeviceptr, a hipDeviceptr_t, a USM pointer, a host address on cpu),
  // used in place: destroying the buffer does not free the memory, and the
  // owner keeps it alive until then.  UNSUPPORTED where the plugin cannot
  // (vulkan, a plugin before ABI 1.6).
  StatusOr<Buffer> import_memory(uint64_t address, uint64_t size,
                                 TsBufferKind kind = TS_BUFFER_DEVICE) const;
  StatusOr<Stream> create_stream(const StreamOptions& options = {}) const;
  // The sequential default stream (see docs/memory-model.md).
  Stream default_stream() const;
  StatusOr<Event> create_event(uint32_t flags = 0) const;
  Status synchronize() const;

  // Loads a vendor binary in one of info().executable_formats.
  StatusOr<Executable> load_executable(const std::string& format,
                                       const std::string& path) const;
  StatusOr<Executable> load_executable(const std::string& format,
                                       const void* data, size_t size) const;

  bool operator==(const Device& o) const { return impl_ == o.impl_; }
  bool operator!=(const Device& o) const { return impl_ != o.impl_; }
  const std::shared_ptr<detail::DeviceImpl>& impl() const { return impl_; }

  // Internal: handles are made by the runtime.
  explicit Device(std::shared_ptr<detail::DeviceImpl> impl)
      : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::DeviceImpl> impl_;
};

// ------------------------------------------------------------- buffer
class Buffer {
 public:
  Buffer() = default;
  bool valid() const;  // false when null or destroyed
  uint64_t size() const;
  TsBufferKind kind() const;
  // Host address of the buffer when the host can address it, else nullptr.
  void* host_pointer() const;
  // The address the device's own API uses for the buffer (a CUdeviceptr on
  // cuda, a hipDeviceptr_t on hip, a USM pointer on level_zero, the host
  // address on cpu): what other libraries are given to use the memory in
  // place (DLPack).  Valid while the buffer lives.  UNSUPPORTED where the
  // plugin's memory has no such address (vulkan) or the plugin predates
  // ABI 1.6.
  StatusOr<uint64_t> device_address() const;
  Device device() const;
  // Whether the buffer was allocated on `device`; unlike device() == d it
  // copies no handle (a hot-path check).
  bool is_on(const Device& device) const;
  // Whether the buffer is alive, on `device`, and holds `bytes` bytes from
  // `offset`: valid() && is_on(device) && the range fits, in one call (the
  // per-argument check of Program::Run; the caller diagnoses a false).
  bool holds(const Device& device, uint64_t offset, uint64_t bytes) const;
  TsBuffer* raw() const;  // nullptr when destroyed
  // Waits for the device's pending work, then frees.  Later uses of any copy
  // of this handle return INVALID_HANDLE.
  Status destroy();

  const std::shared_ptr<detail::BufferImpl>& impl() const { return impl_; }

  // Internal: handles are made by the runtime.
  explicit Buffer(std::shared_ptr<detail::BufferImpl> impl)
      : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::BufferImpl> impl_;
};

// Synchronous copy; host memory may be pageable.  Direction from the refs.
Status copy(MemoryRef dst, MemoryRef src, uint64_t size);
Status memset(const Buffer& buffer, uint64_t offset, uint8_t value,
              uint64_t size);
// What advise() did: applied, emulated or ignored.  size 0: to the end.
StatusOr<TsHintResult> advise(const Buffer& buffer, TsAdvice advice,
                              const Device* device /* nullptr: host */,
                              uint64_t offset = 0, uint64_t size = 0);

// ------------------------------------------------------------- kernels
class KernelArg {
 public:
  static KernelArg buffer(const Buffer& b, uint64_t offset = 0) {
    KernelArg a;
    a.kind_ = TS_KERNEL_ARG_BUFFER;
    a.buffer_ = &b;
    a.offset_ = offset;
    return a;
  }
  template <typename T>
  static KernelArg scalar(const T& value) {
    static_assert(sizeof(T) <= sizeof(uint64_t) * 2, "scalar too large");
    KernelArg a;
    a.kind_ = TS_KERNEL_ARG_SCALAR;
    std::memcpy(a.bytes_, &value, sizeof(T));
    a.size_ = sizeof(T);
    return a;
  }
  TsKernelArgKind kind() const { return kind_; }
  const Buffer* buffer_ref() const { return buffer_; }
  uint64_t offset() const { return offset_; }
  const void* data() const { return bytes_; }
  size_t size() const { return size_; }

 private:
  TsKernelArgKind kind_ = TS_KERNEL_ARG_SCALAR;
  const Buffer* buffer_ = nullptr;
  uint64_t offset_ = 0;
  alignas(16) unsigned char bytes_[16] = {};
  size_t size_ = 0;
};

// What the binary fixes about a kernel (see TsExecutable_GetKernel_Args).
// What a launch requires of one argument (Stream::launch's `required`): a
// scalar of exactly `bytes` bytes, or a buffer of the stream's device with
// at least `bytes` bytes after the argument's offset.  Program::Run passes
// its parameters' sizes, so its fast path checks them in the launch's own
// pass over the arguments instead of a second one before it; a kernel
// launched by hand can be given the same guard against short buffers.
struct KernelArgRequirement {
  uint64_t bytes = 0;
  bool scalar = false;
};

struct KernelInfo {
  TsDim3 required_group_size{0, 0, 0};  // zeros: any
  uint32_t num_buffer_args = 0;
  uint32_t scalar_arg_bytes = 0;
  uint32_t static_shared_memory_bytes = 0;
  bool args_known = false;
};

class Kernel {
 public:
  Kernel() = default;
  bool valid() const;
  const std::string& name() const;
  const KernelInfo& info() const { return info_; }
  TsKernel* raw() const;
  // What each buffer argument does, in order (TS_PARAM_READ / TS_PARAM_WRITE
  // bits), from the kernel's compiled signature (KernelParamInfo::access).
  // The validation layer's hazard detector uses it; without it, every buffer
  // argument counts as read and written.  Nothing happens when validation
  // is off.
  void declare_buffer_access(const std::vector<uint32_t>& access) const;

 private:
  friend class Executable;
  friend class Stream;  // checks the kernel's Runtime at launch
  std::shared_ptr<detail::ExecutableImpl> exe_;
  TsKernel* kernel_ = nullptr;
  std::string name_;
  KernelInfo info_;
};

class Executable {
 public:
  Executable() = default;
  bool valid() const;
  StatusOr<Kernel> kernel(const std::string& name) const;
  Status destroy();
  const std::shared_ptr<detail::ExecutableImpl>& impl() const { return impl_; }

  // Internal: handles are made by the runtime.
  explicit Executable(std::shared_ptr<detail::ExecutableImpl> impl)
      : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::ExecutableImpl> impl_;
};

// ------------------------------------------------------------- streams
class Stream {
 public:
  Stream() = default;
  bool valid() const;
  bool is_default() const;
  Device device() const;
  bool is_on(const Device& device) const;  // device() == d, copying nothing
  bool usable_on(const Device& device) const;  // valid() && is_on(device)
  TsStream* raw() const;
  const StreamOptions& options() const;

  // Asynchronous copy: host memory must be pinned (Runtime::pinned_malloc or
  // register_host), else FAILED_PRECONDITION.
  Status copy_async(MemoryRef dst, MemoryRef src, uint64_t size) const;
  Status memset_async(const Buffer& buffer, uint64_t offset, uint8_t value,
                      uint64_t size) const;
  Status launch(const Kernel& kernel, TsDim3 grid, TsDim3 group_size,
                const std::vector<KernelArg>& args,
                uint64_t shared_memory_bytes = 0) const;
  // The same with the arguments as an array (no vector to build per launch).
  // `required`, when not null, holds one KernelArgRequirement per argument,
  // checked in the pass that converts the arguments: a launch that breaks
  // one queues nothing and says which argument and why.
  Status launch(const Kernel& kernel, TsDim3 grid, TsDim3 group_size,
                const KernelArg* args, size_t num_args,
                uint64_t shared_memory_bytes = 0,
                const KernelArgRequirement* required = nullptr) const;
  Status launch(const GraphExec& exec) const;

  Status record(const Event& event) const;  // event.record(*this)
  Status wait(const Event& event) const;
  Status synchronize() const;
  StatusOr<bool> query() const;  // true when idle

  Status begin_capture() const;
  StatusOr<Graph> end_capture() const;

  // Migrates managed memory toward `target` (nullptr: host) on this stream.
  StatusOr<TsHintResult> prefetch(const Buffer& buffer,
                                  const Device* target, uint64_t offset = 0,
                                  uint64_t size = 0) const;

  // Returns at once; queued work still completes (docs/memory-model.md).
  // The default stream cannot be destroyed.
  Status destroy();

  const std::shared_ptr<detail::StreamImpl>& impl() const { return impl_; }

  // Internal: handles are made by the runtime.
  explicit Stream(std::shared_ptr<detail::StreamImpl> impl)
      : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::StreamImpl> impl_;
};

// ------------------------------------------------------------- events
class Event {
 public:
  Event() = default;
  bool valid() const;
  TsEvent* raw() const;
  Status record(const Stream& stream) const;
  StatusOr<bool> query() const;  // true when complete or never recorded
  Status synchronize() const;
  Status destroy();
  // Milliseconds from start to end; both recorded and complete.  Negative
  // when `end` completed before `start` (the events passed in the other
  // order), as cuEventElapsedTime.
  static StatusOr<double> elapsed_ms(const Event& start, const Event& end);

  const std::shared_ptr<detail::EventImpl>& impl() const { return impl_; }

  // Internal: handles are made by the runtime.
  explicit Event(std::shared_ptr<detail::EventImpl> impl)
      : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::EventImpl> impl_;
};

// ------------------------------------------------------------- graphs
class Graph {
 public:
  Graph() = default;
  bool valid() const;
  size_t num_nodes() const;
  size_t num_edges() const;
  StatusOr<GraphExec> instantiate() const;
  Status destroy();

  // Internal: handles are made by the runtime.
  explicit Graph(std::shared_ptr<detail::GraphImpl> impl)
      : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::GraphImpl> impl_;
};

class GraphExec {
 public:
  GraphExec() = default;
  bool valid() const;
  TsGraphExec* raw() const;
  Status destroy();
  const std::shared_ptr<detail::GraphExecImpl>& impl() const { return impl_; }

  // Internal: handles are made by the runtime.
  explicit GraphExec(std::shared_ptr<detail::GraphExecImpl> impl)
      : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::GraphExecImpl> impl_;
};

// ------------------------------------------------------------- collectives
class Communicator {
 public:
  Communicator() = default;
  // A communicator whose ranks span processes (tessera/process_group.hpp;
  // tessera/mpi.hpp makes them over MPI): `local_devices` are this
  // process's ranks in rank order, and every collective takes one buffer
  // and stream per local rank; `provider` moves the data between processes.
  static Communicator FromProvider(std::vector<Device> local_devices,
                                   std::shared_ptr<CollectiveProvider> provider);
  bool valid() const;
  size_t size() const;  // ranks (of every process)
  const std::vector<Device>& devices() const;  // this process's ranks
  // "" for the plugin's own communicator, else the provider ("mpi").
  std::string provider() const;

  // Arrays are indexed by rank (by local rank, devices() order, for a
  // communicator across processes); see TsCommunicator_Collective_Args for
  // the meaning of `count` per operation.  send and recv are device
  // buffers, whole or from an offset (MemoryRefs); host pointers are
  // refused.
  Status all_reduce(const MemoryRefs& send,
                    const MemoryRefs& recv, uint64_t count,
                    TsDataType dtype, TsReduceOp op,
                    const std::vector<Stream>& streams,
                    bool deterministic = false) const;
  Status broadcast(const MemoryRefs& send,
                   const MemoryRefs& recv, uint64_t count,
                   TsDataType dtype, uint32_t root,
                   const std::vector<Stream>& streams) const;
  Status all_gather(const MemoryRefs& send,
                    const MemoryRefs& recv, uint64_t count,
                    TsDataType dtype, const std::vector<Stream>& streams) const;
  Status reduce_scatter(const MemoryRefs& send,
                        const MemoryRefs& recv, uint64_t count,
                        TsDataType dtype, TsReduceOp op,
                        const std::vector<Stream>& streams,
                        bool deterministic = false) const;
  Status destroy();

  // Internal: handles are made by the runtime.
  explicit Communicator(std::shared_ptr<detail::CommunicatorImpl> impl)
      : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::CommunicatorImpl> impl_;
};

size_t DataTypeSize(TsDataType dtype);
const char* DataTypeName(TsDataType dtype);
// "all_reduce", "broadcast", ...; "sum", "prod", "max", "min".
const char* CollectiveOpName(TsCollectiveOp op);
const char* ReduceOpName(TsReduceOp op);

}  // namespace tessera

#endif  // TESSERA_RUNTIME_HPP_
