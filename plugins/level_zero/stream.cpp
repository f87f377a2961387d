// Streams: in-order immediate command lists (zeCommandListCreateImmediate
// with ZE_COMMAND_QUEUE_FLAG_IN_ORDER on the compute queue group, queues
// taken in turn), Stream_Destroy/Synchronize/Query and Stream_WaitEvent
// (zeCommandListAppendWaitOnEvents), plus the marker bookkeeping that every
// file appending commands uses (internal.hpp explains it).
//
// THE DEFAULT STREAM is a stream like the others, ordered with every
// blocking stream of the device as the ABI requires: a command on it first
// waits (zeCommandListAppendWaitOnEvents) for the work every blocking stream
// appended since it last looked, and a command on a blocking stream first
// waits for the default stream's new work.  Non-blocking streams skip both.
//
// ORDER ON OLD DRIVERS.  ZE_COMMAND_QUEUE_FLAG_IN_ORDER is Level Zero 1.7.
// A driver that refuses it (an invalid or unsupported enumeration) gets a
// list without it, and the plugin appends a barrier before every command,
// which orders it after everything before (zeCommandListAppendBarrier with
// no wait events).
//
// PRIORITY AND WEIGHT.  The ABI's priority maps onto
// ze_command_queue_priority_t (mapping.hpp): p > 0 HIGH, p < 0 LOW, 0
// NORMAL.  WEIGHTS ARE NOT HONOURED: Level Zero has no proportional share
// and the plugin does not throttle submission to make one, so a weight is
// accepted and ignored, and TsDeviceProperties.stream_weights is 0.
#include <algorithm>

#include "internal.hpp"
#include "mapping.hpp"

namespace tessera::level_zero {

TsError* create_stream(TsDevice* dev, bool is_default, bool non_blocking, int32_t priority,
                       TsStream** out) {
  const ZeFns& fn = *dev->fn;
  ze_command_queue_desc_t qd{};
  qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qd.ordinal = dev->queue_group;
  qd.index = dev->next_queue.fetch_add(1, std::memory_order_relaxed) % dev->queue_count;
  qd.flags = kZeCommandQueueFlagInOrder;
  qd.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  qd.priority = ze_queue_priority(priority);
  ze_command_list_handle_t list = nullptr;
  ze_result_t r = fn.zeCommandListCreateImmediate(dev->client->context, dev->ze, &qd, &list);
  bool in_order = true;
  if (r == ZE_RESULT_ERROR_INVALID_ENUMERATION || r == ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION ||
      r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    qd.flags = 0;  // a driver before API 1.7: order with barriers instead
    in_order = false;
    r = fn.zeCommandListCreateImmediate(dev->client->context, dev->ze, &qd, &list);
  }
  if (r != ZE_RESULT_SUCCESS)
    return dev_error(dev, r,
                     strprintf("zeCommandListCreateImmediate(device %u, queue group %u index %u, "
                               "priority %d)",
                               dev->ordinal, qd.ordinal, qd.index, static_cast<int>(qd.priority)));
  auto* s = new TsStream;
  s->device = dev;
  s->list = list;
  s->is_default = is_default;
  s->non_blocking = non_blocking;
  s->in_order = in_order;
  s->priority = qd.priority;
  *out = s;
  return nullptr;
}

void poll_locked(TsStream* s) {
  const ZeFns& fn = *s->device->fn;
  while (!s->progress.empty()) {
    const MarkerRef& m = s->progress.front();
    if (fn.zeEventQueryStatus(m->event()) != ZE_RESULT_SUCCESS) break;
    s->done_upto = std::max(s->done_upto, m->upto);
    s->progress.pop_front();
  }
  while (!s->held.empty() && s->held.front().seq <= s->done_upto) s->held.pop_front();
  write_timestamps_locked(s->device, &s->stamps, s->done_upto);
}

TsError* marker_locked(TsStream* s, bool timed, MarkerRef* out) {
  if (!timed && s->tail && s->tail->upto == s->last_op) {
    *out = s->tail;
    return nullptr;
  }
  TsDevice* dev = s->device;
  MarkerRef m;
  TS_ZE_RETURN_IF_ERROR(new_marker(dev, timed, &m));
  // No wait events: the barrier runs after every earlier command.
  TS_ZE_CALL(dev, dev->fn->zeCommandListAppendBarrier(s->list, m->event(), 0, nullptr),
             "zeCommandListAppendBarrier(signal)");
  m->appended = true;
  m->upto = s->last_op;
  s->tail = m;
  s->progress.push_back(m);
  s->unmarked = 0;
  *out = std::move(m);
  return nullptr;
}

TsError* append_wait_locked(TsStream* s, const MarkerRef& m) {
  if (!m) return nullptr;
  TsDevice* dev = s->device;
  // Already signalled: nothing to wait for (and nothing to hold).
  if (dev->fn->zeEventQueryStatus(m->event()) == ZE_RESULT_SUCCESS) return nullptr;
  ze_event_handle_t ev = m->event();
  TS_ZE_CALL(dev, dev->fn->zeCommandListAppendWaitOnEvents(s->list, 1, &ev),
             "zeCommandListAppendWaitOnEvents");
  ++s->last_op;
  s->held.push_back(HeldWait{s->last_op, m});
  return nullptr;
}

TsError* prepare_op_locked(TsStream* s) {
  TsDevice* dev = s->device;
  if (!s->non_blocking) {
    if (s->is_default) {
      for (TsStream* o : dev->streams) {
        if (o->non_blocking || o->last_work <= o->seen_by_default) continue;
        poll_locked(o);
        if (o->done_upto < o->last_work) {
          MarkerRef m;
          TS_ZE_RETURN_IF_ERROR(marker_locked(o, false, &m));
          TS_ZE_RETURN_IF_ERROR(append_wait_locked(s, m));
        }
        o->seen_by_default = o->last_work;
      }
      for (RetiredStream& r : dev->retired) {
        if (r.non_blocking || r.seen_by_default) continue;
        TS_ZE_RETURN_IF_ERROR(append_wait_locked(s, r.done));
        r.seen_by_default = true;
      }
    } else {
      TsStream* d = dev->default_stream;
      if (d->last_work > s->default_seen) {
        poll_locked(d);
        if (d->done_upto < d->last_work) {
          MarkerRef m;
          TS_ZE_RETURN_IF_ERROR(marker_locked(d, false, &m));
          TS_ZE_RETURN_IF_ERROR(append_wait_locked(s, m));
        }
        s->default_seen = d->last_work;
      }
    }
  }
  if (!s->in_order && s->last_op > 0)
    TS_ZE_CALL(dev, dev->fn->zeCommandListAppendBarrier(s->list, nullptr, 0, nullptr),
               "zeCommandListAppendBarrier(order)");
  return nullptr;
}

TsError* op_marker_locked(TsStream* s, MarkerRef* out) {
  out->reset();
  if (s->unmarked + 1 < kProgressEvery) return nullptr;
  return new_marker(s->device, false, out);
}

void commit_op_locked(TsStream* s, MarkerRef marker) {
  ++s->last_op;
  s->last_work = s->last_op;
  if (marker) {
    marker->appended = true;
    marker->upto = s->last_op;
    s->tail = marker;
    s->progress.push_back(std::move(marker));
    s->unmarked = 0;
  } else {
    ++s->unmarked;
  }
  poll_locked(s);
}

void reap_retired_locked(TsDevice* dev) {
  auto& v = dev->retired;
  for (size_t i = 0; i < v.size();) {
    if (dev->fn->zeEventQueryStatus(v[i].done->event()) == ZE_RESULT_SUCCESS) {
      write_timestamps_locked(dev, &v[i].stamps, UINT64_MAX);
      dev->fn->zeCommandListDestroy(v[i].list);
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

TsError* wait_marker(const MarkerRef& m, const char* what) {
  if (!m) return nullptr;
  const TsDevice* dev = m->device;
  TS_ZE_CALL(dev, dev->fn->zeEventHostSynchronize(m->event(), UINT64_MAX),
             strprintf("zeEventHostSynchronize(%s)", what));
  return nullptr;
}

TsError* synchronize_stream(TsStream* s) {
  TsDevice* dev = s->device;
  MarkerRef m;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    TS_ZE_RETURN_IF_ERROR(refuse_in_capture_locked(s, "waiting for the stream from the host"));
    poll_locked(s);
    if (s->done_upto >= s->last_op) return nullptr;
    TS_ZE_RETURN_IF_ERROR(marker_locked(s, false, &m));
  }
  TS_ZE_RETURN_IF_ERROR(wait_marker(m, "Stream_Synchronize"));
  std::lock_guard<std::mutex> lk(dev->mu);
  s->done_upto = std::max(s->done_upto, m->upto);
  poll_locked(s);
  return nullptr;
}

TS_ZE_ENTRY(Stream_Create, TS_STREAM_CREATE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->device, "Stream_Create", "device");
  TsDevice* dev = args->device;
  if (args->flags & ~static_cast<uint32_t>(TS_STREAM_NON_BLOCKING))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Stream_Create: unknown flags 0x%x",
                  args->flags);
  TsStream* s = nullptr;
  TS_ZE_RETURN_IF_ERROR(create_stream(dev, false, (args->flags & TS_STREAM_NON_BLOCKING) != 0,
                                      args->priority, &s));
  std::lock_guard<std::mutex> lk(dev->mu);
  reap_retired_locked(dev);
  dev->streams.insert(s);
  args->stream = s;
  return nullptr;
}

TS_ZE_ENTRY(Stream_Destroy, TS_STREAM_DESTROY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_Destroy", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  if (s->is_default)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_Destroy: the default stream belongs to its device");
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s->capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_Destroy: the stream takes part in a graph capture; end "
                  "the capture (Stream_EndCapture on the stream that began it) first");
  poll_locked(s);
  if (s->done_upto >= s->last_op) {
    dev->fn->zeCommandListDestroy(s->list);
  } else {
    // Returns at once; the list is destroyed once its work is done.
    RetiredStream r;
    TS_ZE_RETURN_IF_ERROR(marker_locked(s, false, &r.done));
    r.list = s->list;
    r.held = std::move(s->held);
    r.stamps = std::move(s->stamps);  // written once `done` is seen
    r.non_blocking = s->non_blocking;
    r.seen_by_default = s->last_work <= s->seen_by_default;
    dev->retired.push_back(std::move(r));
  }
  dev->streams.erase(s);
  reap_retired_locked(dev);
  s->magic = kMagicDead;
  delete s;
  return nullptr;
}

TS_ZE_ENTRY(Stream_Synchronize, TS_STREAM_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_Synchronize", "stream");
  return synchronize_stream(args->stream);
}

TS_ZE_ENTRY(Stream_Query, TS_STREAM_QUERY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_Query", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s->capture) {
    args->idle = 0;
    return refuse_in_capture_locked(s, "Stream_Query");
  }
  poll_locked(s);
  if (s->done_upto >= s->last_op) {
    args->idle = 1;
    return nullptr;
  }
  // A marker covering everything (appended once, then only queried).
  MarkerRef m;
  TS_ZE_RETURN_IF_ERROR(marker_locked(s, false, &m));
  ze_result_t r = dev->fn->zeEventQueryStatus(m->event());
  if (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_NOT_READY)
    return dev_error(dev, r, "zeEventQueryStatus(Stream_Query)");
  poll_locked(s);
  args->idle = r == ZE_RESULT_SUCCESS ? 1 : 0;
  return nullptr;
}

TS_ZE_ENTRY(Stream_WaitEvent, TS_STREAM_WAITEVENT_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_WaitEvent", "stream");
  TS_ZE_CHECK_HANDLE(args->event, "Stream_WaitEvent", "event");
  TsStream* s = args->stream;
  TsEvent* ev = args->event;
  TsDevice* dev = s->device;
  if (ev->device->client != dev->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Stream_WaitEvent: the event belongs to another client");
  std::lock_guard<std::mutex> lk(dev->mu);
  MarkerRef m;
  {
    std::lock_guard<std::mutex> elk(ev->mu);
    if (ev->last_is_capture && ev->capture) return capture_wait_event_locked(s, ev);
    m = ev->record;
  }
  if (!m) return nullptr;  // never recorded: a no-op, also in a capture
  if (s->capture)
    // A graph cannot depend on work outside it: a replay would drop the edge.
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_WaitEvent: the stream is capturing a graph, but the "
                  "event was recorded outside the capture; a graph cannot depend on work "
                  "outside it: record the event inside the capture, or wait on it before "
                  "Stream_BeginCapture");
  // The event pools belong to the context, so a stream of any device of the
  // client may wait on any event.
  return append_wait_locked(s, m);
}

}  // namespace tessera::level_zero
