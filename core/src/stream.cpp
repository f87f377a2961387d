// Streams: kernel launches, event edges, synchronisation, capture, prefetch.
#include "runtime_impl.hpp"

#include <vector>

namespace tessera {

using detail::MakeArgs;

namespace detail {

Status StreamImpl::Release() {
  if (is_default)
    return Status(StatusCode::kFailedPrecondition,
                  "the default stream belongs to its device and cannot be "
                  "destroyed");
  if (!MarkDestroyed()) return Status::Ok();
  if (raw == nullptr) return Status::Ok();  // never fully created
  // The trace first: it synchronizes the stream's timed work, which needs
  // the stream alive (after Stream_Destroy it read freed memory: ASan).
  if (RuntimeTrace* trace = device.impl()->runtime->trace.get())
    trace->StreamDestroyed(raw);
  auto args = MakeArgs<TsStream_Destroy_Args>();
  args.stream = raw;
  Status st = TESSERA_PLUGIN_CALL(device.impl()->lib(), Stream_Destroy, args);
  if (st.code() == StatusCode::kFailedPrecondition) {
    // The plugin kept the stream (a capture is open on it): so does the
    // handle, or the capture could never be ended (end_capture said
    // INVALID_HANDLE, and streams that joined it stayed capturing).
    alive.store(true, std::memory_order_release);
    return st;
  }
  released = raw;  // for "was destroyed" errors: the layer knows where
  raw = nullptr;
  return st;
}

StreamImpl::~StreamImpl() {
  if (is_default || !raw) return;
  Status st = Release();
  if (st.code() == StatusCode::kFailedPrecondition && raw && !device.impl()->lib().InForkedChild()) {
    // The last handle of a stream that is still capturing: the capture is
    // ended and its graph discarded (with every stream that joined it),
    // then the stream goes.
    const detail::PluginLibrary& lib = device.impl()->lib();
    auto end = MakeArgs<TsStream_EndCapture_Args>();
    end.stream = raw;
    Status ended = TESSERA_PLUGIN_CALL(lib, Stream_EndCapture, end);
    if (ended.ok() && end.graph) {
      auto destroy = MakeArgs<TsGraph_Destroy_Args>();
      destroy.graph = end.graph;
      TESSERA_PLUGIN_CALL(lib, Graph_Destroy, destroy).IgnoreError();
    }
    st = Release();
    if (st.ok()) {
      TESSERA_LOG(kWarning, "a stream was dropped while capturing: its capture was ended and the graph "
                            "discarded (end_capture() before dropping the stream keeps it)");
    } else if (st.code() == StatusCode::kFailedPrecondition) {
      // A stream that joined another stream's capture: only the origin ends
      // it.  The plugin keeps the stream until the Runtime goes
      // (Client_Destroy frees what is left).
      TESSERA_LOG(kWarning, "a stream that joined another stream's capture was dropped while that "
                            "capture is open: it is released when the Runtime goes (end the capture "
                            "on its origin stream before dropping the streams that joined it)");
      return;
    }
  }
  if (!st.ok()) TESSERA_LOG(kWarning, "destroying a stream: " + st.ToString());
}

}  // namespace detail

bool Stream::valid() const { return impl_ && impl_->Alive(); }
bool Stream::is_default() const { return impl_ && impl_->is_default; }
Device Stream::device() const { return impl_ ? impl_->device : Device(); }
bool Stream::is_on(const Device& device) const {
  return impl_ && impl_->device.impl() == device.impl();
}
bool Stream::usable_on(const Device& device) const {
  return impl_ && impl_->Alive() && impl_->device.impl() == device.impl();
}
TsStream* Stream::raw() const { return valid() ? impl_->raw : nullptr; }
const StreamOptions& Stream::options() const {
  static const StreamOptions kNone;
  return impl_ ? impl_->options : kNone;
}

Status Stream::launch(const Kernel& kernel, TsDim3 grid, TsDim3 group_size,
                      const std::vector<KernelArg>& args,
                      uint64_t shared_memory_bytes) const {
  return launch(kernel, grid, group_size, args.data(), args.size(),
                shared_memory_bytes);
}

namespace {

// Why ConvertArgs stopped at an argument.
enum class ArgFault : uint8_t { kNone, kDeadBuffer, kOtherRuntime, kPastEnd, kRequirement };

// The caller's arguments -> the ABI's, checked: a buffer alive, of the
// stream's Runtime, its offset inside it; with `kRequired`, each argument
// also meets required[i] (Stream::launch's contract).  Returns the fault and
// sets *bad to the argument; no strings here (ArgError builds the message),
// so the hot path stays small.  Instantiated twice so a launch without
// requirements pays nothing for them.
template <bool kRequired>
[[gnu::always_inline]] inline ArgFault ConvertArgs(const detail::DeviceImpl* device, const KernelArg* args,
                                                   size_t num_args, const KernelArgRequirement* required,
                                                   TsKernelArg* raw_args, size_t* bad) {
  // *bad is written only on a fault (a store per argument shows).
  auto fail = [bad](size_t i, ArgFault f) {
    *bad = i;
    return f;
  };
  for (size_t i = 0; i < num_args; ++i) {
    const KernelArg& a = args[i];
    TsKernelArg& r = raw_args[i];
    r = TsKernelArg{};
    r.kind = a.kind();
    if (a.kind() == TS_KERNEL_ARG_BUFFER) {
      const Buffer* b = a.buffer_ref();
      if (!b || !b->valid()) return fail(i, ArgFault::kDeadBuffer);
      const detail::BufferImpl& bi = *b->impl();  // alive: checked above
      // A requirement asks for the stream's device (which implies its
      // Runtime); without one, any device of the Runtime is passed on.
      if (kRequired ? bi.device.impl().get() != device : bi.device.impl()->runtime != device->runtime)
        return fail(i, kRequired ? ArgFault::kRequirement : ArgFault::kOtherRuntime);
      if (a.offset() >= bi.size) return fail(i, ArgFault::kPastEnd);
      if (kRequired && (required[i].scalar || bi.size - a.offset() < required[i].bytes))
        return fail(i, ArgFault::kRequirement);
      r.buffer = bi.raw;
      r.offset = a.offset();
    } else {
      if (kRequired && (!required[i].scalar || a.size() != required[i].bytes))
        return fail(i, ArgFault::kRequirement);
      r.data = a.data();
      r.size = a.size();
    }
  }
  return ArgFault::kNone;
}

// What is wrong with argument `i` (ConvertArgs' `fault`), for the caller.
[[gnu::cold]] Status ArgError(const Kernel& kernel, const Device& stream_device, const KernelArg& a, size_t i,
                              ArgFault fault, const KernelArgRequirement* required) {
  const std::string what = "launch of '" + kernel.name() + "': argument " + std::to_string(i);
  // The buffer's state, whatever its liveness now (another thread may
  // destroy it meanwhile: the handle keeps the object).
  const detail::BufferImpl* bi =
      a.kind() == TS_KERNEL_ARG_BUFFER && a.buffer_ref() ? a.buffer_ref()->impl().get() : nullptr;
  switch (fault) {
    case ArgFault::kNone:
      break;
    case ArgFault::kDeadBuffer:
      return Status(StatusCode::kInvalidHandle, what + " is a null or destroyed buffer");
    case ArgFault::kOtherRuntime:
      return Status(StatusCode::kInvalidArgument, what + " is a buffer of another Runtime");
    case ArgFault::kPastEnd:
      return Status(StatusCode::kOutOfRange, what + " has offset " + std::to_string(a.offset()) +
                                                " past the end of its buffer of " + std::to_string(bi->size) +
                                                " bytes");
    case ArgFault::kRequirement: {
      const KernelArgRequirement& req = required[i];
      const std::string bytes = std::to_string(req.bytes);
      if (req.scalar && bi)
        return Status(StatusCode::kInvalidArgument,
                      what + " is a buffer; the kernel takes a scalar of " + bytes + " bytes there");
      if (req.scalar)
        return Status(StatusCode::kInvalidArgument, what + " is a scalar of " + std::to_string(a.size()) +
                                                        " bytes; the kernel takes " + bytes + " bytes there");
      if (!bi)
        return Status(StatusCode::kInvalidArgument,
                      what + " is a scalar; the kernel takes a buffer of at least " + bytes + " bytes there");
      if (bi->device.impl() != stream_device.impl())
        return Status(StatusCode::kInvalidArgument,
                      what + " is a buffer of " + bi->device.info().name + "; the stream is on " +
                          stream_device.info().name + ": copy it to the stream's device first");
      return Status(StatusCode::kOutOfRange,
                    what + " needs " + bytes + " bytes after its offset " + std::to_string(a.offset()) +
                        ", and its buffer of " + std::to_string(bi->size) + " bytes holds " +
                        std::to_string(bi->size - a.offset()) + ": pass a larger buffer or a smaller offset");
    }
  }
  return Status(StatusCode::kInternal, what + ": no fault");
}

}  // namespace

Status Stream::launch(const Kernel& kernel, TsDim3 grid, TsDim3 group_size,
                      const KernelArg* args, size_t num_args,
                      uint64_t shared_memory_bytes,
                      const KernelArgRequirement* required) const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  if (!kernel.valid())
    return Status(StatusCode::kInvalidHandle,
                  "launch: the kernel handle is null or its executable was "
                  "destroyed");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || group_size.x == 0 ||
      group_size.y == 0 || group_size.z == 0)
    return Status(StatusCode::kInvalidArgument,
                  "launch of '" + kernel.name() + "': grid (" +
                      std::to_string(grid.x) + "," + std::to_string(grid.y) +
                      "," + std::to_string(grid.z) + ") and group size (" +
                      std::to_string(group_size.x) + "," +
                      std::to_string(group_size.y) + "," +
                      std::to_string(group_size.z) +
                      ") must have every dimension >= 1");
  const detail::DeviceImpl* device = impl_->device.impl().get();
  detail::RuntimeImpl* rt = device->runtime;
  // Another Runtime's kernel is another client's object: its plugin (even
  // the same one) cannot run it here (the message it gave named two equal
  // devices).
  if (kernel.exe_->device.impl()->runtime != rt)
    return Status(StatusCode::kInvalidArgument,
                  "launch of '" + kernel.name() + "': the kernel was loaded by another Runtime than the "
                  "stream's (" + device->Describe() + "): load its executable through this Runtime's device");
  TESSERA_TRACE_API(rt, "Stream::launch");
  TESSERA_INJECT_FAULT(rt, kLaunch, "launch");
  // Most kernels take a handful of arguments: convert them on the stack.
  constexpr size_t kInline = 16;
  TsKernelArg inline_args[kInline];
  std::vector<TsKernelArg> heap_args;
  TsKernelArg* raw_args = inline_args;
  if (num_args > kInline) {
    heap_args.resize(num_args);
    raw_args = heap_args.data();
  }
  size_t bad = 0;
  const ArgFault fault = required ? ConvertArgs<true>(device, args, num_args, required, raw_args, &bad)
                                  : ConvertArgs<false>(device, args, num_args, nullptr, raw_args, &bad);
  if (fault != ArgFault::kNone) return ArgError(kernel, impl_->device, args[bad], bad, fault, required);
  auto launch = MakeArgs<TsKernel_Launch_Args>();
  launch.kernel = kernel.raw();
  launch.stream = impl_->raw;
  launch.grid = grid;
  launch.group_size = group_size;
  launch.shared_memory_bytes = shared_memory_bytes;
  launch.args = raw_args;
  launch.num_args = num_args;
  if (!rt->trace)
    return TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Kernel_Launch,
                               launch);
  const uint32_t dims[7] = {grid.x, grid.y, grid.z, group_size.x,
                            group_size.y, group_size.z,
                            static_cast<uint32_t>(num_args)};
  const uint32_t name_id =
      rt->trace->tracer().InternKernel(kernel.raw(), kernel.name());
  _trace_api.kernel_id = name_id;
  auto op = rt->trace->BeginOp(*impl_, /*slot=*/true);
  launch.completion_ns = op.slot;
  Status st = TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Kernel_Launch,
                                  launch);
  rt->trace->EndOp(op, *impl_, nullptr, name_id, "kernel", {}, st.ok(), dims);
  return st;
}

Status Stream::launch(const GraphExec& exec) const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  TESSERA_CHECK_HANDLE(exec.impl(), "GraphExec");
  if (exec.impl()->device.impl()->runtime != impl_->device.impl()->runtime)
    return Status(StatusCode::kInvalidArgument,
                  "launch: the graph belongs to another Runtime");
  // A graph holds its device's kernels and buffers: it runs on a stream of
  // that device only (the cpu plugin ran it anywhere; CUDA refuses).
  if (exec.impl()->device.impl() != impl_->device.impl())
    return Status(StatusCode::kInvalidArgument,
                  "launch: the graph was captured on " + exec.impl()->device.backend() + " device " +
                      std::to_string(exec.impl()->device.info().ordinal) + "; this stream is on device " +
                      std::to_string(impl_->device.info().ordinal) +
                      ": launch it on a stream of the device it was captured on");
  auto args = MakeArgs<TsGraphExec_Launch_Args>();
  args.exec = exec.raw();
  args.stream = impl_->raw;
  detail::RuntimeImpl* rt = impl_->device.impl()->runtime;
  TESSERA_TRACE_API(rt, "Stream::launch(graph)");
  TESSERA_INJECT_FAULT(rt, kLaunch, "launch(graph)");
  if (!rt->trace)
    return TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), GraphExec_Launch,
                               args);
  auto op = rt->trace->BeginOp(*impl_);
  Status st = TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), GraphExec_Launch,
                                  args);
  rt->trace->EndOp(op, *impl_, "graph", 0, "graph", {}, st.ok());
  return st;
}

Status Stream::record(const Event& event) const { return event.record(*this); }

Status Stream::wait(const Event& event) const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  TESSERA_CHECK_HANDLE(event.impl(), "Event");
  if (event.impl()->device.impl()->runtime != impl_->device.impl()->runtime)
    return Status(StatusCode::kInvalidArgument,
                  "wait: the event belongs to another Runtime");
  auto args = MakeArgs<TsStream_WaitEvent_Args>();
  args.stream = impl_->raw;
  args.event = event.raw();
  detail::RuntimeImpl* rt = impl_->device.impl()->runtime;
  TESSERA_TRACE_API(rt, "Stream::wait");
  TESSERA_INJECT_FAULT(rt, kOther, "Stream::wait");
  if (!rt->trace)
    return TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Stream_WaitEvent,
                               args);
  auto op = rt->trace->BeginOp(*impl_);
  Status st = TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Stream_WaitEvent,
                                  args);
  uint64_t id = rt->trace->EndOp(op, *impl_, "wait event", 0, "event", {}, st.ok());
  rt->trace->NoteWait(args.event, id);
  return st;
}

Status Stream::synchronize() const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  auto args = MakeArgs<TsStream_Synchronize_Args>();
  args.stream = impl_->raw;
  detail::RuntimeImpl* rt = impl_->device.impl()->runtime;
  TESSERA_TRACE_API(rt, "Stream::synchronize");
  TESSERA_INJECT_FAULT(rt, kOther, "Stream::synchronize");
  Status st = TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(),
                                  Stream_Synchronize, args);
  if (rt->trace) rt->trace->Resolve(false, st.ok() ? impl_->raw : nullptr);
  return st;
}

StatusOr<bool> Stream::query() const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  auto args = MakeArgs<TsStream_Query_Args>();
  args.stream = impl_->raw;
  TESSERA_RETURN_IF_ERROR(
      TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Stream_Query, args));
  return args.idle != 0;
}

Status Stream::begin_capture() const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  // A plugin whose table ends before the graph entries (an older MINOR)
  // could capture, but the graph could be neither replayed nor destroyed:
  // it would leak in the plugin. Refuse before anything is captured.
  const detail::PluginLibrary& lib = impl_->device.impl()->lib();
  for (auto [entry, name] : {std::pair{lib.table().Graph_Destroy != nullptr, "Graph_Destroy"},
                             std::pair{lib.table().Graph_Instantiate != nullptr, "Graph_Instantiate"},
                             std::pair{lib.table().GraphExec_Launch != nullptr, "GraphExec_Launch"},
                             std::pair{lib.table().GraphExec_Destroy != nullptr, "GraphExec_Destroy"}})
    if (!entry) return lib.Missing(name);
  auto args = MakeArgs<TsStream_BeginCapture_Args>();
  args.stream = impl_->raw;
  detail::RuntimeImpl* rt = impl_->device.impl()->runtime;
  TESSERA_TRACE_API(rt, "Stream::begin_capture");
  Status st = TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(),
                                  Stream_BeginCapture, args);
  if (st.ok() && rt->trace) rt->trace->CaptureBegan();
  return st;
}

StatusOr<Graph> Stream::end_capture() const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  auto args = MakeArgs<TsStream_EndCapture_Args>();
  args.stream = impl_->raw;
  detail::RuntimeImpl* rt = impl_->device.impl()->runtime;
  TESSERA_TRACE_API(rt, "Stream::end_capture");
  if (rt->trace) rt->trace->CaptureEnded();
  TESSERA_RETURN_IF_ERROR(TESSERA_PLUGIN_CALL_OUT(impl_->device.impl()->lib(),
                                                  Stream_EndCapture, args, graph));
  auto graph = std::make_shared<detail::GraphImpl>();
  graph->device = impl_->device;
  graph->raw = args.graph;
  return Graph(std::move(graph));
}

StatusOr<TsHintResult> Stream::prefetch(const Buffer& buffer,
                                        const Device* target, uint64_t offset,
                                        uint64_t size) const {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  TESSERA_CHECK_HANDLE(buffer.impl(), "Buffer");
  if (size == 0 && offset < buffer.size()) size = buffer.size() - offset;
  if (offset > buffer.size() || size > buffer.size() - offset)
    return Status(StatusCode::kOutOfRange,
                  "prefetch: " + std::to_string(size) + " bytes at offset " +
                      std::to_string(offset) + " run past the end of a buffer of " +
                      std::to_string(buffer.size()) + " bytes");
  if (target && target->impl() &&
      target->impl()->runtime != impl_->device.impl()->runtime)
    return Status(StatusCode::kInvalidArgument,
                  "prefetch: the target device belongs to another Runtime");
  if (buffer.impl()->device.impl()->runtime != impl_->device.impl()->runtime)
    return Status(StatusCode::kInvalidArgument,
                  "prefetch: the buffer belongs to another Runtime than the stream (" +
                      impl_->device.impl()->Describe() + ")");
  auto args = MakeArgs<TsBuffer_Prefetch_Args>();
  args.buffer = buffer.raw();
  args.offset = offset;
  args.size = size;
  args.target = target ? target->raw() : nullptr;
  args.stream = impl_->raw;
  const detail::PluginLibrary& lib = impl_->device.impl()->lib();
  TESSERA_RETURN_IF_ERROR(TESSERA_PLUGIN_CALL(lib, Buffer_Prefetch, args));
  return detail::CheckHintResult(lib, "Buffer_Prefetch", &args.result);
}

Status Stream::destroy() {
  TESSERA_CHECK_HANDLE(impl_, "Stream");
  return impl_->Release();
}

}  // namespace tessera
