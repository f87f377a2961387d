// Buffer handles, memset and advise.
#include "memory_checks.hpp"
#include "runtime_impl.hpp"

namespace tessera {

using detail::MakeArgs;

namespace detail {

Status BufferImpl::Release() {
  if (!MarkDestroyed()) return Status::Ok();
  if (raw == nullptr) return Status::Ok();  // never fully created
  if (kind == TS_BUFFER_HOST_PINNED && host_pointer)
    device.impl()->runtime->pinned.Remove(host_pointer,
                                          PinnedRegistry::Origin::kPinnedBuffer);
  auto args = MakeArgs<TsBuffer_Free_Args>();
  args.buffer = raw;
  released = raw;  // for "was destroyed" errors: the layer knows where
  raw = nullptr;
  return TESSERA_PLUGIN_CALL(device.impl()->lib(), Buffer_Free, args);
}

BufferImpl::~BufferImpl() {
  Status st = Release();
  if (!st.ok()) TESSERA_LOG(kWarning, "freeing a buffer: " + st.ToString());
}

}  // namespace detail

bool Buffer::valid() const { return impl_ && impl_->Alive(); }
uint64_t Buffer::size() const { return impl_ ? impl_->size : 0; }
TsBufferKind Buffer::kind() const {
  return impl_ ? impl_->kind : TS_BUFFER_DEVICE;
}
void* Buffer::host_pointer() const {
  return valid() ? impl_->host_pointer : nullptr;
}
StatusOr<uint64_t> Buffer::device_address() const {
  TESSERA_CHECK_HANDLE(impl_, "Buffer");
  const detail::PluginLibrary& lib = impl_->device.impl()->lib();
  auto args = MakeArgs<TsBuffer_GetDeviceAddress_Args>();
  args.buffer = impl_->raw;
  TESSERA_RETURN_IF_ERROR(TESSERA_PLUGIN_CALL(lib, Buffer_GetDeviceAddress, args));
  // The plugin's answer is checked: success promises an address.
  if (args.address == 0)
    return lib.BadAnswer("Buffer_GetDeviceAddress", "address 0 with success");
  return args.address;
}
Device Buffer::device() const { return impl_ ? impl_->device : Device(); }
bool Buffer::is_on(const Device& device) const {
  return impl_ && impl_->device.impl() == device.impl();
}
bool Buffer::holds(const Device& device, uint64_t offset, uint64_t bytes) const {
  return impl_ && impl_->Alive() && impl_->device.impl() == device.impl() && offset <= impl_->size &&
         impl_->size - offset >= bytes;
}
TsBuffer* Buffer::raw() const { return valid() ? impl_->raw : nullptr; }

Status Buffer::destroy() {
  TESSERA_CHECK_HANDLE(impl_, "Buffer");
  return impl_->Release();
}

Status memset(const Buffer& buffer, uint64_t offset, uint8_t value,
              uint64_t size) {
  TESSERA_RETURN_IF_ERROR(detail::CheckRange("memset", buffer, offset, size));
  TESSERA_INJECT_FAULT(buffer.impl()->device.impl()->runtime, kCopy, "memset");
  auto args = MakeArgs<TsMemset_Args>();
  args.buffer = buffer.raw();
  args.offset = offset;
  args.size = size;
  args.value = value;
  return TESSERA_PLUGIN_CALL(buffer.impl()->device.impl()->lib(), Memset, args);
}

StatusOr<TsHintResult> advise(const Buffer& buffer, TsAdvice advice,
                              const Device* device, uint64_t offset,
                              uint64_t size) {
  if (size == 0 && buffer.valid() && offset < buffer.size())
    size = buffer.size() - offset;
  TESSERA_RETURN_IF_ERROR(detail::CheckRange("advise", buffer, offset, size));
  if (advice > TS_ADVICE_UNSET_ACCESSED_BY)
    return Status(StatusCode::kInvalidArgument,
                  "advise: unknown advice " + std::to_string(advice));
  if (device && device->impl() &&
      device->impl()->runtime != buffer.impl()->device.impl()->runtime)
    return Status(StatusCode::kInvalidArgument,
                  "advise: the device belongs to another Runtime");
  auto args = MakeArgs<TsBuffer_Advise_Args>();
  args.buffer = buffer.raw();
  args.offset = offset;
  args.size = size;
  args.advice = advice;
  args.device = device ? device->raw() : nullptr;
  const detail::PluginLibrary& lib = buffer.impl()->device.impl()->lib();
  TESSERA_RETURN_IF_ERROR(TESSERA_PLUGIN_CALL(lib, Buffer_Advise, args));
  return detail::CheckHintResult(lib, "Buffer_Advise", &args.result);
}

}  // namespace tessera
