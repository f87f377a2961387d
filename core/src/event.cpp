// Events: record, query, synchronize, elapsed time.
#include "runtime_impl.hpp"

namespace tessera {

using detail::MakeArgs;

namespace detail {

Status EventImpl::Release() {
  if (!MarkDestroyed()) return Status::Ok();
  if (raw == nullptr) return Status::Ok();  // never fully created
  if (RuntimeTrace* trace = device.impl()->runtime->trace.get())
    trace->EventDestroyed(raw);
  auto args = MakeArgs<TsEvent_Destroy_Args>();
  args.event = raw;
  released = raw;  // for "was destroyed" errors: the layer knows where
  raw = nullptr;
  return TESSERA_PLUGIN_CALL(device.impl()->lib(), Event_Destroy, args);
}

EventImpl::~EventImpl() {
  Status st = Release();
  if (!st.ok()) TESSERA_LOG(kWarning, "destroying an event: " + st.ToString());
}

}  // namespace detail

bool Event::valid() const { return impl_ && impl_->Alive(); }
TsEvent* Event::raw() const { return valid() ? impl_->raw : nullptr; }

Status Event::record(const Stream& stream) const {
  TESSERA_CHECK_HANDLE(impl_, "Event");
  TESSERA_CHECK_HANDLE(stream.impl(), "Stream");
  if (stream.impl()->device.impl()->runtime != impl_->device.impl()->runtime)
    return Status(StatusCode::kInvalidArgument,
                  "record: the event belongs to another Runtime than the stream (" +
                      stream.impl()->device.impl()->Describe() +
                      "); create the event through the stream's Runtime");
  if (stream.impl()->device != impl_->device)
    return Status(StatusCode::kInvalidArgument,
                  "record: the event was created on " +
                      impl_->device.impl()->Describe() +
                      " but the stream is on " +
                      stream.impl()->device.impl()->Describe() +
                      "; create the event on the stream's device");
  auto args = MakeArgs<TsEvent_Record_Args>();
  args.event = impl_->raw;
  args.stream = stream.raw();
  detail::RuntimeImpl* rt = impl_->device.impl()->runtime;
  TESSERA_TRACE_API(rt, "Event::record");
  TESSERA_INJECT_FAULT(rt, kOther, "Event::record");
  if (!rt->trace)
    return TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Event_Record, args);
  auto op = rt->trace->BeginOp(*stream.impl());
  Status st = TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Event_Record, args);
  uint64_t id =
      rt->trace->EndOp(op, *stream.impl(), "record event", 0, "event", {}, st.ok());
  rt->trace->NoteRecord(args.event, id);
  return st;
}

StatusOr<bool> Event::query() const {
  TESSERA_CHECK_HANDLE(impl_, "Event");
  auto args = MakeArgs<TsEvent_Query_Args>();
  args.event = impl_->raw;
  TESSERA_RETURN_IF_ERROR(
      TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(), Event_Query, args));
  return args.complete != 0;
}

Status Event::synchronize() const {
  TESSERA_CHECK_HANDLE(impl_, "Event");
  auto args = MakeArgs<TsEvent_Synchronize_Args>();
  args.event = impl_->raw;
  detail::RuntimeImpl* rt = impl_->device.impl()->runtime;
  TESSERA_TRACE_API(rt, "Event::synchronize");
  TESSERA_INJECT_FAULT(rt, kOther, "Event::synchronize");
  Status st = TESSERA_PLUGIN_CALL(impl_->device.impl()->lib(),
                                  Event_Synchronize, args);
  if (rt->trace) rt->trace->Resolve(false);
  return st;
}

Status Event::destroy() {
  TESSERA_CHECK_HANDLE(impl_, "Event");
  return impl_->Release();
}

StatusOr<double> Event::elapsed_ms(const Event& start, const Event& end) {
  TESSERA_CHECK_HANDLE(start.impl(), "Event");
  TESSERA_CHECK_HANDLE(end.impl(), "Event");
  if (start.impl()->device.impl()->runtime != end.impl()->device.impl()->runtime)
    return Status(StatusCode::kInvalidArgument,
                  "elapsed_ms: the two events belong to different Runtimes");
  auto args = MakeArgs<TsEvent_ElapsedTime_Args>();
  args.start = start.raw();
  args.end = end.raw();
  const detail::PluginLibrary& lib = start.impl()->device.impl()->lib();
  TESSERA_RETURN_IF_ERROR(TESSERA_PLUGIN_CALL(lib, Event_ElapsedTime, args));
  // Negative is an answer (end completed before start, as
  // cuEventElapsedTime says it); NaN fails both comparisons.
  if (!(args.milliseconds > -1e15 && args.milliseconds < 1e15))
    return lib.BadAnswer("Event_ElapsedTime", std::to_string(args.milliseconds) + " ms");
  return args.milliseconds;
}

}  // namespace tessera
