// The validation layer (tessera/validation.hpp; docs/runtime.md,
// "Validation"): a table of the plugin ABI stacked over a plugin's own
// table, as a Vulkan layer is over a driver.  Each entry checks the call
// against what the layer has seen, forwards it to the plugin, and records
// what the call did (objects created and destroyed, where; stream order;
// buffer accesses for the hazard detector).
//
// Dispatch: ABI entries are plain C function pointers with no user data, so
// the layer takes one of kSlots process-wide slots, and its table holds the
// slot's thunks (ValidationDispatch<slot>), which find the layer through
// the slot.  A process validates at most kSlots runtimes at once; the next
// one runs without the layer and says so.
//
// Ownership: the PluginLibrary owns its layer (the layer outlives the
// client: leaks are listed in Client_Destroy).  The layer holds no plugin
// objects of its own.
//
// Thread safety: every entry may be called from any thread.  One mutex
// guards the layer's records; it is never held while the plugin runs.
#ifndef TESSERA_CORE_VALIDATION_LAYER_HPP_
#define TESSERA_CORE_VALIDATION_LAYER_HPP_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "call_site.hpp"
#include "hazard_tracker.hpp"
#include "tessera/plugin.h"
#include "tessera/status.hpp"
#include "tessera/validation.hpp"

// Every entry point of TsPluginApi, in table order (plugin.h keeps the list).
#define TESSERA_VALIDATION_ENTRIES(X) TS_PLUGIN_API_FOR_EACH_ENTRY(X)

namespace tessera::detail {

// An error the layer returns instead of calling the plugin.  The core (and
// any caller of the table) reads and destroys it through the same table, so
// the layer's Error_* entries recognize their own objects.
struct LayerError {
  TsErrorCode code;
  std::string message;
};

class ValidationLayer {
 public:
  static constexpr size_t kSlots = 32;
  static constexpr size_t kMaxDestroyedRemembered = 4096;

  // Stacks a layer over `next` (a full-size table; entries it lacks stay
  // null).  `plugin` names the plugin in reports.  Fails when every slot is
  // taken.
  static StatusOr<std::unique_ptr<ValidationLayer>> Create(const TsPluginApi& next,
                                                           std::string plugin,
                                                           ValidationCallback report);
  ~ValidationLayer();
  ValidationLayer(const ValidationLayer&) = delete;
  ValidationLayer& operator=(const ValidationLayer&) = delete;

  // The table to call instead of the plugin's.
  const TsPluginApi& table() const { return table_; }

  // What a kernel's buffer parameters do (TS_PARAM_* per buffer argument,
  // in order), from its compiled signature; unknown kernels are taken to
  // read and write every buffer argument.
  void DescribeKernel(TsKernel* kernel, std::vector<uint32_t> buffer_access);
  // Where the C++ handle's object was destroyed, for the core's own
  // "was destroyed" errors ("" when unknown).
  std::string DestroyedAt(const void* handle) const;
  // Reports made so far (all kinds).
  uint64_t num_reports() const;

#define TESSERA_VALIDATION_DECLARE(name) TsError* name(Ts##name##_Args* args);
  TESSERA_VALIDATION_ENTRIES(TESSERA_VALIDATION_DECLARE)
#undef TESSERA_VALIDATION_DECLARE

 private:
  enum class Kind {
    kClient, kDevice, kBuffer, kStream, kEvent, kGraph, kGraphExec,
    kExecutable, kKernel, kCommunicator, kCompilation
  };
  static const char* KindName(Kind kind);

  struct Object {
    Kind kind = Kind::kBuffer;
    CallSite created;
    // The client it belongs to (a client: itself; null: none, e.g. a
    // compilation made without a device).  A caller may create several
    // clients through one table: Client_Destroy ends only its own objects.
    const void* client = nullptr;
    TsDevice* device = nullptr;  // buffers, streams, events, executables
    // Buffers.
    uint64_t size = 0;
    void* pinned_host = nullptr;  // TS_BUFFER_HOST_PINNED: its host pointer
    // Streams.
    HazardTracker::StreamId stream_id = 0;
    bool is_default = false;
    uint64_t capture = 0;  // capture it takes part in; 0 none
    // Events.
    bool recorded = false;
    uint64_t recorded_in_capture = 0;
    HazardTracker::Clock snapshot;
    // Graphs and executable graphs: what one launch touches.
    std::vector<HazardTracker::Access> accesses;
    // Kernels.
    TsExecutable* executable = nullptr;
    std::string name;
    std::shared_ptr<const std::string> shared_name;  // for AccessWhat
    std::vector<uint32_t> buffer_access;
    // Communicators across processes (ABI 1.4): every process's ranks;
    // 0 for one process (devices.size()).
    uint32_t num_ranks = 0;
    bool access_known = false;
    uint32_t num_buffer_args = 0;
    // Communicators.
    std::vector<TsDevice*> devices;
  };
  struct Destroyed {
    Kind kind;
    CallSite created, destroyed;
  };
  struct HostRange {
    uint64_t size = 0;
    bool registered = false;  // Host_Register (else Host_Allocate)
    CallSite created;
    bool of_buffer = false;   // a TS_BUFFER_HOST_PINNED buffer's memory
    const void* client = nullptr;
  };

  ValidationLayer() = default;

  // ---- reporting (the lock is held)
  void Report(ValidationMessage::Severity severity, const char* kind, const std::string& text);
  TsError* Refuse(TsErrorCode code, const char* kind, const std::string& text);

  // ---- handles (the lock is held)
  // Null when `handle` is a live object of `kind`; else the refusal, which
  // says whether it was destroyed (and where) or is foreign.  A null handle
  // passes: the plugin rejects it as the ABI documents.
  TsError* CheckHandle(const void* handle, Kind kind, const char* entry, const char* what);
  Object* Find(const void* handle, Kind kind);
  // The client `handle` belongs to (null when unknown).
  const void* ClientOf(const void* handle) const;
  void Create(const void* handle, Kind kind, Object object);
  // A buffer the plugin made (Buffer_Allocate, Buffer_Import): tracked, and
  // its host pointer, when page-locked, registered as pinned memory.  Holds
  // mu_.
  void CreateBuffer(TsBuffer* buffer, TsDevice* device, uint64_t size, const CallSite& site, void* pinned_host);
  void Destroy(const void* handle, const CallSite& where);
  // A destroy call moves its objects to the destroyed records BEFORE the
  // plugin frees them: once freed, an address may be reused at once by an
  // object another thread creates, so the registry must not be touched for
  // them after the call.  If the plugin refuses, Restore brings them back.
  struct Taken {
    std::vector<std::pair<const void*, Object>> objects;
    std::vector<std::pair<uintptr_t, HostRange>> ranges;
  };
  Taken TakeForDestroy(const std::vector<const void*>& handles, const CallSite& where);
  void Restore(Taken taken);
  std::string DescribeBuffer(const void* buffer, const Object& object) const;
  HazardTracker::StreamId StreamOf(TsStream* stream, TsDevice* device_if_null);
  HazardTracker::StreamId DefaultStreamOf(TsDevice* device);
  bool IsPinned(const void* pointer, uint64_t size) const;
  TsError* CheckRef(const TsMemoryRef& ref, uint64_t size, const char* entry, const char* side);
  // Issues an operation on `stream` (hazards reported), or adds its accesses
  // to the capture the stream takes part in.
  void Operate(TsStream* stream, TsDevice* device, std::vector<HazardTracker::Access> accesses);
  void ForgetDevice(TsDevice* device);

  // ---- errors the layer makes
  bool IsOwnError(const TsError* error) const;

  std::string plugin_;
  ValidationCallback report_;
  size_t slot_ = 0;
  TsPluginApi next_{};
  TsPluginApi table_{};

  mutable std::mutex mu_;
  std::unordered_map<const void*, Object> live_;
  std::unordered_map<const void*, Destroyed> destroyed_;
  std::deque<const void*> destroyed_order_;
  std::map<uintptr_t, HostRange> host_ranges_;  // by start address
  std::unordered_map<TsDevice*, HazardTracker::StreamId> default_streams_;
  // A device's ordinal in its client (for reports), and a number unique in
  // the layer (the hazard tracker's device: clients' devices never mix).
  std::unordered_map<TsDevice*, uint32_t> device_numbers_;
  std::unordered_map<TsDevice*, uint32_t> tracker_devices_;
  uint32_t TrackerDevice(TsDevice* device);
  HazardTracker hazards_;
  uint64_t next_capture_ = 1;
  std::unordered_map<uint64_t, std::vector<HazardTracker::Access>> captures_;
  uint64_t num_reports_ = 0;
  std::unordered_map<const TsError*, std::unique_ptr<LayerError>> errors_;
};

}  // namespace tessera::detail

#endif  // TESSERA_CORE_VALIDATION_LAYER_HPP_
