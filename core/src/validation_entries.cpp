// ValidationLayer: the entry points.  Each one (1) reads only the fields its
// caller's struct_size says are there (a short struct goes to the plugin
// unread, which rejects it), (2) refuses what would make the plugin touch
// freed or foreign memory, (3) forwards, and (4) on success records what
// the call did.  The layer's lock is never held across the forward.
#include <algorithm>

#include "tessera/runtime.hpp"
#include "validation_layer.hpp"

namespace tessera::detail {

namespace {

using Access = HazardTracker::Access;
using Severity = ValidationMessage::Severity;

// Arguments beyond these bounds are the plugin's to reject; the layer does
// not walk them.
constexpr size_t kMaxArgsWalked = 4096;
constexpr size_t kMaxLeaksListed = 64;

#define TESSERA_HAS(args, Type, field) ((args) != nullptr && TS_FIELD_PRESENT(args, Type, field))

}  // namespace

// ------------------------------------------------------------ errors

TsError* ValidationLayer::Error_Destroy(TsError_Destroy_Args* args) {
  if (TESSERA_HAS(args, TsError_Destroy_Args, error)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (errors_.erase(args->error) != 0) return nullptr;
  }
  return next_.Error_Destroy(args);
}

TsError* ValidationLayer::Error_Message(TsError_Message_Args* args) {
  if (TESSERA_HAS(args, TsError_Message_Args, message_size)) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = errors_.find(args->error);
    if (it != errors_.end()) {
      args->message = it->second->message.c_str();
      args->message_size = it->second->message.size();
      return nullptr;
    }
  }
  return next_.Error_Message(args);
}

TsError* ValidationLayer::Error_GetCode(TsError_GetCode_Args* args) {
  if (TESSERA_HAS(args, TsError_GetCode_Args, code)) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = errors_.find(args->error);
    if (it != errors_.end()) {
      args->code = it->second->code;
      return nullptr;
    }
  }
  return next_.Error_GetCode(args);
}

// ------------------------------------------------------------ plugin, client, devices

TsError* ValidationLayer::Plugin_GetInfo(TsPlugin_GetInfo_Args* args) {
  return next_.Plugin_GetInfo(args);
}

TsError* ValidationLayer::Client_Create(TsClient_Create_Args* args) {
  CallSite site = CallSite::Capture("Client_Create");
  TsError* error = next_.Client_Create(args);
  if (error == nullptr && TESSERA_HAS(args, TsClient_Create_Args, client) && args->client) {
    std::lock_guard<std::mutex> lock(mu_);
    Object client;
    client.created = site;
    client.client = args->client;
    Create(args->client, Kind::kClient, std::move(client));
  }
  return error;
}

TsError* ValidationLayer::Client_Destroy(TsClient_Destroy_Args* args) {
  if (!TESSERA_HAS(args, TsClient_Destroy_Args, client)) return next_.Client_Destroy(args);
  CallSite site = CallSite::Capture("Client_Destroy");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->client, Kind::kClient, "Client_Destroy", "client")) return e;
    // Leaks: what the caller created and never destroyed.  Devices, default
    // streams and kernels belong to the plugin's own objects.
    std::vector<std::string> leaks;
    for (const auto& [handle, object] : live_) {
      if (object.client != args->client) continue;
      if (object.kind == Kind::kClient || object.kind == Kind::kDevice ||
          object.kind == Kind::kKernel || (object.kind == Kind::kStream && object.is_default))
        continue;
      char address[32];
      std::snprintf(address, sizeof address, "%p", handle);
      std::string what = std::string(KindName(object.kind)) + " " + address;
      if (object.kind == Kind::kBuffer) what += " (" + std::to_string(object.size) + " bytes)";
      leaks.push_back(what + ", created by " + object.created.Describe());
    }
    for (const auto& [start, range] : host_ranges_) {
      if (range.of_buffer || range.client != args->client) continue;  // listed with its buffer
      char address[32];
      std::snprintf(address, sizeof address, "%p", reinterpret_cast<void*>(start));
      leaks.push_back(std::string(range.registered ? "host memory registered at " : "pinned host memory ") +
                      address + " (" + std::to_string(range.size) + " bytes), by " +
                      range.created.Describe() + (range.registered ? " (never unregistered)" : " (never freed)"));
    }
    std::sort(leaks.begin(), leaks.end());
    for (size_t i = 0; i < leaks.size() && i < kMaxLeaksListed; ++i)
      Report(Severity::kWarning, "leak", "Client_Destroy: still alive: " + leaks[i]);
    if (leaks.size() > kMaxLeaksListed)
      Report(Severity::kWarning, "leak",
             "Client_Destroy: and " + std::to_string(leaks.size() - kMaxLeaksListed) + " more");
  }
  Taken taken;
  {
    // Everything the client owns goes with it (other clients' objects
    // stay); moved before the call, as every destroy is (TakeForDestroy).
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<const void*> handles;
    for (const auto& entry : live_)
      if (entry.second.client == args->client) handles.push_back(entry.first);
    taken = TakeForDestroy(handles, site);
    for (auto it = host_ranges_.begin(); it != host_ranges_.end();) {
      if (it->second.client != args->client) {
        ++it;
        continue;
      }
      taken.ranges.emplace_back(it->first, it->second);
      it = host_ranges_.erase(it);
    }
  }
  TsError* error = next_.Client_Destroy(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));
  }
  return error;
}

TsError* ValidationLayer::Client_GetDevices(TsClient_GetDevices_Args* args) {
  if (!TESSERA_HAS(args, TsClient_GetDevices_Args, num_devices)) return next_.Client_GetDevices(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->client, Kind::kClient, "Client_GetDevices", "client")) return e;
  }
  TsError* error = next_.Client_GetDevices(args);
  if (error == nullptr && args->devices != nullptr && args->num_devices <= kMaxArgsWalked) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < args->num_devices; ++i) {
      TsDevice* d = args->devices[i];
      if (d == nullptr || Find(d, Kind::kDevice)) continue;
      Object device;
      device.created = CallSite::Capture("Client_GetDevices");
      device.client = args->client;
      device_numbers_.emplace(d, static_cast<uint32_t>(i));
      Create(d, Kind::kDevice, std::move(device));
    }
  }
  return error;
}

TsError* ValidationLayer::Device_GetProperties(TsDevice_GetProperties_Args* args) {
  if (TESSERA_HAS(args, TsDevice_GetProperties_Args, device)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Device_GetProperties", "device")) return e;
  }
  return next_.Device_GetProperties(args);
}

TsError* ValidationLayer::Device_GetDefaultStream(TsDevice_GetDefaultStream_Args* args) {
  if (!TESSERA_HAS(args, TsDevice_GetDefaultStream_Args, stream))
    return next_.Device_GetDefaultStream(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Device_GetDefaultStream", "device"))
      return e;
  }
  TsError* error = next_.Device_GetDefaultStream(args);
  if (error == nullptr && args->stream && args->device) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!Find(args->stream, Kind::kStream)) {
      Object stream;
      stream.created = CallSite::Capture("Device_GetDefaultStream");
      stream.device = args->device;
      stream.is_default = true;
      stream.client = ClientOf(args->device);
      stream.stream_id = DefaultStreamOf(args->device);
      Create(args->stream, Kind::kStream, std::move(stream));
    }
  }
  return error;
}

TsError* ValidationLayer::Device_Synchronize(TsDevice_Synchronize_Args* args) {
  if (!TESSERA_HAS(args, TsDevice_Synchronize_Args, device)) return next_.Device_Synchronize(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Device_Synchronize", "device")) return e;
  }
  TsError* error = next_.Device_Synchronize(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    hazards_.HostWaitsForDevice(TrackerDevice(args->device));
  }
  return error;
}

// ------------------------------------------------------------ memory

TsError* ValidationLayer::Buffer_Allocate(TsBuffer_Allocate_Args* args) {
  if (!TESSERA_HAS(args, TsBuffer_Allocate_Args, host_pointer)) return next_.Buffer_Allocate(args);
  CallSite site = CallSite::Capture("Buffer_Allocate");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Buffer_Allocate", "device")) return e;
  }
  TsError* error = next_.Buffer_Allocate(args);
  if (error == nullptr && args->buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    CreateBuffer(args->buffer, args->device, args->size, site,
                 args->kind == TS_BUFFER_HOST_PINNED ? args->host_pointer : nullptr);
  }
  return error;
}

void ValidationLayer::CreateBuffer(TsBuffer* handle, TsDevice* device, uint64_t size, const CallSite& site,
                                   void* pinned_host) {
  Object buffer;
  buffer.created = site;
  buffer.device = device;
  buffer.size = size;
  buffer.client = ClientOf(device);
  // A page-locked buffer's host pointer is pinned memory for async copies.
  if (pinned_host) {
    buffer.pinned_host = pinned_host;
    host_ranges_[reinterpret_cast<uintptr_t>(pinned_host)] =
        HostRange{size, false, site, /*of_buffer=*/true, buffer.client};
  }
  Create(handle, Kind::kBuffer, std::move(buffer));
}

TsError* ValidationLayer::Buffer_Free(TsBuffer_Free_Args* args) {
  if (!TESSERA_HAS(args, TsBuffer_Free_Args, buffer)) return next_.Buffer_Free(args);
  CallSite site = CallSite::Capture("Buffer_Free");
  Taken taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->buffer, Kind::kBuffer, "Buffer_Free", "buffer")) return e;
    taken = TakeForDestroy({args->buffer}, site);
  }
  TsError* error = next_.Buffer_Free(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));  // the plugin refused: still alive
  }
  return error;
}

TsError* ValidationLayer::Host_Allocate(TsHost_Allocate_Args* args) {
  if (!TESSERA_HAS(args, TsHost_Allocate_Args, pointer)) return next_.Host_Allocate(args);
  CallSite site = CallSite::Capture("Host_Allocate");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->client, Kind::kClient, "Host_Allocate", "client")) return e;
  }
  TsError* error = next_.Host_Allocate(args);
  if (error == nullptr && args->pointer) {
    std::lock_guard<std::mutex> lock(mu_);
    host_ranges_[reinterpret_cast<uintptr_t>(args->pointer)] = HostRange{args->size, false, site, false, args->client};
  }
  return error;
}

TsError* ValidationLayer::Host_Free(TsHost_Free_Args* args) {
  if (!TESSERA_HAS(args, TsHost_Free_Args, pointer)) return next_.Host_Free(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->client, Kind::kClient, "Host_Free", "client")) return e;
  }
  TsError* error = next_.Host_Free(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    host_ranges_.erase(reinterpret_cast<uintptr_t>(args->pointer));
  }
  return error;
}

TsError* ValidationLayer::Host_Register(TsHost_Register_Args* args) {
  if (!TESSERA_HAS(args, TsHost_Register_Args, size)) return next_.Host_Register(args);
  CallSite site = CallSite::Capture("Host_Register");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->client, Kind::kClient, "Host_Register", "client")) return e;
  }
  TsError* error = next_.Host_Register(args);
  if (error == nullptr && args->pointer) {
    std::lock_guard<std::mutex> lock(mu_);
    host_ranges_[reinterpret_cast<uintptr_t>(args->pointer)] = HostRange{args->size, true, site, false, args->client};
  }
  return error;
}

TsError* ValidationLayer::Host_Unregister(TsHost_Unregister_Args* args) {
  if (!TESSERA_HAS(args, TsHost_Unregister_Args, pointer)) return next_.Host_Unregister(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->client, Kind::kClient, "Host_Unregister", "client")) return e;
  }
  TsError* error = next_.Host_Unregister(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    host_ranges_.erase(reinterpret_cast<uintptr_t>(args->pointer));
  }
  return error;
}

TsError* ValidationLayer::CheckRef(const TsMemoryRef& ref, uint64_t size, const char* entry,
                                   const char* side) {
  if (ref.buffer == nullptr) return nullptr;  // host memory: checked by the caller
  if (TsError* e = CheckHandle(ref.buffer, Kind::kBuffer, entry, side)) return e;
  const Object* buffer = Find(ref.buffer, Kind::kBuffer);
  if (buffer && (ref.offset > buffer->size || size > buffer->size - ref.offset))
    return Refuse(TS_ERROR_OUT_OF_RANGE, "out-of-bounds",
                  std::string(entry) + ": the " + side + " range of " + std::to_string(size) +
                      " bytes at offset " + std::to_string(ref.offset) + " runs past the end of " +
                      DescribeBuffer(ref.buffer, *buffer));
  return nullptr;
}

TsError* ValidationLayer::Memcpy(TsMemcpy_Args* args) {
  if (!TESSERA_HAS(args, TsMemcpy_Args, stream)) return next_.Memcpy(args);
  TsDevice* device = nullptr;
  std::vector<Access> accesses;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckRef(args->dst, args->size, "Memcpy", "destination")) return e;
    if (TsError* e = CheckRef(args->src, args->size, "Memcpy", "source")) return e;
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Memcpy", "stream")) return e;
    if (args->stream != nullptr) {
      for (const TsMemoryRef* ref : {&args->dst, &args->src}) {
        if (ref->buffer != nullptr || ref->host == nullptr) continue;
        const char* host = static_cast<const char*>(ref->host) + ref->offset;
        if (!IsPinned(host, args->size))
          return Refuse(TS_ERROR_FAILED_PRECONDITION, "pageable-memory",
                        std::string("Memcpy: an asynchronous copy ") +
                            (ref == &args->dst ? "to" : "from") + " pageable host memory (" +
                            std::to_string(args->size) +
                            " bytes): host memory in an async copy must be page-locked "
                            "(Host_Allocate / Host_Register, Runtime::pinned_malloc / "
                            "register_host), or use a synchronous copy (stream NULL)");
      }
    }
    const TsMemoryRef* refs[2] = {&args->dst, &args->src};
    for (int i = 0; i < 2; ++i) {
      const TsMemoryRef& r = *refs[i];
      if (!r.buffer) continue;
      const Object* b = Find(r.buffer, Kind::kBuffer);
      if (!b) continue;
      if (!device) device = b->device;
      Access a;
      a.key = r.buffer;
      a.begin = r.offset;
      a.end = r.offset + args->size;
      a.write = i == 0;
      a.what.entry = args->stream ? "Memcpy" : "synchronous Memcpy";
      a.what.bytes = args->size;
      a.what.role = i == 0 ? "destination" : "source";
      accesses.push_back(std::move(a));
    }
  }
  TsError* error = next_.Memcpy(args);
  if (error == nullptr && device) {
    std::lock_guard<std::mutex> lock(mu_);
    Operate(args->stream, device, std::move(accesses));
    // A synchronous copy returns when it is done: the host has seen it.
    if (args->stream == nullptr) hazards_.HostWaitsFor(DefaultStreamOf(device));
  }
  return error;
}

TsError* ValidationLayer::Memset(TsMemset_Args* args) {
  if (!TESSERA_HAS(args, TsMemset_Args, stream)) return next_.Memset(args);
  TsDevice* device = nullptr;
  std::vector<Access> accesses;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TsMemoryRef ref{args->buffer, args->offset, nullptr};
    if (TsError* e = CheckRef(ref, args->size, "Memset", "destination")) return e;
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Memset", "stream")) return e;
    if (const Object* b = Find(args->buffer, Kind::kBuffer)) {
      device = b->device;
      Access a;
      a.key = args->buffer;
      a.begin = args->offset;
      a.end = args->offset + args->size;
      a.write = true;
      a.what.entry = args->stream ? "Memset" : "synchronous Memset";
      a.what.bytes = args->size;
      accesses.push_back(std::move(a));
    }
  }
  TsError* error = next_.Memset(args);
  if (error == nullptr && device) {
    std::lock_guard<std::mutex> lock(mu_);
    Operate(args->stream, device, std::move(accesses));
    if (args->stream == nullptr) hazards_.HostWaitsFor(DefaultStreamOf(device));
  }
  return error;
}

TsError* ValidationLayer::Buffer_Prefetch(TsBuffer_Prefetch_Args* args) {
  if (TESSERA_HAS(args, TsBuffer_Prefetch_Args, stream)) {
    std::lock_guard<std::mutex> lock(mu_);
    TsMemoryRef ref{args->buffer, args->offset, nullptr};
    if (TsError* e = CheckRef(ref, args->size, "Buffer_Prefetch", "buffer")) return e;
    if (TsError* e = CheckHandle(args->target, Kind::kDevice, "Buffer_Prefetch", "target")) return e;
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Buffer_Prefetch", "stream")) return e;
  }
  return next_.Buffer_Prefetch(args);
}

TsError* ValidationLayer::Buffer_Advise(TsBuffer_Advise_Args* args) {
  if (TESSERA_HAS(args, TsBuffer_Advise_Args, device)) {
    std::lock_guard<std::mutex> lock(mu_);
    TsMemoryRef ref{args->buffer, args->offset, nullptr};
    if (TsError* e = CheckRef(ref, args->size, "Buffer_Advise", "buffer")) return e;
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Buffer_Advise", "device")) return e;
  }
  return next_.Buffer_Advise(args);
}

// ------------------------------------------------------------ streams

TsError* ValidationLayer::Stream_Create(TsStream_Create_Args* args) {
  if (!TESSERA_HAS(args, TsStream_Create_Args, stream)) return next_.Stream_Create(args);
  CallSite site = CallSite::Capture("Stream_Create");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Stream_Create", "device")) return e;
  }
  TsError* error = next_.Stream_Create(args);
  if (error == nullptr && args->stream) {
    std::lock_guard<std::mutex> lock(mu_);
    Object stream;
    stream.created = site;
    stream.device = args->device;
    stream.client = ClientOf(args->device);
    DefaultStreamOf(args->device);  // numbers the device
    uint32_t number = device_numbers_[args->device];
    char address[32];
    std::snprintf(address, sizeof address, "%p", static_cast<void*>(args->stream));
    stream.stream_id = hazards_.AddStream(
        TrackerDevice(args->device), false, (args->flags & TS_STREAM_NON_BLOCKING) != 0,
        std::string("stream ") + address + " (device " + std::to_string(number) + ", created by " +
            site.Describe(2) + ")");
    Create(args->stream, Kind::kStream, std::move(stream));
  }
  return error;
}

TsError* ValidationLayer::Stream_Destroy(TsStream_Destroy_Args* args) {
  if (!TESSERA_HAS(args, TsStream_Destroy_Args, stream)) return next_.Stream_Destroy(args);
  CallSite site = CallSite::Capture("Stream_Destroy");
  Taken taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Stream_Destroy", "stream")) return e;
    taken = TakeForDestroy({args->stream}, site);
  }
  TsError* error = next_.Stream_Destroy(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));  // the plugin refused: still alive
  }
  return error;
}

TsError* ValidationLayer::Stream_Synchronize(TsStream_Synchronize_Args* args) {
  if (!TESSERA_HAS(args, TsStream_Synchronize_Args, stream)) return next_.Stream_Synchronize(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Stream_Synchronize", "stream")) return e;
  }
  TsError* error = next_.Stream_Synchronize(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    if (const Object* s = Find(args->stream, Kind::kStream)) hazards_.HostWaitsFor(s->stream_id);
  }
  return error;
}

TsError* ValidationLayer::Stream_Query(TsStream_Query_Args* args) {
  if (!TESSERA_HAS(args, TsStream_Query_Args, idle)) return next_.Stream_Query(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Stream_Query", "stream")) return e;
  }
  TsError* error = next_.Stream_Query(args);
  if (error == nullptr && args->idle) {
    std::lock_guard<std::mutex> lock(mu_);
    if (const Object* s = Find(args->stream, Kind::kStream)) hazards_.HostWaitsFor(s->stream_id);
  }
  return error;
}

TsError* ValidationLayer::Stream_WriteTimestamp(TsStream_WriteTimestamp_Args* args) {
  if (!TESSERA_HAS(args, TsStream_WriteTimestamp_Args, timestamp_ns))
    return next_.Stream_WriteTimestamp(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Stream_WriteTimestamp", "stream"))
      return e;
  }
  // The write lands in the caller's memory, not in a buffer: nothing for
  // the hazard detector.
  return next_.Stream_WriteTimestamp(args);
}

TsError* ValidationLayer::Stream_WaitEvent(TsStream_WaitEvent_Args* args) {
  if (!TESSERA_HAS(args, TsStream_WaitEvent_Args, event)) return next_.Stream_WaitEvent(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Stream_WaitEvent", "stream")) return e;
    if (TsError* e = CheckHandle(args->event, Kind::kEvent, "Stream_WaitEvent", "event")) return e;
    const Object* ev = Find(args->event, Kind::kEvent);
    if (ev && !ev->recorded)
      Report(Severity::kWarning, "wait-before-record",
             "Stream_WaitEvent: the event (created by " + ev->created.Describe() +
                 ") was never recorded, so the stream waits for nothing; record it "
                 "(Event_Record) on the producing stream before waiting on it");
  }
  TsError* error = next_.Stream_WaitEvent(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Object* s = Find(args->stream, Kind::kStream);
    const Object* ev = Find(args->event, Kind::kEvent);
    if (s && ev && ev->recorded) {
      if (ev->recorded_in_capture != 0)
        s->capture = ev->recorded_in_capture;  // joins the capture
      else
        hazards_.Wait(s->stream_id, ev->snapshot);
    }
  }
  return error;
}

TsError* ValidationLayer::Stream_BeginCapture(TsStream_BeginCapture_Args* args) {
  if (!TESSERA_HAS(args, TsStream_BeginCapture_Args, stream)) return next_.Stream_BeginCapture(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Stream_BeginCapture", "stream")) return e;
  }
  TsError* error = next_.Stream_BeginCapture(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    if (Object* s = Find(args->stream, Kind::kStream)) {
      s->capture = next_capture_++;
      captures_[s->capture];
    }
  }
  return error;
}

TsError* ValidationLayer::Stream_EndCapture(TsStream_EndCapture_Args* args) {
  if (!TESSERA_HAS(args, TsStream_EndCapture_Args, graph)) return next_.Stream_EndCapture(args);
  CallSite site = CallSite::Capture("Stream_EndCapture");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Stream_EndCapture", "stream")) return e;
  }
  TsError* error = next_.Stream_EndCapture(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Object* origin = Find(args->stream, Kind::kStream);
    uint64_t capture = origin ? origin->capture : 0;
    Object graph;
    graph.created = site;
    graph.client = ClientOf(args->stream);
    if (capture != 0) {
      graph.accesses = std::move(captures_[capture]);
      captures_.erase(capture);
      for (auto& entry : live_)
        if (entry.second.kind == Kind::kStream && entry.second.capture == capture)
          entry.second.capture = 0;
    }
    if (args->graph) Create(args->graph, Kind::kGraph, std::move(graph));
  }
  return error;
}

// ------------------------------------------------------------ events

TsError* ValidationLayer::Event_Create(TsEvent_Create_Args* args) {
  if (!TESSERA_HAS(args, TsEvent_Create_Args, event)) return next_.Event_Create(args);
  CallSite site = CallSite::Capture("Event_Create");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Event_Create", "device")) return e;
  }
  TsError* error = next_.Event_Create(args);
  if (error == nullptr && args->event) {
    std::lock_guard<std::mutex> lock(mu_);
    Object event;
    event.created = site;
    event.device = args->device;
    event.client = ClientOf(args->device);
    Create(args->event, Kind::kEvent, std::move(event));
  }
  return error;
}

TsError* ValidationLayer::Event_Destroy(TsEvent_Destroy_Args* args) {
  if (!TESSERA_HAS(args, TsEvent_Destroy_Args, event)) return next_.Event_Destroy(args);
  CallSite site = CallSite::Capture("Event_Destroy");
  Taken taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->event, Kind::kEvent, "Event_Destroy", "event")) return e;
    taken = TakeForDestroy({args->event}, site);
  }
  TsError* error = next_.Event_Destroy(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));  // the plugin refused: still alive
  }
  return error;
}

TsError* ValidationLayer::Event_Record(TsEvent_Record_Args* args) {
  if (!TESSERA_HAS(args, TsEvent_Record_Args, stream)) return next_.Event_Record(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->event, Kind::kEvent, "Event_Record", "event")) return e;
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Event_Record", "stream")) return e;
  }
  TsError* error = next_.Event_Record(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Object* ev = Find(args->event, Kind::kEvent);
    const Object* s = Find(args->stream, Kind::kStream);
    if (ev && s) {
      ev->recorded = true;
      ev->recorded_in_capture = s->capture;
      if (s->capture == 0) ev->snapshot = hazards_.Record(s->stream_id);
    }
  }
  return error;
}

TsError* ValidationLayer::Event_Query(TsEvent_Query_Args* args) {
  if (!TESSERA_HAS(args, TsEvent_Query_Args, complete)) return next_.Event_Query(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->event, Kind::kEvent, "Event_Query", "event")) return e;
  }
  TsError* error = next_.Event_Query(args);
  if (error == nullptr && args->complete) {
    std::lock_guard<std::mutex> lock(mu_);
    const Object* ev = Find(args->event, Kind::kEvent);
    if (ev && ev->recorded && ev->recorded_in_capture == 0) hazards_.HostWaitsFor(ev->snapshot);
  }
  return error;
}

TsError* ValidationLayer::Event_Synchronize(TsEvent_Synchronize_Args* args) {
  if (!TESSERA_HAS(args, TsEvent_Synchronize_Args, event)) return next_.Event_Synchronize(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->event, Kind::kEvent, "Event_Synchronize", "event")) return e;
    const Object* ev = Find(args->event, Kind::kEvent);
    if (ev && !ev->recorded)
      Report(Severity::kWarning, "wait-before-record",
             "Event_Synchronize: the event (created by " + ev->created.Describe() +
                 ") was never recorded, so the host waits for nothing; record it "
                 "(Event_Record) before synchronizing with it");
  }
  TsError* error = next_.Event_Synchronize(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    const Object* ev = Find(args->event, Kind::kEvent);
    if (ev && ev->recorded && ev->recorded_in_capture == 0) hazards_.HostWaitsFor(ev->snapshot);
  }
  return error;
}

TsError* ValidationLayer::Event_ElapsedTime(TsEvent_ElapsedTime_Args* args) {
  if (TESSERA_HAS(args, TsEvent_ElapsedTime_Args, end)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->start, Kind::kEvent, "Event_ElapsedTime", "start")) return e;
    if (TsError* e = CheckHandle(args->end, Kind::kEvent, "Event_ElapsedTime", "end")) return e;
  }
  return next_.Event_ElapsedTime(args);
}

// ------------------------------------------------------------ graphs

TsError* ValidationLayer::Graph_Destroy(TsGraph_Destroy_Args* args) {
  if (!TESSERA_HAS(args, TsGraph_Destroy_Args, graph)) return next_.Graph_Destroy(args);
  CallSite site = CallSite::Capture("Graph_Destroy");
  Taken taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->graph, Kind::kGraph, "Graph_Destroy", "graph")) return e;
    taken = TakeForDestroy({args->graph}, site);
  }
  TsError* error = next_.Graph_Destroy(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));  // the plugin refused: still alive
  }
  return error;
}

TsError* ValidationLayer::Graph_GetInfo(TsGraph_GetInfo_Args* args) {
  if (TESSERA_HAS(args, TsGraph_GetInfo_Args, graph)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->graph, Kind::kGraph, "Graph_GetInfo", "graph")) return e;
  }
  return next_.Graph_GetInfo(args);
}

TsError* ValidationLayer::Graph_Instantiate(TsGraph_Instantiate_Args* args) {
  if (!TESSERA_HAS(args, TsGraph_Instantiate_Args, exec)) return next_.Graph_Instantiate(args);
  CallSite site = CallSite::Capture("Graph_Instantiate");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->graph, Kind::kGraph, "Graph_Instantiate", "graph")) return e;
  }
  TsError* error = next_.Graph_Instantiate(args);
  if (error == nullptr && args->exec) {
    std::lock_guard<std::mutex> lock(mu_);
    Object exec;
    exec.created = site;
    exec.client = ClientOf(args->graph);
    if (const Object* g = Find(args->graph, Kind::kGraph)) exec.accesses = g->accesses;
    Create(args->exec, Kind::kGraphExec, std::move(exec));
  }
  return error;
}

TsError* ValidationLayer::GraphExec_Destroy(TsGraphExec_Destroy_Args* args) {
  if (!TESSERA_HAS(args, TsGraphExec_Destroy_Args, exec)) return next_.GraphExec_Destroy(args);
  CallSite site = CallSite::Capture("GraphExec_Destroy");
  Taken taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->exec, Kind::kGraphExec, "GraphExec_Destroy", "exec")) return e;
    taken = TakeForDestroy({args->exec}, site);
  }
  TsError* error = next_.GraphExec_Destroy(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));  // the plugin refused: still alive
  }
  return error;
}

TsError* ValidationLayer::GraphExec_Launch(TsGraphExec_Launch_Args* args) {
  if (!TESSERA_HAS(args, TsGraphExec_Launch_Args, stream)) return next_.GraphExec_Launch(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->exec, Kind::kGraphExec, "GraphExec_Launch", "exec")) return e;
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "GraphExec_Launch", "stream")) return e;
  }
  TsError* error = next_.GraphExec_Launch(args);
  if (error == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    const Object* exec = Find(args->exec, Kind::kGraphExec);
    const Object* s = Find(args->stream, Kind::kStream);
    if (exec && s) {
      std::vector<Access> accesses;
      for (const Access& captured : exec->accesses) {
        if (!Find(captured.key, Kind::kBuffer)) continue;  // freed since
        Access a = captured;
        a.what.captured = true;
        accesses.push_back(std::move(a));
      }
      Operate(args->stream, s->device, std::move(accesses));
    }
  }
  return error;
}

// ------------------------------------------------------------ executables and kernels

TsError* ValidationLayer::Executable_Load(TsExecutable_Load_Args* args) {
  if (!TESSERA_HAS(args, TsExecutable_Load_Args, executable)) return next_.Executable_Load(args);
  CallSite site = CallSite::Capture("Executable_Load");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Executable_Load", "device")) return e;
  }
  TsError* error = next_.Executable_Load(args);
  if (error == nullptr && args->executable) {
    std::lock_guard<std::mutex> lock(mu_);
    Object exe;
    exe.created = site;
    exe.device = args->device;
    exe.client = ClientOf(args->device);
    Create(args->executable, Kind::kExecutable, std::move(exe));
  }
  return error;
}

TsError* ValidationLayer::Executable_Destroy(TsExecutable_Destroy_Args* args) {
  if (!TESSERA_HAS(args, TsExecutable_Destroy_Args, executable)) return next_.Executable_Destroy(args);
  CallSite site = CallSite::Capture("Executable_Destroy");
  Taken taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->executable, Kind::kExecutable, "Executable_Destroy", "executable"))
      return e;
    // Its kernels go with it.
    std::vector<const void*> handles;
    for (const auto& [handle, object] : live_)
      if (object.kind == Kind::kKernel && object.executable == args->executable) handles.push_back(handle);
    handles.push_back(args->executable);
    taken = TakeForDestroy(handles, site);
  }
  TsError* error = next_.Executable_Destroy(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));
  }
  return error;
}

TsError* ValidationLayer::Executable_GetKernel(TsExecutable_GetKernel_Args* args) {
  if (!TESSERA_HAS(args, TsExecutable_GetKernel_Args, args_known)) return next_.Executable_GetKernel(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->executable, Kind::kExecutable, "Executable_GetKernel", "executable"))
      return e;
  }
  TsError* error = next_.Executable_GetKernel(args);
  if (error == nullptr && args->kernel) {
    std::lock_guard<std::mutex> lock(mu_);
    Object* known = Find(args->kernel, Kind::kKernel);
    if (!known) {
      Object kernel;
      kernel.created = CallSite::Capture("Executable_GetKernel");
      kernel.executable = args->executable;
      kernel.client = ClientOf(args->executable);
      kernel.name = args->name ? std::string(args->name).substr(0, 256) : std::string();
      kernel.shared_name = std::make_shared<const std::string>(kernel.name);
      Create(args->kernel, Kind::kKernel, std::move(kernel));
      known = Find(args->kernel, Kind::kKernel);
    }
    known->num_buffer_args = args->args_known ? args->num_buffer_args : 0;
  }
  return error;
}

TsError* ValidationLayer::Kernel_Launch(TsKernel_Launch_Args* args) {
  if (!TESSERA_HAS(args, TsKernel_Launch_Args, num_args)) return next_.Kernel_Launch(args);
  TsDevice* device = nullptr;
  std::vector<Access> accesses;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->kernel, Kind::kKernel, "Kernel_Launch", "kernel")) return e;
    if (TsError* e = CheckHandle(args->stream, Kind::kStream, "Kernel_Launch", "stream")) return e;
    const Object* kernel = Find(args->kernel, Kind::kKernel);
    if (const Object* s = Find(args->stream, Kind::kStream)) device = s->device;
    if (args->args != nullptr && args->num_args <= kMaxArgsWalked) {
      uint32_t buffer_ordinal = 0;
      for (size_t i = 0; i < args->num_args; ++i) {
        const TsKernelArg& arg = args->args[i];
        if (arg.kind != TS_KERNEL_ARG_BUFFER || arg.buffer == nullptr) continue;
        // Text only for a refusal: launches are the hot path.
        auto what = [&] {
          return "Kernel_Launch '" + (kernel ? kernel->name : std::string()) + "' argument " +
                 std::to_string(i);
        };
        const Object* b = Find(arg.buffer, Kind::kBuffer);
        if (!b)
          if (TsError* e = CheckHandle(arg.buffer, Kind::kBuffer, "Kernel_Launch", what().c_str()))
            return e;
        if (b && arg.offset >= b->size)
          return Refuse(TS_ERROR_OUT_OF_RANGE, "out-of-bounds",
                        what() + ": offset " + std::to_string(arg.offset) + " is past the end of " +
                            DescribeBuffer(arg.buffer, *b));
        uint32_t access = TS_PARAM_READ | TS_PARAM_WRITE;
        if (kernel && kernel->access_known && buffer_ordinal < kernel->buffer_access.size())
          access = kernel->buffer_access[buffer_ordinal];
        ++buffer_ordinal;
        if (b && (access & (TS_PARAM_READ | TS_PARAM_WRITE))) {
          Access a;
          a.key = arg.buffer;
          a.begin = arg.offset;
          a.end = b->size;
          a.write = (access & TS_PARAM_WRITE) != 0;
          a.atomic = (access & TS_PARAM_ATOMIC) != 0;
          a.what.entry = "Kernel_Launch";
          if (kernel) a.what.name = kernel->shared_name;
          a.what.index = static_cast<int64_t>(i);
          accesses.push_back(std::move(a));
        }
      }
    }
  }
  TsError* error = next_.Kernel_Launch(args);
  if (error == nullptr && device) {
    std::lock_guard<std::mutex> lock(mu_);
    Operate(args->stream, device, std::move(accesses));
  }
  return error;
}

// ------------------------------------------------------------ collectives

TsError* ValidationLayer::Communicator_Create(TsCommunicator_Create_Args* args) {
  if (!TESSERA_HAS(args, TsCommunicator_Create_Args, communicator)) return next_.Communicator_Create(args);
  CallSite site = CallSite::Capture("Communicator_Create");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->client, Kind::kClient, "Communicator_Create", "client")) return e;
    if (args->devices && args->num_devices <= kMaxArgsWalked)
      for (size_t i = 0; i < args->num_devices; ++i)
        if (TsError* e = CheckHandle(args->devices[i], Kind::kDevice, "Communicator_Create", "devices[i]"))
          return e;
  }
  TsError* error = next_.Communicator_Create(args);
  if (error == nullptr && args->communicator) {
    std::lock_guard<std::mutex> lock(mu_);
    Object comm;
    comm.created = site;
    comm.client = args->client;
    if (args->devices && args->num_devices <= kMaxArgsWalked)
      comm.devices.assign(args->devices, args->devices + args->num_devices);
    if (TESSERA_HAS(args, TsCommunicator_Create_Args, num_ranks) && args->unique_id)
      comm.num_ranks = args->num_ranks;
    Create(args->communicator, Kind::kCommunicator, std::move(comm));
  }
  return error;
}

TsError* ValidationLayer::Communicator_CreateUniqueId(TsCommunicator_CreateUniqueId_Args* args) {
  if (!TESSERA_HAS(args, TsCommunicator_CreateUniqueId_Args, unique_id))
    return next_.Communicator_CreateUniqueId(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->client, Kind::kClient, "Communicator_CreateUniqueId", "client")) return e;
  }
  return next_.Communicator_CreateUniqueId(args);
}

TsError* ValidationLayer::Buffer_GetDeviceAddress(TsBuffer_GetDeviceAddress_Args* args) {
  if (!TESSERA_HAS(args, TsBuffer_GetDeviceAddress_Args, address)) return next_.Buffer_GetDeviceAddress(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->buffer, Kind::kBuffer, "Buffer_GetDeviceAddress", "buffer")) return e;
  }
  return next_.Buffer_GetDeviceAddress(args);
}

TsError* ValidationLayer::Buffer_Import(TsBuffer_Import_Args* args) {
  if (!TESSERA_HAS(args, TsBuffer_Import_Args, host_pointer)) return next_.Buffer_Import(args);
  CallSite site = CallSite::Capture("Buffer_Import");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Buffer_Import", "device")) return e;
  }
  TsError* error = next_.Buffer_Import(args);
  if (error == nullptr && args->buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    CreateBuffer(args->buffer, args->device, args->size, site,
                 args->kind == TS_BUFFER_HOST_PINNED ? args->host_pointer : nullptr);
  }
  return error;
}

TsError* ValidationLayer::Communicator_Destroy(TsCommunicator_Destroy_Args* args) {
  if (!TESSERA_HAS(args, TsCommunicator_Destroy_Args, communicator)) return next_.Communicator_Destroy(args);
  CallSite site = CallSite::Capture("Communicator_Destroy");
  Taken taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->communicator, Kind::kCommunicator, "Communicator_Destroy", "communicator"))
      return e;
    taken = TakeForDestroy({args->communicator}, site);
  }
  TsError* error = next_.Communicator_Destroy(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));  // the plugin refused: still alive
  }
  return error;
}

TsError* ValidationLayer::Communicator_Collective(TsCommunicator_Collective_Args* args) {
  if (!TESSERA_HAS(args, TsCommunicator_Collective_Args, streams)) return next_.Communicator_Collective(args);
  std::vector<TsStream*> streams;
  std::vector<TsDevice*> devices;
  std::vector<std::vector<Access>> accesses;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const char* entry = "Communicator_Collective";
    if (TsError* e = CheckHandle(args->communicator, Kind::kCommunicator, entry, "communicator")) return e;
    const Object* comm = Find(args->communicator, Kind::kCommunicator);
    if (comm && args->streams && args->send && args->recv) {
      const size_t n = comm->devices.size();
      const uint64_t total = comm->num_ranks ? comm->num_ranks : n;  // all processes' ranks
      const uint64_t element = DataTypeSize(args->dtype);
      for (size_t r = 0; r < n; ++r) {
        if (TsError* e = CheckHandle(args->streams[r], Kind::kStream, entry, "streams[rank]")) return e;
        std::vector<Access> rank;
        for (int side = 0; side < 2; ++side) {
          const TsMemoryRef& ref = side == 0 ? args->recv[r] : args->send[r];
          if (!ref.buffer) continue;
          if (TsError* e = CheckHandle(ref.buffer, Kind::kBuffer, entry, side == 0 ? "recv[rank]" : "send[rank]"))
            return e;
          const Object* b = Find(ref.buffer, Kind::kBuffer);
          if (!b || element == 0) continue;
          uint64_t count = args->count;
          if ((side == 0 && args->op == TS_COLLECTIVE_ALL_GATHER) ||
              (side == 1 && args->op == TS_COLLECTIVE_REDUCE_SCATTER))
            count *= total;
          Access a;
          a.key = ref.buffer;
          a.begin = ref.offset;
          a.end = std::min<uint64_t>(b->size, ref.offset + count * element);
          a.write = side == 0;
          a.what.entry = entry;
          a.what.index = static_cast<int64_t>(r);
          a.what.role = side == 0 ? "recv" : "send";
          rank.push_back(std::move(a));
        }
        streams.push_back(args->streams[r]);
        devices.push_back(comm->devices[r]);
        accesses.push_back(std::move(rank));
      }
    }
  }
  TsError* error = next_.Communicator_Collective(args);
  if (error == nullptr && !streams.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<HazardTracker::StreamId> ids;
    bool captured = false;
    for (size_t r = 0; r < streams.size(); ++r) {
      const Object* s = Find(streams[r], Kind::kStream);
      if (s && s->capture != 0) captured = true;
      ids.push_back(StreamOf(streams[r], devices[r]));
    }
    if (captured) {
      for (size_t r = 0; r < streams.size(); ++r) Operate(streams[r], devices[r], std::move(accesses[r]));
    } else {
      for (const std::string& hazard : hazards_.OperateJointly(ids, accesses))
        Report(Severity::kWarning, "hazard", hazard);
    }
  }
  return error;
}

// ------------------------------------------------------------ the compiler

TsError* ValidationLayer::Compiler_GetTargets(TsCompiler_GetTargets_Args* args) {
  return next_.Compiler_GetTargets(args);
}

TsError* ValidationLayer::Compiler_Compile(TsCompiler_Compile_Args* args) {
  if (!TESSERA_HAS(args, TsCompiler_Compile_Args, log)) return next_.Compiler_Compile(args);
  CallSite site = CallSite::Capture("Compiler_Compile");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->device, Kind::kDevice, "Compiler_Compile", "device")) return e;
  }
  TsError* error = next_.Compiler_Compile(args);
  if (error == nullptr && args->compilation) {
    std::lock_guard<std::mutex> lock(mu_);
    Object compilation;
    compilation.created = site;
    compilation.client = args->device ? ClientOf(args->device) : nullptr;
    Create(args->compilation, Kind::kCompilation, std::move(compilation));
  }
  return error;
}

TsError* ValidationLayer::Compilation_Destroy(TsCompilation_Destroy_Args* args) {
  if (!TESSERA_HAS(args, TsCompilation_Destroy_Args, compilation)) return next_.Compilation_Destroy(args);
  CallSite site = CallSite::Capture("Compilation_Destroy");
  Taken taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (TsError* e = CheckHandle(args->compilation, Kind::kCompilation, "Compilation_Destroy", "compilation"))
      return e;
    taken = TakeForDestroy({args->compilation}, site);
  }
  TsError* error = next_.Compilation_Destroy(args);
  if (error != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    Restore(std::move(taken));  // the plugin refused: still alive
  }
  return error;
}

}  // namespace tessera::detail
