// Device: allocation, streams, events, executables.
#include "runtime_impl.hpp"

namespace tessera {

using detail::MakeArgs;

namespace {

// The Buffer over what Buffer_Allocate or Buffer_Import made on `device`.
Buffer WrapBuffer(const Device& device, TsBuffer* raw, uint64_t size, TsBufferKind kind, void* host_pointer) {
  auto buffer = std::make_shared<detail::BufferImpl>();
  buffer->device = device;
  buffer->raw = raw;
  buffer->size = size;
  buffer->kind = kind;
  buffer->host_pointer = host_pointer;
  // A page-locked buffer's host pointer is pinned memory for async copies.
  if (kind == TS_BUFFER_HOST_PINNED && host_pointer)
    device.impl()->runtime->pinned.Add(host_pointer, size, detail::PinnedRegistry::Origin::kPinnedBuffer);
  return Buffer(std::move(buffer));
}

}  // namespace

// A null Device (default-constructed) answers empty values: its calls
// return INVALID_HANDLE, and these two return references.
const DeviceInfo& Device::info() const {
  static const DeviceInfo none;
  return impl_ ? impl_->info : none;
}
const std::string& Device::backend() const {
  static const std::string none;
  return impl_ ? impl_->runtime->backend : none;
}
TsDevice* Device::raw() const { return impl_ ? impl_->raw : nullptr; }
Runtime Device::runtime() const {
  if (!impl_) return Runtime();
  // Aliasing: shares the ownership the device handle already has (of the
  // RuntimeImpl), pointing at the runtime itself.
  return Runtime(std::shared_ptr<detail::RuntimeImpl>(impl_, impl_->runtime));
}

StatusOr<Buffer> Device::allocate(uint64_t size, TsBufferKind kind) const {
  if (!impl_) return detail::InvalidHandle("Device", true);
  if (size == 0)
    return Status(StatusCode::kInvalidArgument,
                  "allocate(0 bytes): the size must be greater than zero");
  if (kind > TS_BUFFER_MANAGED)
    return Status(StatusCode::kInvalidArgument,
                  "allocate: unknown buffer kind " + std::to_string(kind));
  if (!impl_->info.supports(kind))
    return Status(StatusCode::kUnsupported,
                  impl_->Describe() + " does not support " +
                      BufferKindName(kind) + " buffers (see tessera-info)");
  auto args = MakeArgs<TsBuffer_Allocate_Args>();
  args.device = impl_->raw;
  args.size = size;
  args.kind = kind;
  TESSERA_TRACE_API(impl_->runtime, "Device::allocate");
  TESSERA_INJECT_FAULT(impl_->runtime, kAlloc, "allocate");
  if (_trace_api.on())
    _trace_api.args = detail::TraceArg("bytes", size) + "," +
                      detail::TraceArg("kind", BufferKindName(kind));
  Status st = TESSERA_PLUGIN_CALL_OUT(impl_->lib(), Buffer_Allocate, args, buffer);
  if (!st.ok())
    return st.Annotate("allocating " + FormatBytes(size) + " of " +
                       BufferKindName(kind) + " memory on " +
                       impl_->Describe());
  return WrapBuffer(*this, args.buffer, size, kind, args.host_pointer);
}


StatusOr<Buffer> Device::import_memory(uint64_t address, uint64_t size, TsBufferKind kind) const {
  if (!impl_) return detail::InvalidHandle("Device", true);
  if (address == 0)
    return Status(StatusCode::kInvalidArgument, "import_memory: address 0: pass the memory's device address");
  if (size == 0)
    return Status(StatusCode::kInvalidArgument, "import_memory(0 bytes): the size must be greater than zero");
  if (kind > TS_BUFFER_MANAGED)
    return Status(StatusCode::kInvalidArgument, "import_memory: unknown buffer kind " + std::to_string(kind));
  auto args = MakeArgs<TsBuffer_Import_Args>();
  args.device = impl_->raw;
  args.address = address;
  args.size = size;
  args.kind = kind;
  Status st = TESSERA_PLUGIN_CALL_OUT(impl_->lib(), Buffer_Import, args, buffer);
  if (!st.ok())
    return st.Annotate("importing " + FormatBytes(size) + " of " + BufferKindName(kind) + " memory on " +
                       impl_->Describe());
  return WrapBuffer(*this, args.buffer, size, kind, args.host_pointer);
}

StatusOr<Stream> Device::create_stream(const StreamOptions& options) const {
  if (!impl_) return detail::InvalidHandle("Device", true);
  TESSERA_TRACE_API(impl_->runtime, "Device::create_stream");
  TESSERA_INJECT_FAULT(impl_->runtime, kOther, "create_stream");
  auto args = MakeArgs<TsStream_Create_Args>();
  args.device = impl_->raw;
  args.priority = options.priority;
  args.weight = options.weight == 0 ? 1 : options.weight;
  args.flags = options.non_blocking ? TS_STREAM_NON_BLOCKING : 0;
  Status st = TESSERA_PLUGIN_CALL_OUT(impl_->lib(), Stream_Create, args, stream);
  if (!st.ok()) return st.Annotate("creating a stream on " + impl_->Describe());
  auto stream = std::make_shared<detail::StreamImpl>();
  stream->device = *this;
  stream->raw = args.stream;
  stream->options = options;
  stream->options.weight = args.weight;
  return Stream(std::move(stream));
}

Stream Device::default_stream() const {
  auto stream = std::make_shared<detail::StreamImpl>();
  if (!impl_ || !impl_->default_stream) {
    stream->alive = false;  // reports INVALID_HANDLE / UNSUPPORTED on use
    if (impl_) stream->device = *this;
    return Stream(std::move(stream));
  }
  stream->device = *this;
  stream->raw = impl_->default_stream;
  stream->is_default = true;
  return Stream(std::move(stream));
}

StatusOr<Event> Device::create_event(uint32_t flags) const {
  if (!impl_) return detail::InvalidHandle("Device", true);
  TESSERA_TRACE_API(impl_->runtime, "Device::create_event");
  TESSERA_INJECT_FAULT(impl_->runtime, kOther, "create_event");
  auto args = MakeArgs<TsEvent_Create_Args>();
  args.device = impl_->raw;
  args.flags = flags;
  Status st = TESSERA_PLUGIN_CALL_OUT(impl_->lib(), Event_Create, args, event);
  if (!st.ok()) return st.Annotate("creating an event on " + impl_->Describe());
  auto event = std::make_shared<detail::EventImpl>();
  event->device = *this;
  event->raw = args.event;
  return Event(std::move(event));
}

Status Device::synchronize() const {
  if (!impl_) return detail::InvalidHandle("Device", true);
  auto args = MakeArgs<TsDevice_Synchronize_Args>();
  args.device = impl_->raw;
  TESSERA_TRACE_API(impl_->runtime, "Device::synchronize");
  TESSERA_INJECT_FAULT(impl_->runtime, kOther, "Device::synchronize");
  Status st = TESSERA_PLUGIN_CALL(impl_->lib(), Device_Synchronize, args);
  if (impl_->runtime->trace) impl_->runtime->trace->Resolve(false);
  return st;
}

namespace {
StatusOr<Executable> LoadExecutable(const Device& device,
                                    const std::string& format,
                                    const void* data, size_t size,
                                    const std::string& path,
                                    std::shared_ptr<detail::ExecutableImpl> impl) {
  const DeviceInfo& info = device.info();
  bool known = false;
  for (const std::string& f : info.executable_formats) known |= f == format;
  if (!known) {
    std::string formats;
    for (const std::string& f : info.executable_formats)
      formats += (formats.empty() ? "" : ", ") + f;
    return Status(StatusCode::kUnsupported,
                  "executable format '" + format + "' is not accepted by " +
                      device.impl()->Describe() + "; it accepts: " + formats);
  }
  TESSERA_TRACE_API(device.impl()->runtime, "Device::load_executable");
  TESSERA_INJECT_FAULT(device.impl()->runtime, kOther, "load_executable");
  if (_trace_api.on())
    _trace_api.args = detail::TraceArg("format", format) + "," +
                      detail::TraceArg("bytes", static_cast<uint64_t>(size)) +
                      (path.empty() ? "" : "," + detail::TraceArg("path", path));
  auto args = MakeArgs<TsExecutable_Load_Args>();
  args.device = device.raw();
  args.format = format.c_str();
  args.data = data;
  args.size = size;
  args.path = path.empty() ? nullptr : path.c_str();
  Status st = TESSERA_PLUGIN_CALL_OUT(device.impl()->lib(), Executable_Load, args, executable);
  std::string origin = path.empty() ? "<memory image>" : path;
  if (!st.ok()) return st.Annotate("loading executable " + origin);
  impl->device = device;
  impl->raw = args.executable;
  impl->origin = origin;
  return Executable(std::move(impl));
}
}  // namespace

StatusOr<Executable> Device::load_executable(const std::string& format,
                                             const std::string& path) const {
  if (!impl_) return detail::InvalidHandle("Device", true);
  if (path.empty())
    return Status(StatusCode::kInvalidArgument,
                  "load_executable: the path is empty");
  return LoadExecutable(*this, format, nullptr, 0, path,
                        std::make_shared<detail::ExecutableImpl>());
}

StatusOr<Executable> Device::load_executable(const std::string& format,
                                             const void* data,
                                             size_t size) const {
  if (!impl_) return detail::InvalidHandle("Device", true);
  if (data == nullptr || size == 0)
    return Status(StatusCode::kInvalidArgument,
                  "load_executable: the image is empty");
  return LoadExecutable(*this, format, data, size, "",
                        std::make_shared<detail::ExecutableImpl>());
}

}  // namespace tessera
