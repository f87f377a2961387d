// Graphs: Stream_BeginCapture records a stream's commands into one regular
// command list (zeCommandListCreate), Stream_EndCapture closes it, and
// GraphExec_Launch replays it on the graph's own command queue
// (zeCommandQueueExecuteCommandLists), ordered with the launching stream by
// two events of the graph's own.
//
// RECORDING.  Streams that join a capture (by waiting on an event recorded
// in it) record into the same list, in issue order, with a barrier between
// commands.  Issue order respects every captured dependency, so one serial
// list is a valid schedule (the vulkan plugin's single command buffer does
// the same); the event edges are counted for Graph_GetInfo and checked so
// that every stream that joined was joined back.  The list is
//     wait(start), reset(start), cmd, barrier, cmd, ..., barrier -> end
// Kernel arguments, group sizes and fill patterns are taken when a command
// is appended (Level Zero semantics), so later launches and fills on the
// same kernel or value do not change the graph.  Event records inside a
// capture append nothing: they mark a node for the streams that join.
//
// REPLAY.  A closed list takes no new waits, so its order with the stream
// goes through the graph's events:
//     stream: [wait for the previous launch's marker] signal(start)
//     queue:  the list (waits for start, resets it, runs, signals end)
//     stream: wait(end), reset(end), barrier -> the launch's marker
// The marker (last_launch) covers everything the launch appended to the
// stream: the next launch, from any stream, waits for it before signalling
// start, and the graph's destructor waits for it before destroying events.
// Level Zero forbids submitting a command list that the device still
// references, so a launch first waits on the host for the previous replay
// of the same graph (its fence).  Replays of one graph are serialized on
// the host that way.  Each graph has its own queue (taken in turn from the
// compute group's queues), so a replay waiting for its stream does not hold
// up another graph's.
//
// LIFETIME.  A TsGraph and its TsGraphExecs share one GraphData; the last
// of them destroyed waits for the last replay (the launch's marker, and the
// fence) before it destroys the list, fence, queue and events.  A launch
// that failed half way and could not append its marker leaves the events
// possibly referenced by the stream: they are then leaked, not destroyed.  A graph keeps no buffer, executable or pinned host range alive:
// a launch checks them (CapturedRefs) and refuses with FAILED_PRECONDITION
// naming the one destroyed.
//
// LOCKING.  device->mu guards the capture bookkeeping (TsStream::capture,
// CaptureSession, the patterns) and GraphData::last_launch.
// GraphData::launch_mu serializes the launches of one graph and guards
// `submitted` and `broken`; it is taken before device->mu and is the only
// lock held across the host wait on the fence.
//
// NOT RUN HERE: no Level Zero driver is reachable from the build machines
// (docs/level_zero.md); the conformance area "graphs" checks this on a
// device.
#include <algorithm>
#include <deque>
#include <vector>

#include "internal.hpp"

namespace tessera::level_zero {

struct GraphData {
  TsDevice* dev = nullptr;
  const ZeFns* fn = nullptr;
  ze_command_queue_handle_t queue = nullptr;  // the graph's; replays run here
  ze_command_list_handle_t list = nullptr;    // regular; closed at EndCapture
  ze_event_pool_handle_t pool = nullptr;      // holds start and end
  ze_event_handle_t start = nullptr, end = nullptr;
  ze_fence_handle_t fence = nullptr;  // on `queue`; made at EndCapture
  size_t nodes = 0, edges = 0;
  // The buffers, executables and pinned host ranges the commands name.
  plugin_support::CapturedRefs refs;
  // Bytes the device reads at each replay (fill patterns); a deque keeps
  // their addresses stable.  device->mu while capturing, then immutable.
  std::deque<std::vector<uint8_t>> kept;

  std::mutex launch_mu;
  bool submitted = false;     // launch_mu: a replay was submitted since the fence reset
  std::string broken;         // launch_mu: why later launches are refused
  bool leak_events = false;   // launch_mu: a stream may still use them, unknown till when
  MarkerRef last_launch;      // device->mu: covers all the last launch appended

  ~GraphData() {
    if (!fn) return;
    // No lock is held here (see destroy_graph_data): waiting is allowed.
    if (last_launch) {
      if (TsError* e = wait_marker(last_launch, "the last replay of a destroyed graph"))
        destroy_error(e);
      last_launch.reset();
    }
    if (fence) {
      if (submitted) fn->zeFenceHostSynchronize(fence, UINT64_MAX);
      fn->zeFenceDestroy(fence);
    }
    if (list) fn->zeCommandListDestroy(list);
    if (queue) fn->zeCommandQueueDestroy(queue);
    if (leak_events) return;  // the context's destruction frees them
    if (end) fn->zeEventDestroy(end);
    if (start) fn->zeEventDestroy(start);
    if (pool) fn->zeEventPoolDestroy(pool);
  }
};

struct CaptureSession {
  explicit CaptureSession(TsStream* origin) : joins(origin) {}
  std::shared_ptr<GraphData> graph;  // moved out by EndCapture
  // Who joined, the nodes and edges, and who was joined back
  // (plugins/common/capture_joins.hpp).
  plugin_support::CaptureJoins<TsStream> joins;
  bool open = true;
  std::string failed;  // the first append that failed; EndCapture reports it
};

TsError* refuse_in_capture_locked(const TsStream* s, const char* what) {
  if (!s->capture) return nullptr;
  return errorf(TS_ERROR_FAILED_PRECONDITION,
                "level_zero: %s cannot be recorded into a graph: the stream takes part in a "
                "capture; end the capture (Stream_EndCapture) first, or issue it on a stream "
                "that is not capturing",
                what);
}

TsError* capture_begin_node_locked(TsStream* s, ze_command_list_handle_t* list) {
  CaptureSession& c = *s->capture;
  if (!c.failed.empty())
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: the graph capture this stream takes part in failed earlier (%s); "
                  "end it with Stream_EndCapture and capture again",
                  c.failed.c_str());
  GraphData& g = *c.graph;
  if (c.joins.nodes() > 0) {
    // After every command recorded before it, whichever stream issued it.
    const ze_result_t r = g.fn->zeCommandListAppendBarrier(g.list, nullptr, 0, nullptr);
    if (r != ZE_RESULT_SUCCESS) {
      TsError* e = dev_error(g.dev, r, "zeCommandListAppendBarrier(captured)");
      capture_fail_locked(s, e);
      return e;
    }
  }
  c.joins.AddNode(s);
  *list = g.list;
  return nullptr;
}

void capture_fail_locked(TsStream* s, const TsError* e) {
  CaptureSession& c = *s->capture;
  if (c.failed.empty()) c.failed = e->message;
}

void capture_note_locked(TsStream* s, const std::weak_ptr<const void>& token,
                         const std::string& what) {
  CaptureSession& c = *s->capture;
  if (c.graph) c.graph->refs.add(token, what);
}

void capture_record_event_locked(TsStream* s, TsEvent* ev) {
  std::lock_guard<std::mutex> elk(ev->mu);
  ev->capture = s->capture;
  ev->capture_point = s->capture->joins.Record(s);
  ev->last_is_capture = true;
}

TsError* capture_wait_event_locked(TsStream* s, TsEvent* ev) {
  // The capture is of the event's device (Event_Record checks it); its
  // bookkeeping is guarded by that device's lock, which is the one held
  // only when the devices are the same.
  if (ev->device != s->device)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_WaitEvent: the event was last recorded inside a graph "
                  "capture on device %u, and the stream is on device %u; a capture records "
                  "the streams of one device",
                  ev->device->ordinal, s->device->ordinal);
  std::shared_ptr<CaptureSession> c = ev->capture;
  if (!c->open)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_WaitEvent: the event was last recorded inside a graph "
                  "capture that has ended; record it again outside the capture");
  if (s->capture && s->capture != c)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_WaitEvent: the stream is capturing another graph than "
                  "the one the event was recorded in");
  if (!s->capture) {  // s joins the capture
    if (s->is_default)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "level_zero: Stream_WaitEvent: the default stream cannot join a capture: "
                    "fork work onto a stream created with Stream_Create");
    s->capture = c;
    c->joins.Join(s);
  }
  c->joins.Wait(s, ev->capture_point);
  return nullptr;
}

void abandon_capture_locked(TsStream* s) {
  std::shared_ptr<CaptureSession> c = s->capture;
  if (!c) return;
  c->open = false;  // events recorded in it can no longer be waited on
  c->graph.reset();  // never launched: destroyed without waiting
  for (size_t k = 0; k < c->joins.num_members(); ++k) c->joins.member(k)->capture.reset();
}

const void* capture_keep_locked(TsStream* s, const void* bytes, size_t size) {
  GraphData& g = *s->capture->graph;
  const auto* p = static_cast<const uint8_t*>(bytes);
  g.kept.emplace_back(p, p + size);
  return g.kept.back().data();
}

namespace {

// Drops one owner of `data` with no lock held: the last one waits for the
// graph's last replay.
void destroy_graph_data(std::shared_ptr<GraphData> data) { data.reset(); }

// The graph's queue, list and events; the list begins by waiting for
// `start`.
TsError* make_graph_data(TsDevice* dev, std::shared_ptr<GraphData>* out) {
  const ZeFns& fn = *dev->fn;
  ze_context_handle_t ctx = dev->client->context;
  auto g = std::make_shared<GraphData>();
  g->dev = dev;
  g->fn = dev->fn;
  ze_command_queue_desc_t qd{};
  qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qd.ordinal = dev->queue_group;  // the list's group, as Level Zero requires
  qd.index = dev->next_queue.fetch_add(1, std::memory_order_relaxed) % dev->queue_count;
  qd.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  qd.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  TS_ZE_CALL(dev, fn.zeCommandQueueCreate(ctx, dev->ze, &qd, &g->queue),
             strprintf("zeCommandQueueCreate(graph, group %u index %u)", qd.ordinal, qd.index));
  ze_event_pool_desc_t pd{};
  pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  pd.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  pd.count = 2;
  TS_ZE_CALL(dev, fn.zeEventPoolCreate(ctx, &pd, 1, &dev->ze, &g->pool),
             "zeEventPoolCreate(the graph's start and end events)");
  for (uint32_t i = 0; i < 2; ++i) {
    ze_event_desc_t ed{};
    ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    ed.index = i;
    ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    TS_ZE_CALL(dev, fn.zeEventCreate(g->pool, &ed, i == 0 ? &g->start : &g->end),
               "zeEventCreate(graph)");
  }
  ze_command_list_desc_t ld{};
  ld.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
  ld.commandQueueGroupOrdinal = dev->queue_group;  // the graph queue's group
  TS_ZE_CALL(dev, fn.zeCommandListCreate(ctx, dev->ze, &ld, &g->list), "zeCommandListCreate(graph)");
  TS_ZE_CALL(dev, fn.zeCommandListAppendWaitOnEvents(g->list, 1, &g->start),
             "zeCommandListAppendWaitOnEvents(graph start)");
  TS_ZE_CALL(dev, fn.zeCommandListAppendEventReset(g->list, g->start),
             "zeCommandListAppendEventReset(graph start)");
  *out = std::move(g);
  return nullptr;
}

}  // namespace

TS_ZE_ENTRY(Stream_BeginCapture, TS_STREAM_BEGINCAPTURE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_BeginCapture", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  // The default stream orders every blocking stream and the synchronous
  // copies: captured, they would all stop (as the other plugins refuse).
  if (s->is_default)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_BeginCapture: the default stream cannot be captured: "
                  "capture a stream created with Stream_Create");
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s->capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_BeginCapture: the stream already takes part in a capture");
  std::shared_ptr<GraphData> g;
  TS_ZE_RETURN_IF_ERROR(make_graph_data(dev, &g));
  auto c = std::make_shared<CaptureSession>(s);
  c->graph = std::move(g);
  s->capture = std::move(c);
  return nullptr;
}

TS_ZE_ENTRY(Stream_EndCapture, TS_STREAM_ENDCAPTURE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_EndCapture", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  const ZeFns& fn = *dev->fn;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (!s->capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_EndCapture: the stream is not capturing");
  std::shared_ptr<CaptureSession> c = s->capture;
  if (c->joins.origin() != s)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_EndCapture: the stream joined a capture begun on another "
                  "stream; end it there");
  // The capture is over either way.  The graph data was never launched, so
  // dropping it on an error path destroys it without waiting.
  c->open = false;
  const size_t unjoined = c->joins.FirstUnjoined();
  for (size_t k = 0; k < c->joins.num_members(); ++k) c->joins.member(k)->capture.reset();
  std::shared_ptr<GraphData> g = std::move(c->graph);
  if (unjoined)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_EndCapture: a stream that joined the capture (member %zu; "
                  "the origin is member 0) was not joined back: the origin stream must wait on "
                  "an event recorded after that stream's last captured work; no graph was "
                  "produced",
                  unjoined);
  if (!c->failed.empty())
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: Stream_EndCapture: a command of the capture failed to record "
                  "(%s); no graph was produced",
                  c->failed.c_str());
  TS_ZE_CALL(dev, fn.zeCommandListAppendBarrier(g->list, g->end, 0, nullptr),
             "zeCommandListAppendBarrier(graph end)");
  TS_ZE_CALL(dev, fn.zeCommandListClose(g->list), "zeCommandListClose(graph)");
  ze_fence_desc_t fd{};
  fd.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
  TS_ZE_CALL(dev, fn.zeFenceCreate(g->queue, &fd, &g->fence), "zeFenceCreate(graph)");
  g->nodes = static_cast<size_t>(c->joins.nodes());
  g->edges = c->joins.edges();
  auto* graph = new TsGraph;
  graph->device = dev;
  graph->data = std::move(g);
  dev->live_graphs.add(graph);
  args->graph = graph;
  return nullptr;
}

TS_ZE_ENTRY(Graph_Destroy, TS_GRAPH_DESTROY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->graph, "Graph_Destroy", "graph");
  TsGraph* g = args->graph;
  g->device->live_graphs.remove(g);
  std::shared_ptr<GraphData> data = std::move(g->data);
  g->magic = kMagicDead;
  delete g;
  destroy_graph_data(std::move(data));  // execs may still hold it
  return nullptr;
}

TS_ZE_ENTRY(Graph_GetInfo, TS_GRAPH_GETINFO_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->graph, "Graph_GetInfo", "graph");
  args->num_nodes = args->graph->data->nodes;
  args->num_edges = args->graph->data->edges;
  return nullptr;
}

TS_ZE_ENTRY(Graph_Instantiate, TS_GRAPH_INSTANTIATE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->graph, "Graph_Instantiate", "graph");
  auto* exec = new TsGraphExec;
  exec->device = args->graph->device;
  exec->data = args->graph->data;  // immutable once captured
  exec->device->live_graph_execs.add(exec);
  args->exec = exec;
  return nullptr;
}

TS_ZE_ENTRY(GraphExec_Destroy, TS_GRAPHEXEC_DESTROY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->exec, "GraphExec_Destroy", "exec");
  TsGraphExec* x = args->exec;
  x->device->live_graph_execs.remove(x);
  std::shared_ptr<GraphData> data = std::move(x->data);
  x->magic = kMagicDead;
  delete x;
  destroy_graph_data(std::move(data));  // may wait for its last replay
  return nullptr;
}

TS_ZE_ENTRY(GraphExec_Launch, TS_GRAPHEXEC_LAUNCH_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->exec, "GraphExec_Launch", "exec");
  TS_ZE_CHECK_HANDLE(args->stream, "GraphExec_Launch", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  if (args->exec->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: GraphExec_Launch: the graph was captured on device %u and the "
                  "stream is on device %u; launch it on a stream of its device",
                  args->exec->device->ordinal, dev->ordinal);
  std::shared_ptr<GraphData> keep = args->exec->data;
  GraphData& g = *keep;
  const ZeFns& fn = *dev->fn;
  TS_ZE_RETURN_IF_ERROR(g.refs.check("level_zero"));
  std::lock_guard<std::mutex> llk(g.launch_mu);
  if (!g.broken.empty())
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "level_zero: GraphExec_Launch: an earlier launch of this graph failed half way "
                  "(%s), which leaves its events in an unknown state; capture it again",
                  g.broken.c_str());
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    TS_ZE_RETURN_IF_ERROR(refuse_in_capture_locked(s, "GraphExec_Launch (a graph launched into a capture)"));
  }
  if (g.submitted) {
    // Level Zero forbids submitting a command list the device still
    // references: the previous replay must be over (docs/level_zero.md).
    TS_ZE_CALL(dev, fn.zeFenceHostSynchronize(g.fence, UINT64_MAX),
               "zeFenceHostSynchronize(the graph's previous replay)");
    TS_ZE_CALL(dev, fn.zeFenceReset(g.fence), "zeFenceReset(graph)");
    g.submitted = false;
  }
  std::lock_guard<std::mutex> lk(dev->mu);
  // Checked again: a capture may have begun while the host waited.
  TS_ZE_RETURN_IF_ERROR(refuse_in_capture_locked(s, "GraphExec_Launch (a graph launched into a capture)"));
  TS_ZE_RETURN_IF_ERROR(prepare_op_locked(s));
  // The previous launch's marker: the next signal of `start` comes after
  // its reset of `end`, whichever stream it was on.
  TS_ZE_RETURN_IF_ERROR(append_wait_locked(s, g.last_launch));
  // Taken before anything refers to the graph's events, so that once
  // something does, only appends can fail.
  MarkerRef done;
  TS_ZE_RETURN_IF_ERROR(new_marker(dev, false, &done));
  TS_ZE_CALL(dev, fn.zeCommandListAppendSignalEvent(s->list, g.start),
             "zeCommandListAppendSignalEvent(graph start)");
  // Ends the launch: the marker after everything it appended, or, when
  // even that cannot be appended, a graph no one may launch or free again.
  auto finish = [&](TsError* e) -> TsError* {
    const ze_result_t r = fn.zeCommandListAppendBarrier(s->list, done->event(), 0, nullptr);
    if (r != ZE_RESULT_SUCCESS) {
      commit_op_locked(s, nullptr);
      TsError* be = dev_error(dev, r, "zeCommandListAppendBarrier(graph launch marker)");
      if (g.broken.empty()) g.broken = be->message;
      g.leak_events = true;
      if (!e) return be;
      destroy_error(be);
      return e;
    }
    commit_op_locked(s, done);
    g.last_launch = std::move(done);
    return e;
  };
  ze_result_t r = fn.zeCommandQueueExecuteCommandLists(g.queue, 1, &g.list, g.fence);
  if (r != ZE_RESULT_SUCCESS) {
    TsError* e = dev_error(dev, r, "zeCommandQueueExecuteCommandLists(graph)");
    // Take the start signal back, or the next replay would begin early.
    if (fn.zeCommandListAppendEventReset(s->list, g.start) != ZE_RESULT_SUCCESS)
      g.broken = e->message;
    return finish(e);
  }
  g.submitted = true;
  ze_event_handle_t end = g.end;
  r = fn.zeCommandListAppendWaitOnEvents(s->list, 1, &end);
  if (r == ZE_RESULT_SUCCESS) r = fn.zeCommandListAppendEventReset(s->list, g.end);
  if (r != ZE_RESULT_SUCCESS) {
    // The replay runs, but the stream may not be ordered after it and
    // `end` may stay signalled: no later launch can be trusted.
    TsError* e = dev_error(dev, r, "zeCommandListAppendWaitOnEvents/EventReset(graph end)");
    g.broken = e->message;
    return finish(e);
  }
  return finish(nullptr);
}

}  // namespace tessera::level_zero
