// Implementation objects behind the C++ handles of tessera/runtime.hpp.
//
// Ownership and lifetime (no cycles):
//  - RuntimeImpl owns the plugin library, the plugin's client and one
//    DeviceImpl per device the plugin lists.
//  - A public Device handle is an aliasing shared_ptr: it points at a
//    DeviceImpl and shares ownership of the RuntimeImpl, so a Device (and
//    every object that holds one: Buffer, Stream, Event, Graph, GraphExec,
//    Executable, Communicator) keeps the whole runtime and its plugin alive.
//  - Nothing owned by a RuntimeImpl holds a Device handle or any other
//    shared ownership of the RuntimeImpl: that would be a cycle, and the
//    runtime would never be destroyed (Client_Destroy never called, the
//    Vulkan device and pipeline cache never released, vendor threads still
//    running at exit).  The handles Runtime::devices() returns live in the
//    Runtime handle itself (Runtime::devices_); RuntimeImpl keeps only plain
//    pointers to the visible devices.
//  - Destruction therefore starts when the last Runtime, Device or object
//    handle goes: every plugin object is already destroyed by then (each one
//    held a Device), then ~RuntimeImpl drops the DeviceImpls, calls
//    Client_Destroy (which waits for the device's work), and finally unmaps
//    the plugin library (the `plugin` member, declared first, is destroyed
//    last).
//
// Thread safety: RuntimeImpl and DeviceImpl are immutable after
// Runtime::Create; the pinned registry has its own lock.
#ifndef TESSERA_CORE_RUNTIME_IMPL_HPP_
#define TESSERA_CORE_RUNTIME_IMPL_HPP_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "fault.hpp"
#include "log.hpp"
#include "pinned_registry.hpp"
#include "plugin_library.hpp"
#include "trace.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

struct RuntimeImpl {
  ~RuntimeImpl();

  std::shared_ptr<PluginLibrary> plugin;
  TsClient* client = nullptr;
  std::string backend;
  std::vector<PluginCandidate> candidates;
  std::vector<std::unique_ptr<DeviceImpl>> owned_devices;
  // The devices that passed TESSERA_VISIBLE_DEVICES, in its order.  Not
  // owning (see above): Runtime turns them into Device handles.
  std::vector<DeviceImpl*> visible_devices;
  PinnedRegistry pinned;
  // TESSERA_TRACE (trace.hpp): null when tracing is off.  Destroyed first
  // in ~RuntimeImpl: it destroys the plugin events it used.
  std::unique_ptr<RuntimeTrace> trace;
  // TESSERA_FAULT (fault.hpp): null when no fault is injected.
  std::unique_ptr<FaultInjector> faults;

  const PluginLibrary& lib() const { return *plugin; }
  // Lists the plugin's devices and keeps those that pass `visible` (empty:
  // all).
  // `visible_source` names where `visible` came from, for messages.
  Status InitDevices(const std::string& visible,
                     const std::string& visible_source);
};

struct DeviceImpl {
  RuntimeImpl* runtime = nullptr;  // owner; alive while any Device handle is
  TsDevice* raw = nullptr;
  TsStream* default_stream = nullptr;
  DeviceInfo info;

  const PluginLibrary& lib() const { return *runtime->plugin; }
  std::string Describe() const;  // "cpu device 0 (name)"
};

// Base of every destroyable object: the liveness flag that turns use after
// destroy() into INVALID_HANDLE.
struct HandleState {
  std::atomic<bool> alive{true};
  // The plugin handle Release() destroyed: with the validation layer on,
  // "was destroyed" errors say where (ValidationLayer::DestroyedAt).
  const void* released = nullptr;
  bool Alive() const { return alive.load(std::memory_order_acquire); }
  // True exactly once: the caller that flips it releases the object.
  bool MarkDestroyed() { return alive.exchange(false); }
};

struct BufferImpl : HandleState {
  ~BufferImpl();
  Status Release();
  Device device;
  TsBuffer* raw = nullptr;
  uint64_t size = 0;
  TsBufferKind kind = TS_BUFFER_DEVICE;
  void* host_pointer = nullptr;
};

struct StreamImpl : HandleState {
  ~StreamImpl();
  Status Release();
  Device device;
  TsStream* raw = nullptr;
  StreamOptions options;
  bool is_default = false;
  // The stream's track in the runtime's trace, (pid << 32) | tid, once the
  // trace named it (RuntimeTrace::TrackBits); 0 before.
  mutable std::atomic<uint64_t> trace_track{0};
};

struct EventImpl : HandleState {
  ~EventImpl();
  Status Release();
  Device device;
  TsEvent* raw = nullptr;
};

struct GraphImpl : HandleState {
  ~GraphImpl();
  Status Release();
  Device device;
  TsGraph* raw = nullptr;
};

struct GraphExecImpl : HandleState {
  ~GraphExecImpl();
  Status Release();
  Device device;
  TsGraphExec* raw = nullptr;
};

struct ExecutableImpl : HandleState {
  ~ExecutableImpl();
  Status Release();
  Device device;
  TsExecutable* raw = nullptr;
  std::string origin;  // path or "<memory>", for messages
};

struct CommunicatorImpl : HandleState {
  ~CommunicatorImpl();
  Status Release();
  std::shared_ptr<RuntimeImpl> runtime;
  TsCommunicator* raw = nullptr;
  std::vector<Device> devices;  // this process's ranks
  // Set for a communicator across processes (Communicator::FromProvider).
  std::shared_ptr<CollectiveProvider> provider;
  // A plugin's communicator across processes (ABI 1.4): every process's
  // ranks; 0 for one process (devices.size() ranks).
  uint32_t num_ranks = 0;
};

// "Stream was destroyed" / "null Stream handle" errors; `destroyed_at`
// (may be empty) says where, when the validation layer knows.
Status InvalidHandle(const char* what, bool null_handle, const std::string& destroyed_at = "");

// Where the validation layer saw `impl`'s plugin object destroyed ("" when
// it is off or does not know).
inline const RuntimeImpl* RuntimeOfImpl(const CommunicatorImpl& c) { return c.runtime.get(); }
template <typename Impl>
const RuntimeImpl* RuntimeOfImpl(const Impl& impl) {
  return impl.device.impl() ? impl.device.impl()->runtime : nullptr;
}
template <typename Impl>
std::string DestroyedAt(const Impl& impl) {
  const RuntimeImpl* rt = RuntimeOfImpl(impl);
  if (!rt || !rt->plugin || !rt->plugin->validation() || !impl.released) return "";
  return rt->plugin->validation()->DestroyedAt(impl.released);
}

}  // namespace tessera::detail

// Checks a handle's impl pointer and liveness; returns INVALID_HANDLE.
// The host slice of an API call on the calling thread's track when the
// runtime `rt` (a RuntimeImpl*) traces; `_trace_api.args` takes its details.
#define TESSERA_TRACE_API(rt, name) \
  ::tessera::detail::ApiScope _trace_api((rt) ? (rt)->trace.get() : nullptr, name)

#define TESSERA_CHECK_HANDLE(impl_ptr, what)                                \
  do {                                                                      \
    if (!(impl_ptr)) return ::tessera::detail::InvalidHandle(what, true);   \
    if (!(impl_ptr)->Alive())                                               \
      return ::tessera::detail::InvalidHandle(                              \
          what, false, ::tessera::detail::DestroyedAt(*(impl_ptr)));        \
  } while (0)

#endif  // TESSERA_CORE_RUNTIME_IMPL_HPP_
