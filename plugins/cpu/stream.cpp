// Streams: creation, default-stream ordering rules, submission, waits.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "internal.hpp"

namespace tessera::cpu {

namespace {
// Drops destroyed, drained streams from the device registry (mutex held).
void prune_locked(TsDevice* dev) {
  auto& v = dev->streams;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [](const std::shared_ptr<StreamState>& s) {
                           return s->destroyed && s->head == nullptr;
                         }),
          v.end());
}
}  // namespace

void implicit_deps_locked(TsDevice* dev, StreamState* s, DepList& deps) {
  if (s->is_default) {
    // Legacy default stream: after everything queued on blocking streams.
    prune_locked(dev);
    for (const auto& x : dev->streams) {
      if (x.get() == s || !x->blocking || x->hidden) continue;
      const uint64_t sub = x->submitted.load(std::memory_order_relaxed);
      if (sub > x->completed.load(std::memory_order_acquire)) deps.add(x, sub);
    }
  } else if (s->blocking && !s->hidden) {
    // A blocking stream: after everything queued on the default stream.
    const auto& def = dev->default_stream->state;
    const uint64_t sub = def->submitted.load(std::memory_order_relaxed);
    if (sub > def->completed.load(std::memory_order_acquire)) deps.add(def, sub);
  }
}

void enqueue_locked(TsDevice* dev, const std::shared_ptr<StreamState>& s, Task* t) {
  implicit_deps_locked(dev, s.get(), t->deps);
  if (s->pending_waits.size() != 0) {
    t->deps.append(s->pending_waits);
    s->pending_waits.clear();
  }
  dev->sched().submit_locked(s, t);
}

TsError* submit_task(TsStream* stream, Task* t, std::shared_ptr<Op> (*share)(Task*),
                     const OpUses* uses, uint64_t* completion_ns) {
  std::unique_ptr<Task, void (*)(Task*)> owned(t, t->release);
  Scheduler& sched = stream->device->sched();
  std::lock_guard<std::mutex> lk(sched.mutex());
  const auto& st = stream->state;
  if (capturing_locked(*st)) {
    if (completion_ns)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cpu: stream %p is capturing a graph, and a graph replayed later has "
                    "nowhere to write completion_ns: pass NULL while capturing",
                    static_cast<void*>(stream));
    capture_node_locked(*st, share(t), uses);
    return nullptr;
  }
  t->caller_stamp = completion_ns;  // written when the task completes
  enqueue_locked(stream->device, st, owned.release());
  return nullptr;
}

namespace {
// A task that only orders: what Stream_WriteTimestamp queues when its point
// has waits of its own, and what carries a stream's pending waits when it
// is synchronized or queried.
class NopTaskOp final : public Op {
 public:
  void run(Task&, uint32_t, uint32_t, WorkerContext&) override {}
};

// A Stream_WaitEvent is work of the stream (as in CUDA): the stream is not
// done until the event is.  Waits ride on the next task; with no task after
// them they get one of their own here, so that synchronize and query see
// them.  Caller holds neither lock.
void flush_pending_waits(TsStream* s) {
  std::lock_guard<std::mutex> lk(s->device->sched().mutex());
  if (s->state->pending_waits.size() == 0) return;
  enqueue_locked(s->device, s->state, make_owned_task(NopTaskOp{}));
}
}  // namespace

void device_synchronize(TsDevice* dev) {
  Scheduler& sched = dev->sched();
  std::vector<std::pair<std::shared_ptr<StreamState>, uint64_t>> targets;
  {
    std::lock_guard<std::mutex> lk(sched.mutex());
    prune_locked(dev);
    targets.reserve(dev->streams.size());
    for (const auto& s : dev->streams) {
      // Waits with no task after them are work of the stream too.
      if (s->pending_waits.size() != 0) enqueue_locked(dev, s, make_owned_task(NopTaskOp{}));
      const uint64_t sub = s->submitted.load(std::memory_order_relaxed);
      if (sub > s->completed.load(std::memory_order_acquire)) targets.emplace_back(s, sub);
    }
  }
  for (auto& [s, v] : targets) sched.wait(*s, v);
}

TS_CPU_ENTRY(Stream_Create, TS_STREAM_CREATE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->device, "Stream_Create", "device");
  if (args->flags & ~static_cast<uint32_t>(TS_STREAM_NON_BLOCKING))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Stream_Create: unknown flag bits 0x%x: only TS_STREAM_NON_BLOCKING "
                  "(0x1) is defined",
                  args->flags & ~static_cast<uint32_t>(TS_STREAM_NON_BLOCKING));
  TsDevice* dev = args->device;
  auto st = std::make_shared<StreamState>();
  st->device = dev;
  st->priority = args->priority;
  st->weight = args->weight == 0 ? 1.0 : static_cast<double>(args->weight);
  st->blocking = (args->flags & TS_STREAM_NON_BLOCKING) == 0;
  auto handle = std::make_unique<TsStream>();
  handle->device = dev;
  handle->state = st;
  {
    std::lock_guard<std::mutex> lk(dev->sched().mutex());
    prune_locked(dev);
    dev->streams.push_back(st);
    dev->live.streams.insert(handle.get());
  }
  args->stream = handle.release();
  return nullptr;
}

TsError* destroy_stream(TsStream* s, bool abandon_capture) {
  TsDevice* dev = s->device;
  {
    std::lock_guard<std::mutex> lk(dev->sched().mutex());
    if (capturing_locked(*s->state)) {
      if (!abandon_capture)
        return errorf(TS_ERROR_FAILED_PRECONDITION,
                      "cpu: Stream_Destroy: stream %p is capturing: end the capture with "
                      "Stream_EndCapture on its origin stream first",
                      static_cast<void*>(s));
      abandon_capture_locked(*s->state);
    }
    dev->live.streams.erase(s);
    // Queued work keeps the state alive (Scheduler::active_); it is freed
    // when the last task completes and the registry prunes it.  Nothing is
    // submitted to it any more: waits still pending would only keep other
    // streams (or itself, a cycle) alive.
    s->state->destroyed = true;
    s->state->pending_waits.clear();
  }
  s->magic = kMagicDead;
  delete s;
  return nullptr;
}

TS_CPU_ENTRY(Stream_Destroy, TS_STREAM_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->stream, "Stream_Destroy", "stream");
  TsStream* s = args->stream;
  if (s->state->is_default)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_Destroy: stream %p is the default stream of device %u, which "
                  "the device owns: do not destroy it",
                  static_cast<void*>(s), s->device->ordinal);
  return destroy_stream(s, false);
}

static TsError* check_not_capturing(TsStream* s, const char* entry) {
  std::lock_guard<std::mutex> lk(s->device->sched().mutex());
  if (capturing_locked(*s->state))
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: %s: stream %p is capturing a graph; synchronizing or querying a "
                  "capturing stream is not allowed (cudaErrorStreamCaptureUnsupported): end "
                  "the capture first",
                  entry, static_cast<void*>(s));
  return nullptr;
}


TsError* synchronize_stream(TsStream* s, const char* entry) {
  StreamState& st = *s->state;
  if (TsError* e = check_not_capturing(s, entry)) return e;
  flush_pending_waits(s);
  const uint64_t target = st.submitted.load(std::memory_order_acquire);
  s->device->sched().wait(st, target);
  return nullptr;
}

TS_CPU_ENTRY(Stream_Synchronize, TS_STREAM_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->stream, "Stream_Synchronize", "stream");
  return synchronize_stream(args->stream, "Stream_Synchronize");
}

// The time the stream's work so far completes, into the caller's memory:
// taken by the worker that completes the stream's last queued task (no task
// of its own, no wake-up), or now when the stream is idle.
TS_CPU_ENTRY(Stream_WriteTimestamp, TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->stream, "Stream_WriteTimestamp", "stream");
  if (TsError* e = plugin_support::check_timestamp_slot("cpu", "Stream_WriteTimestamp", args->timestamp_ns))
    return e;
  Scheduler& sched = args->stream->device->sched();
  {
    std::lock_guard<std::mutex> lk(sched.mutex());
    if (capturing_locked(*args->stream->state))
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cpu: Stream_WriteTimestamp: stream %p is capturing a graph, and a graph "
                    "replayed later has nowhere to write: end the capture first",
                    static_cast<void*>(args->stream));
    const auto& st = args->stream->state;
    DepList implicit;
    implicit_deps_locked(args->stream->device, st.get(), implicit);
    if (implicit.size() != 0 || st->pending_waits.size() != 0) {
      // The point waits for something besides the stream's own tasks (a
      // Stream_WaitEvent, the default-stream rule): a task of its own that
      // carries those waits, stamped when it completes.
      Task* t = make_owned_task(NopTaskOp{});
      enqueue_locked(args->stream->device, st, t);
    }
    if (sched.stamp_tail_locked(*st, args->timestamp_ns)) return nullptr;
  }
  __atomic_store_n(args->timestamp_ns, static_cast<uint64_t>(steady_now_ns()), __ATOMIC_RELEASE);
  return nullptr;
}

TS_CPU_ENTRY(Stream_Query, TS_STREAM_QUERY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->stream, "Stream_Query", "stream");
  if (TsError* e = check_not_capturing(args->stream, "Stream_Query")) return e;
  flush_pending_waits(args->stream);
  StreamState& st = *args->stream->state;
  args->idle = st.completed.load(std::memory_order_acquire) ==
                       st.submitted.load(std::memory_order_acquire)
                   ? 1
                   : 0;
  return nullptr;
}

TS_CPU_ENTRY(Stream_WaitEvent, TS_STREAM_WAITEVENT_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->stream, "Stream_WaitEvent", "stream");
  TS_CPU_CHECK_HANDLE(args->event, "Stream_WaitEvent", "event");
  TsStream* s = args->stream;
  TsEvent* ev = args->event;
  if (ev->device->client != s->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Stream_WaitEvent: event and stream belong to different clients");
  std::lock_guard<std::mutex> elk(ev->mu);
  std::lock_guard<std::mutex> lk(s->device->sched().mutex());
  if (ev->capture && capture_session_open_locked(*ev->capture))
    return capture_wait_event_locked(s, ev->capture, ev->capture_nodes);
  // Last recorded inside a capture that has ended: that record belongs to
  // a graph, and the one before it is not what the caller last asked for
  // (it was waited on silently); as the vulkan plugin.
  if (ev->capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_WaitEvent: the event was last recorded inside a graph capture "
                  "that has ended; record it again outside the capture");
  if (!ev->record) return nullptr;  // never recorded: no-op
  if (capturing_locked(*s->state))
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_WaitEvent: stream %p is capturing but event %p was recorded "
                  "outside the capture; a graph cannot depend on work outside it: record the "
                  "event inside the capture or wait before Stream_BeginCapture",
                  static_cast<void*>(s), static_cast<void*>(ev));
  s->state->pending_waits.add(ev->record->stream, ev->record->seq);
  return nullptr;
}

}  // namespace tessera::cpu
