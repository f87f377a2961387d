// Events: markers on a stream timeline, with a timestamp taken when they run.
#include <chrono>

#include "internal.hpp"

namespace tessera::cpu {
namespace {

class MarkerOp final : public Op {
 public:
  MarkerOp(std::shared_ptr<EventRecord> rec, bool timing) : rec_(std::move(rec)), timing_(timing) {}
  void run(Task&, uint32_t, uint32_t, WorkerContext&) override {
    if (timing_)
      rec_->timestamp_ns.store(steady_now_ns(), std::memory_order_release);
  }

 private:
  std::shared_ptr<EventRecord> rec_;
  bool timing_;
};

bool record_complete(const EventRecord& r) {
  return r.stream->completed.load(std::memory_order_acquire) >= r.seq;
}

}  // namespace

TS_CPU_ENTRY(Event_Create, TS_EVENT_CREATE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->device, "Event_Create", "device");
  if (args->flags & ~static_cast<uint32_t>(TS_EVENT_DISABLE_TIMING))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Event_Create: unknown flag bits 0x%x: only TS_EVENT_DISABLE_TIMING "
                  "(0x1) is defined",
                  args->flags & ~static_cast<uint32_t>(TS_EVENT_DISABLE_TIMING));
  auto ev = std::make_unique<TsEvent>();
  ev->device = args->device;
  ev->flags = args->flags;
  {
    std::lock_guard<std::mutex> lk(ev->device->sched().mutex());
    ev->device->live.events.insert(ev.get());
  }
  args->event = ev.release();
  return nullptr;
}

void destroy_event(TsEvent* ev) {
  {
    std::lock_guard<std::mutex> lk(ev->device->sched().mutex());
    ev->device->live.events.erase(ev);
  }
  // A pending marker owns its EventRecord, so the event can go at once.
  ev->magic = kMagicDead;
  delete ev;
}

TS_CPU_ENTRY(Event_Destroy, TS_EVENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->event, "Event_Destroy", "event");
  destroy_event(args->event);
  return nullptr;
}

TS_CPU_ENTRY(Event_Record, TS_EVENT_RECORD_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->event, "Event_Record", "event");
  TS_CPU_CHECK_HANDLE(args->stream, "Event_Record", "stream");
  TsEvent* ev = args->event;
  TsStream* s = args->stream;
  if (ev->device->client != s->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Event_Record: event and stream belong to different clients");
  const bool timing = (ev->flags & TS_EVENT_DISABLE_TIMING) == 0;
  std::lock_guard<std::mutex> elk(ev->mu);
  Scheduler& sched = s->device->sched();
  std::lock_guard<std::mutex> lk(sched.mutex());
  if (capturing_locked(*s->state)) {
    capture_record_event_locked(*s->state, ev);
    return nullptr;
  }
  // A new record, or the last one when nothing else holds it (no task to
  // stamp, no synchronize or elapsed-time call reading it: those take their
  // reference under ev->mu, which we hold, so the count cannot grow).
  std::shared_ptr<EventRecord> rec;
  if (ev->record && ev->record.use_count() == 1) {
    rec = std::move(ev->record);
    rec->seq = 0;
    rec->timestamp_ns.store(0, std::memory_order_relaxed);
  } else {
    rec = std::make_shared<EventRecord>();
  }
  rec->stream = s->state;
  // Fast path, no marker task: when the record adds no dependency of its
  // own (no Stream_WaitEvent pending on the stream, no default-stream rule
  // that is not yet met), the event completes exactly when the stream's
  // last queued task does, so it takes that task's seq and completion time;
  // on an idle stream it is complete now.  This keeps a record as cheap as
  // a lock (no worker wake-up), which is what the trace's device clock and
  // every timing loop lean on.
  DepList implicit;
  implicit_deps_locked(s->device, s->state.get(), implicit);
  if (implicit.size() == 0 && s->state->pending_waits.size() == 0) {
    std::shared_ptr<std::atomic<int64_t>> stamp;
    if (timing) stamp = std::shared_ptr<std::atomic<int64_t>>(rec, &rec->timestamp_ns);
    rec->seq = sched.stamp_tail_locked(*s->state, stamp);
    if (rec->seq == 0) {  // idle: everything submitted has completed
      rec->seq = s->state->completed.load(std::memory_order_acquire);
      if (timing)
        rec->timestamp_ns.store(steady_now_ns(), std::memory_order_release);
    }
    ev->record = std::move(rec);
    ev->capture.reset();
    ev->capture_nodes.clear();
    return nullptr;
  }
  Task* t = make_owned_task(MarkerOp(rec, timing));
  std::unique_ptr<Task, void (*)(Task*)> owned(t, t->release);
  enqueue_locked(s->device, s->state, owned.release());
  rec->seq = t->seq;
  ev->record = std::move(rec);
  ev->capture.reset();
  ev->capture_nodes.clear();
  return nullptr;
}

TS_CPU_ENTRY(Event_Query, TS_EVENT_QUERY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->event, "Event_Query", "event");
  std::lock_guard<std::mutex> elk(args->event->mu);
  const auto& r = args->event->record;
  args->complete = (!r || record_complete(*r)) ? 1 : 0;
  return nullptr;
}

TS_CPU_ENTRY(Event_Synchronize, TS_EVENT_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->event, "Event_Synchronize", "event");
  std::shared_ptr<EventRecord> r;
  {
    std::lock_guard<std::mutex> elk(args->event->mu);
    r = args->event->record;
  }
  if (!r) return nullptr;
  args->event->device->sched().wait(*r->stream, r->seq);
  return nullptr;
}

TS_CPU_ENTRY(Event_ElapsedTime, TS_EVENT_ELAPSEDTIME_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->start, "Event_ElapsedTime", "start");
  TS_CPU_CHECK_HANDLE(args->end, "Event_ElapsedTime", "end");
  TsEvent* evs[2] = {args->start, args->end};
  const char* names[2] = {"start", "end"};
  int64_t t[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    if (evs[i]->flags & TS_EVENT_DISABLE_TIMING)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cpu: Event_ElapsedTime: %s event %p was created with "
                    "TS_EVENT_DISABLE_TIMING: create it without that flag to time with it",
                    names[i], static_cast<void*>(evs[i]));
    // Read under the event's lock: a record cannot be replaced meanwhile.
    std::lock_guard<std::mutex> elk(evs[i]->mu);
    const EventRecord* rec = evs[i]->record.get();
    if (!rec)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cpu: Event_ElapsedTime: %s event %p was never recorded: call "
                    "Event_Record on it first",
                    names[i], static_cast<void*>(evs[i]));
    if (!record_complete(*rec))
      return errorf(TS_ERROR_NOT_READY,
                    "cpu: Event_ElapsedTime: %s event %p has not completed yet: "
                    "Event_Synchronize it first",
                    names[i], static_cast<void*>(evs[i]));
    t[i] = rec->timestamp_ns.load(std::memory_order_acquire);
  }
  const int64_t t0 = t[0], t1 = t[1];
  args->milliseconds = static_cast<double>(t1 - t0) / 1e6;
  return nullptr;
}

}  // namespace tessera::cpu
