// Implementation objects behind the C++ handles of tessera/runtime.hpp.
//
// Ownership graph (no cycles): RuntimeImpl owns the plugin, the client and
// its DeviceImpls.  Public Device handles are aliasing shared_ptrs into the
// RuntimeImpl, so holding a Device keeps the whole runtime alive.  Every other
// impl holds a Device handle.  Destruction order: objects -> devices ->
// client (Client_Destroy waits for work) -> plugin library (unmapped last).
#ifndef TESSERA_CORE_RUNTIME_IMPL_HPP_
#define TESSERA_CORE_RUNTIME_IMPL_HPP_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "log.hpp"
#include "pinned_registry.hpp"
#include "plugin_library.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

struct RuntimeImpl : std::enable_shared_from_this<RuntimeImpl> {
  ~RuntimeImpl();

  std::shared_ptr<PluginLibrary> plugin;
  TsClient* client = nullptr;
  std::string backend;
  std::vector<PluginCandidate> candidates;
  std::vector<std::unique_ptr<DeviceImpl>> owned_devices;
  std::vector<Device> devices;  // visible ones, as handles
  PinnedRegistry pinned;

  const PluginLibrary& lib() const { return *plugin; }
  // Builds handles for the devices that pass `visible` (empty: all).
  Status InitDevices(const std::string& visible);
};

struct DeviceImpl {
  RuntimeImpl* runtime = nullptr;  // owner; alive while any handle is
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
  std::vector<Device> devices;
};

// "Stream was destroyed" / "null Stream handle" errors.
Status InvalidHandle(const char* what, bool null_handle);

}  // namespace tessera::detail

// Checks a handle's impl pointer and liveness; returns INVALID_HANDLE.
#define TESSERA_CHECK_HANDLE(impl_ptr, what)                                \
  do {                                                                      \
    if (!(impl_ptr)) return ::tessera::detail::InvalidHandle(what, true);   \
    if (!(impl_ptr)->Alive())                                               \
      return ::tessera::detail::InvalidHandle(what, false);                 \
  } while (0)

#endif  // TESSERA_CORE_RUNTIME_IMPL_HPP_
