// ValidationLayer: slots and dispatch, reports, the handle registry and the
// layer's own error objects.  The entry points are in validation_entries.cpp.
#include "validation_layer.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <utility>

namespace tessera::detail {

namespace {

std::array<std::atomic<ValidationLayer*>, ValidationLayer::kSlots> g_slots{};

template <size_t Slot>
struct ValidationDispatch {
#define TESSERA_VALIDATION_THUNK(name)                                     \
  static TsError* name(Ts##name##_Args* args) {                            \
    return g_slots[Slot].load(std::memory_order_acquire)->name(args);      \
  }
  TESSERA_VALIDATION_ENTRIES(TESSERA_VALIDATION_THUNK)
#undef TESSERA_VALIDATION_THUNK

  // The slot's table: the layer's entry where the plugin has one, null where
  // it has none (the core then reports UNSUPPORTED without calling).
  static void Fill(const TsPluginApi& next, TsPluginApi* table) {
    *table = next;
#define TESSERA_VALIDATION_FILL(name) \
  if (next.name) table->name = &ValidationDispatch::name;
    TESSERA_VALIDATION_ENTRIES(TESSERA_VALIDATION_FILL)
#undef TESSERA_VALIDATION_FILL
  }
};

using FillFn = void (*)(const TsPluginApi&, TsPluginApi*);

template <size_t... I>
constexpr std::array<FillFn, sizeof...(I)> MakeFills(std::index_sequence<I...>) {
  return {&ValidationDispatch<I>::Fill...};
}
constexpr auto kFills = MakeFills(std::make_index_sequence<ValidationLayer::kSlots>());

}  // namespace

StatusOr<std::unique_ptr<ValidationLayer>> ValidationLayer::Create(const TsPluginApi& next,
                                                                   std::string plugin,
                                                                   ValidationCallback report) {
  std::unique_ptr<ValidationLayer> layer(new ValidationLayer());
  layer->plugin_ = std::move(plugin);
  layer->report_ = std::move(report);
  layer->next_ = next;
  ValidationLayer* self = layer.get();
  layer->hazards_.describe_buffer = [self](const void* key) {
    // The layer's lock is held (reports are made under it).
    auto it = self->live_.find(key);
    return it == self->live_.end() ? std::string("a freed buffer")
                                   : self->DescribeBuffer(key, it->second);
  };
  for (size_t slot = 0; slot < kSlots; ++slot) {
    ValidationLayer* expected = nullptr;
    if (g_slots[slot].compare_exchange_strong(expected, layer.get(), std::memory_order_acq_rel)) {
      layer->slot_ = slot;
      kFills[slot](next, &layer->table_);
      return layer;
    }
  }
  return Status(StatusCode::kResourceExhausted,
                "the validation layer serves at most " + std::to_string(kSlots) +
                    " runtimes at once in one process; this one runs without it");
}

ValidationLayer::~ValidationLayer() { g_slots[slot_].store(nullptr, std::memory_order_release); }

const char* ValidationLayer::KindName(Kind kind) {
  switch (kind) {
    case Kind::kClient: return "TsClient";
    case Kind::kDevice: return "TsDevice";
    case Kind::kBuffer: return "TsBuffer";
    case Kind::kStream: return "TsStream";
    case Kind::kEvent: return "TsEvent";
    case Kind::kGraph: return "TsGraph";
    case Kind::kGraphExec: return "TsGraphExec";
    case Kind::kExecutable: return "TsExecutable";
    case Kind::kKernel: return "TsKernel";
    case Kind::kCommunicator: return "TsCommunicator";
    case Kind::kCompilation: return "TsCompilation";
  }
  return "handle";
}

// ------------------------------------------------------------ reports

void ValidationLayer::Report(ValidationMessage::Severity severity, const char* kind,
                             const std::string& text) {
  ++num_reports_;
  ValidationMessage message;
  message.severity = severity;
  message.kind = kind;
  message.text = "tessera validation (" + plugin_ + "): " +
                 (severity == ValidationMessage::Severity::kError ? "error: " : "warning: ") +
                 text;
  if (report_) {
    report_(message);
  } else {
    std::fprintf(stderr, "%s\n", message.text.c_str());
    std::fflush(stderr);
  }
}

TsError* ValidationLayer::Refuse(TsErrorCode code, const char* kind, const std::string& text) {
  Report(ValidationMessage::Severity::kError, kind, text);
  auto error = std::make_unique<LayerError>();
  error->code = code;
  error->message = "validation layer: " + text;
  TsError* handle = reinterpret_cast<TsError*>(error.get());
  errors_.emplace(handle, std::move(error));
  return handle;
}

bool ValidationLayer::IsOwnError(const TsError* error) const {
  return errors_.count(error) != 0;
}

uint64_t ValidationLayer::num_reports() const {
  std::lock_guard<std::mutex> lock(mu_);
  return num_reports_;
}

// ------------------------------------------------------------ handles

ValidationLayer::Object* ValidationLayer::Find(const void* handle, Kind kind) {
  auto it = live_.find(handle);
  return it != live_.end() && it->second.kind == kind ? &it->second : nullptr;
}

const void* ValidationLayer::ClientOf(const void* handle) const {
  auto it = live_.find(handle);
  return it == live_.end() ? nullptr : it->second.client;
}

void ValidationLayer::Create(const void* handle, Kind kind, Object object) {
  object.kind = kind;
  destroyed_.erase(handle);  // the address is reused by a new object
  live_[handle] = std::move(object);
}

void ValidationLayer::Destroy(const void* handle, const CallSite& where) {
  auto it = live_.find(handle);
  if (it == live_.end()) return;
  Destroyed dead{it->second.kind, it->second.created, where};
  if (it->second.kind == Kind::kBuffer) hazards_.ForgetBuffer(handle);
  live_.erase(it);
  if (destroyed_.emplace(handle, dead).second) {
    destroyed_order_.push_back(handle);
    if (destroyed_order_.size() > kMaxDestroyedRemembered) {
      destroyed_.erase(destroyed_order_.front());
      destroyed_order_.pop_front();
    }
  } else {
    destroyed_[handle] = dead;
  }
}

ValidationLayer::Taken ValidationLayer::TakeForDestroy(const std::vector<const void*>& handles,
                                                       const CallSite& where) {
  Taken taken;
  for (const void* h : handles) {
    auto it = live_.find(h);
    if (it == live_.end()) continue;
    const Object& o = it->second;
    if (o.kind == Kind::kBuffer && o.pinned_host) {
      auto range = host_ranges_.find(reinterpret_cast<uintptr_t>(o.pinned_host));
      if (range != host_ranges_.end()) {
        taken.ranges.emplace_back(range->first, range->second);
        host_ranges_.erase(range);
      }
    }
    if (o.kind == Kind::kDevice) {
      TsDevice* d = static_cast<TsDevice*>(const_cast<void*>(h));
      default_streams_.erase(d);
      device_numbers_.erase(d);
      tracker_devices_.erase(d);
    }
    taken.objects.emplace_back(h, o);
    Destroy(h, where);
  }
  return taken;
}

void ValidationLayer::Restore(Taken taken) {
  for (auto& [h, o] : taken.objects) {
    destroyed_.erase(h);
    live_[h] = std::move(o);
  }
  for (auto& [start, range] : taken.ranges) host_ranges_[start] = std::move(range);
}

TsError* ValidationLayer::CheckHandle(const void* handle, Kind kind, const char* entry,
                                      const char* what) {
  if (handle == nullptr) return nullptr;
  auto live = live_.find(handle);
  if (live != live_.end()) {
    if (live->second.kind == kind) return nullptr;
    return Refuse(TS_ERROR_INVALID_HANDLE, "foreign-handle",
                  std::string(entry) + ": '" + what + "' is a " + KindName(live->second.kind) +
                      " (created by " + live->second.created.Describe() + "), not a " +
                      KindName(kind));
  }
  auto dead = destroyed_.find(handle);
  if (dead != destroyed_.end())
    return Refuse(TS_ERROR_INVALID_HANDLE, "destroyed-handle",
                  std::string(entry) + ": '" + what + "' is a " + KindName(dead->second.kind) +
                      " that was destroyed by " + dead->second.destroyed.Describe() +
                      "; it was created by " + dead->second.created.Describe() +
                      ". Create a new one, or destroy it only after its last use");
  return Refuse(TS_ERROR_INVALID_HANDLE, "foreign-handle",
                std::string(entry) + ": '" + what + "' is not a " + KindName(kind) +
                    " of this client (of another client, never created, or destroyed "
                    "long ago)");
}

std::string ValidationLayer::DestroyedAt(const void* handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto dead = destroyed_.find(handle);
  return dead == destroyed_.end() ? std::string() : dead->second.destroyed.Describe();
}

void ValidationLayer::DescribeKernel(TsKernel* kernel, std::vector<uint32_t> buffer_access) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Object* k = Find(kernel, Kind::kKernel)) {
    k->buffer_access = std::move(buffer_access);
    k->access_known = true;
  }
}

std::string ValidationLayer::DescribeBuffer(const void* buffer, const Object& object) const {
  char address[32];
  std::snprintf(address, sizeof address, "%p", buffer);
  return std::string("buffer ") + address + " (" + std::to_string(object.size) +
         " bytes, created by " + object.created.Describe(2) + ")";
}

uint32_t ValidationLayer::TrackerDevice(TsDevice* device) {
  return tracker_devices_.emplace(device, static_cast<uint32_t>(tracker_devices_.size()))
      .first->second;
}

HazardTracker::StreamId ValidationLayer::DefaultStreamOf(TsDevice* device) {
  auto it = default_streams_.find(device);
  if (it != default_streams_.end()) return it->second;
  uint32_t number = device_numbers_.emplace(device, static_cast<uint32_t>(device_numbers_.size()))
                        .first->second;
  HazardTracker::StreamId id = hazards_.AddStream(
      TrackerDevice(device), /*is_default=*/true, false,
      "the default stream of device " + std::to_string(number));
  default_streams_.emplace(device, id);
  return id;
}

HazardTracker::StreamId ValidationLayer::StreamOf(TsStream* stream, TsDevice* device_if_null) {
  if (stream != nullptr)
    if (Object* s = Find(stream, Kind::kStream)) return s->stream_id;
  return DefaultStreamOf(device_if_null);
}

bool ValidationLayer::IsPinned(const void* pointer, uint64_t size) const {
  uintptr_t p = reinterpret_cast<uintptr_t>(pointer);
  auto it = host_ranges_.upper_bound(p);
  if (it == host_ranges_.begin()) return false;
  --it;
  return p - it->first <= it->second.size && size <= it->second.size - (p - it->first);
}

void ValidationLayer::Operate(TsStream* stream, TsDevice* device,
                              std::vector<HazardTracker::Access> accesses) {
  Object* s = stream ? Find(stream, Kind::kStream) : nullptr;
  if (s && s->capture != 0) {
    auto& list = captures_[s->capture];
    for (auto& a : accesses) list.push_back(std::move(a));
    return;
  }
  HazardTracker::StreamId id = StreamOf(stream, device);
  for (const std::string& hazard : hazards_.Operate(id, accesses))
    Report(ValidationMessage::Severity::kWarning, "hazard", hazard);
}

}  // namespace tessera::detail
