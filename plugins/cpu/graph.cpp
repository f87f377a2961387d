// Stream capture, graphs, and graph replay.
//
// Capture: each capturing stream has a frontier (its last node + the nodes
// it was told to wait for).  Work issued to it becomes a node depending on
// that frontier.  Waiting on an event recorded in a capture makes a stream
// join the capture.  Nodes are appended in issue order, so node order is a
// topological order and every captured stream's nodes form a chain (a lane).
//
// Replay: Instantiate maps each lane onto a hidden internal stream and turns
// cross-lane edges into (lane, position) pairs.  Launch, under ONE lock,
// queues every node on its lane with dependencies base[lane] + position, the
// first node of each lane after the launch stream's tail, and a join marker
// on the launch stream after every lane's last node.  Lanes are in order, so
// a second launch runs after the first.  Task objects come from one slab per
// launch.
#include <algorithm>

#include "internal.hpp"

namespace tessera::cpu {

struct CaptureNode {
  std::shared_ptr<Op> op;
  StreamState* stream = nullptr;
  std::vector<int64_t> deps;
};

struct CaptureSession {
  StreamState* origin = nullptr;
  bool open = true;
  std::vector<CaptureNode> nodes;
  plugin_support::CapturedRefs refs;  // objects the nodes use
  std::vector<std::shared_ptr<StreamState>> members;  // origin first, then joiners
};

}  // namespace tessera::cpu

struct TsGraph {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicGraph;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  struct Node {
    std::shared_ptr<tessera::cpu::Op> op;
    uint32_t lane;
    std::vector<int64_t> deps;
  };
  std::vector<Node> nodes;
  uint32_t num_lanes = 0;
  size_t num_edges = 0;
  tessera::plugin_support::CapturedRefs refs;  // buffers, executables used
};

struct TsGraphExec {
  static constexpr uint32_t kMagic = tessera::cpu::kMagicGraphExec;
  uint32_t magic = kMagic;
  TsDevice* device = nullptr;
  struct Node {
    tessera::cpu::Op* op;
    uint32_t lane;
    uint32_t items;
    bool manual;
    bool first_in_lane;
    uint32_t dep_begin, dep_count;  // into deps
  };
  struct LaneDep {
    uint32_t lane;
    uint64_t offset;  // depends on lane value base + offset
  };
  std::vector<std::shared_ptr<tessera::cpu::Op>> ops;  // keeps ops alive
  std::vector<Node> nodes;
  std::vector<LaneDep> deps;
  std::vector<std::shared_ptr<tessera::cpu::StreamState>> lanes;
  std::vector<uint64_t> lane_len;
  std::vector<uint64_t> base;  // scratch for Launch, guarded by the scheduler mutex
  tessera::plugin_support::CapturedRefs refs;  // checked before each launch
};

namespace tessera::cpu {
namespace {

// One launch's tasks; freed when the last of them completes.
struct LaunchSlab {
  explicit LaunchSlab(size_t n) : tasks(new Task[n]), remaining(n) {}
  std::unique_ptr<Task[]> tasks;
  std::atomic<size_t> remaining;
  static void release(Task* t) {
    auto* slab = static_cast<LaunchSlab*>(t->owner);
    if (slab->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) delete slab;
  }
};

void end_session_locked(CaptureSession& s) {
  for (auto& m : s.members) {
    m->capture.reset();
    m->capture_tail = -1;
    m->capture_waits.clear();
  }
  s.open = false;
}

}  // namespace

bool capturing_locked(const StreamState& s) { return s.capture != nullptr; }
void abandon_capture_locked(StreamState& s) {
  // end_session_locked resets every member's pointer to the session: copy it.
  if (std::shared_ptr<CaptureSession> c = s.capture) end_session_locked(*c);
}
bool capture_session_open_locked(const CaptureSession& s) { return s.open; }

namespace {
std::string describe_buffer(const TsBuffer* b) {
  const char* kind = b->kind == TS_BUFFER_HOST_PINNED ? "host-pinned"
                     : b->kind == TS_BUFFER_MANAGED   ? "managed"
                                                      : "device";
  return strprintf("a %s %s buffer", human_size(b->size).c_str(), kind);
}

void note_uses_locked(CaptureSession& cs, const OpUses& u) {
  const long long node = static_cast<long long>(cs.nodes.size()) - 1;
  if (u.kernel) {
    const char* kn = u.kernel->name.c_str();
    cs.refs.add(u.kernel->executable->life,
                strprintf("the executable of kernel '%s' (%s) (node %lld)", kn,
                          u.kernel->executable->path.c_str(), node));
    for (size_t i = 0, b = 0; i < u.num_args; ++i)
      if (u.args[i].kind == TS_KERNEL_ARG_BUFFER)
        cs.refs.add(u.args[i].buffer->life,
                    strprintf("buffer argument %zu (%s) of the launch of kernel '%s' (node %lld)",
                              b++, describe_buffer(u.args[i].buffer).c_str(), kn, node));
  }
  for (const TsBuffer* b : u.buffers)
    if (b)
      cs.refs.add(b->life, strprintf("%s of a %s (node %lld)", describe_buffer(b).c_str(),
                                     u.op, node));
  // Host memory from Host_Allocate or Host_Register: replaying a copy of it
  // after Host_Free / Host_Unregister would touch freed memory.  (Other
  // host memory is the caller's to keep, as CUDA's pageable memory is.)
  if (u.host) {
    TsClient* c = cs.origin->device->client;
    // The host pointer of a HOST_PINNED buffer (the core takes it as pinned
    // host memory): the buffer's life.  The registries are guarded by the
    // scheduler mutex, held here.
    const uint8_t* at = static_cast<const uint8_t*>(u.host);
    for (TsDevice* d : c->device_list)
      for (TsBuffer* b : d->live.buffers)
        if (b->kind == TS_BUFFER_HOST_PINNED && at >= b->data && at < b->data + b->size)
          cs.refs.add(b->life, strprintf("%s (the %s of a copy through its host pointer, node %lld)",
                                         describe_buffer(b).c_str(),
                                         u.host_is_source ? "source" : "destination", node));
    std::lock_guard<std::mutex> lk(c->host_mu);  // after the scheduler's: never the other way
    for (auto* ranges : {&c->host_allocs, &c->host_registered}) {
      auto it = ranges->upper_bound(const_cast<void*>(u.host));
      if (it == ranges->begin()) continue;
      --it;
      const uint8_t* start = static_cast<const uint8_t*>(it->first);
      if (static_cast<const uint8_t*>(u.host) >= start + it->second.size) continue;
      cs.refs.add(it->second.life,
                  strprintf("the %s host memory at %p (the %s of a copy, node %lld)",
                            ranges == &c->host_allocs ? "pinned" : "registered", u.host,
                            u.host_is_source ? "source" : "destination", node));
    }
  }
}
}  // namespace

void capture_node_locked(StreamState& s, std::shared_ptr<Op> op, const OpUses* uses) {
  CaptureSession& cs = *s.capture;
  CaptureNode n;
  n.op = std::move(op);
  n.stream = &s;
  n.deps = std::move(s.capture_waits);
  s.capture_waits.clear();
  if (s.capture_tail >= 0) n.deps.push_back(s.capture_tail);
  std::sort(n.deps.begin(), n.deps.end());
  n.deps.erase(std::unique(n.deps.begin(), n.deps.end()), n.deps.end());
  cs.nodes.push_back(std::move(n));
  s.capture_tail = static_cast<int64_t>(cs.nodes.size()) - 1;
  if (uses) note_uses_locked(cs, *uses);
}

void capture_record_event_locked(StreamState& s, TsEvent* ev) {
  ev->capture = s.capture;
  ev->capture_nodes = s.capture_waits;
  if (s.capture_tail >= 0) ev->capture_nodes.push_back(s.capture_tail);
}

TsError* capture_wait_event_locked(TsStream* stream, const std::shared_ptr<CaptureSession>& session,
                                   const std::vector<int64_t>& nodes) {
  auto& s = stream->state;
  if (s->capture && s->capture != session)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_WaitEvent: stream %p is capturing another graph than the one "
                  "the event was recorded in",
                  static_cast<void*>(stream));
  if (!s->capture) {
    if (s->is_default)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cpu: Stream_WaitEvent: the default stream cannot join a capture: fork "
                    "work onto a stream created with Stream_Create");
    // A graph replays on the device it was captured on (its lanes are that
    // device's streams): work of another device's stream inside it would
    // run where that device's synchronize does not wait for it.
    if (stream->device != session->origin->device)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cpu: Stream_WaitEvent: a stream of device %u cannot join a capture begun on "
                    "device %u: a graph runs on one device; capture each device's work in a graph "
                    "of its own",
                    stream->device->ordinal, session->origin->device->ordinal);
    s->capture = session;  // join
    s->capture_tail = -1;
    s->capture_waits.clear();
    session->members.push_back(s);
  }
  s->capture_waits.insert(s->capture_waits.end(), nodes.begin(), nodes.end());
  return nullptr;
}

TS_CPU_ENTRY(Stream_BeginCapture, TS_STREAM_BEGINCAPTURE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->stream, "Stream_BeginCapture", "stream");
  TsStream* s = args->stream;
  if (s->state->is_default)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_BeginCapture: stream %p is the default stream of device %u, "
                  "which cannot be captured: capture a stream created with Stream_Create",
                  static_cast<void*>(s), s->device->ordinal);
  auto session = std::make_shared<CaptureSession>();
  std::lock_guard<std::mutex> lk(s->device->sched().mutex());
  if (s->state->capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_BeginCapture: stream %p is already capturing",
                  static_cast<void*>(s));
  session->origin = s->state.get();
  session->members.push_back(s->state);
  s->state->capture = session;
  s->state->capture_tail = -1;
  s->state->capture_waits.clear();
  return nullptr;
}

TS_CPU_ENTRY(Stream_EndCapture, TS_STREAM_ENDCAPTURE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->stream, "Stream_EndCapture", "stream");
  TsStream* s = args->stream;
  auto graph = std::make_unique<TsGraph>();
  std::lock_guard<std::mutex> lk(s->device->sched().mutex());
  auto session = s->state->capture;
  if (!session)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_EndCapture: stream %p is not capturing: call "
                  "Stream_BeginCapture first",
                  static_cast<void*>(s));
  if (session->origin != s->state.get())
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_EndCapture: stream %p joined a capture that another stream "
                  "began: call Stream_EndCapture on the origin stream",
                  static_cast<void*>(s));
  // Every node the origin's last node depends on, transitively.
  const auto& nodes = session->nodes;
  std::vector<char> ancestor(nodes.size(), 0);
  std::vector<int64_t> stack;
  if (s->state->capture_tail >= 0) stack.push_back(s->state->capture_tail);
  for (int64_t w : s->state->capture_waits) stack.push_back(w);
  while (!stack.empty()) {
    const int64_t n = stack.back();
    stack.pop_back();
    if (ancestor[n]) continue;
    ancestor[n] = 1;
    for (int64_t d : nodes[n].deps) stack.push_back(d);
  }
  size_t unjoined = 0;
  for (const auto& m : session->members)
    if (m.get() != session->origin && m->capture_tail >= 0 && !ancestor[m->capture_tail])
      ++unjoined;
  if (unjoined) {
    end_session_locked(*session);
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: Stream_EndCapture: stream capture ended with unjoined streams (%zu): "
                  "record an event on each forked stream and wait on it from the origin stream "
                  "before Stream_EndCapture",
                  unjoined);
  }
  graph->device = s->device;
  graph->num_lanes = static_cast<uint32_t>(session->members.size());
  graph->nodes.reserve(nodes.size());
  for (const auto& n : nodes) {
    uint32_t lane = 0;
    while (session->members[lane].get() != n.stream) ++lane;
    graph->nodes.push_back(TsGraph::Node{n.op, lane, n.deps});
    graph->num_edges += n.deps.size();
  }
  graph->refs = session->refs;
  end_session_locked(*session);
  s->device->live.graphs.insert(graph.get());
  args->graph = graph.release();
  return nullptr;
}

void destroy_graph(TsGraph* g) {
  {
    std::lock_guard<std::mutex> lk(g->device->sched().mutex());
    g->device->live.graphs.erase(g);
  }
  g->magic = kMagicDead;
  delete g;  // execs instantiated from it hold its ops
}

TS_CPU_ENTRY(Graph_Destroy, TS_GRAPH_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->graph, "Graph_Destroy", "graph");
  destroy_graph(args->graph);
  return nullptr;
}

TS_CPU_ENTRY(Graph_GetInfo, TS_GRAPH_GETINFO_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->graph, "Graph_GetInfo", "graph");
  args->num_nodes = args->graph->nodes.size();
  args->num_edges = args->graph->num_edges;
  return nullptr;
}

TS_CPU_ENTRY(Graph_Instantiate, TS_GRAPH_INSTANTIATE_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->graph, "Graph_Instantiate", "graph");
  const TsGraph& g = *args->graph;
  auto ex = std::make_unique<TsGraphExec>();
  ex->device = g.device;
  ex->refs = g.refs;
  ex->lane_len.assign(g.num_lanes, 0);
  ex->base.assign(g.num_lanes, 0);
  ex->nodes.reserve(g.nodes.size());
  ex->ops.reserve(g.nodes.size());
  std::vector<uint64_t> pos(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    TsGraphExec::Node en{};
    en.op = n.op.get();
    en.lane = n.lane;
    en.items = n.op->work_items();
    en.manual = n.op->manual_completion();
    en.first_in_lane = ex->lane_len[n.lane] == 0;
    pos[i] = ++ex->lane_len[n.lane];  // value the lane reaches when i completes
    en.dep_begin = static_cast<uint32_t>(ex->deps.size());
    for (int64_t d : n.deps) {
      const uint32_t dl = g.nodes[d].lane;
      if (dl == n.lane) continue;  // implied by lane order
      ex->deps.push_back({dl, pos[d]});
    }
    en.dep_count = static_cast<uint32_t>(ex->deps.size()) - en.dep_begin;
    ex->nodes.push_back(en);
    ex->ops.push_back(n.op);
  }
  for (uint32_t l = 0; l < g.num_lanes; ++l) {
    auto st = std::make_shared<StreamState>();
    st->device = g.device;
    st->blocking = false;
    st->hidden = true;
    ex->lanes.push_back(std::move(st));
  }
  {
    std::lock_guard<std::mutex> lk(g.device->sched().mutex());
    for (auto& l : ex->lanes) g.device->streams.push_back(l);
    g.device->live.graph_execs.insert(ex.get());
  }
  args->exec = ex.release();
  return nullptr;
}

void destroy_graph_exec(TsGraphExec* ex) {
  Scheduler& sched = ex->device->sched();
  {
    std::lock_guard<std::mutex> lk(sched.mutex());
    ex->device->live.graph_execs.erase(ex);
  }
  // Its launches' tasks point at its ops: let them finish first.
  for (auto& l : ex->lanes) sched.wait(*l, l->submitted.load(std::memory_order_acquire));
  {
    std::lock_guard<std::mutex> lk(sched.mutex());
    for (auto& l : ex->lanes) l->destroyed = true;
  }
  ex->magic = kMagicDead;
  delete ex;
}

TS_CPU_ENTRY(GraphExec_Destroy, TS_GRAPHEXEC_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->exec, "GraphExec_Destroy", "exec");
  destroy_graph_exec(args->exec);
  return nullptr;
}

TS_CPU_ENTRY(GraphExec_Launch, TS_GRAPHEXEC_LAUNCH_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->exec, "GraphExec_Launch", "exec");
  TS_CPU_CHECK_HANDLE(args->stream, "GraphExec_Launch", "stream");
  TsGraphExec* ex = args->exec;
  TsStream* s = args->stream;
  if (s->device->client != ex->device->client)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: GraphExec_Launch: the stream belongs to another client than the graph");
  // The graph's nodes run on its device's scheduler and lanes: a stream of
  // another device would order them with nothing it knows.
  if (s->device != ex->device)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: GraphExec_Launch: the graph was captured on device %u, the stream is on device %u",
                  ex->device->ordinal, s->device->ordinal);
  // A node whose buffer or kernel is gone would touch freed memory.
  if (TsError* e = ex->refs.check("cpu")) return e;
  const size_t n = ex->nodes.size();
  auto* slab = new LaunchSlab(n + 1);
  Scheduler& sched = ex->device->sched();
  std::lock_guard<std::mutex> lk(sched.mutex());
  const auto& ls = s->state;
  if (ls->capture) {
    delete slab;
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: GraphExec_Launch: stream %p is capturing; launching a graph inside a "
                  "capture is not supported by the CPU plugin",
                  static_cast<void*>(s));
  }
  // What the launch as a whole must wait for: the launch stream's tail, its
  // default-stream dependencies and its pending event waits.
  DepList entry;
  implicit_deps_locked(s->device, ls.get(), entry);
  entry.append(ls->pending_waits);
  ls->pending_waits.clear();
  const uint64_t tail = ls->submitted.load(std::memory_order_relaxed);
  if (tail > ls->completed.load(std::memory_order_acquire)) entry.add(ls, tail);

  for (size_t l = 0; l < ex->lanes.size(); ++l) {
    ex->base[l] = ex->lanes[l]->submitted.load(std::memory_order_relaxed);
    ex->lanes[l]->weight = ls->weight;
    ex->lanes[l]->priority = ls->priority;
  }
  Task* tasks = slab->tasks.get();
  for (size_t i = 0; i < n; ++i) {
    const TsGraphExec::Node& en = ex->nodes[i];
    Task* t = &tasks[i];
    t->op = en.op;
    t->items = en.items;
    t->manual = en.manual;
    t->release = &LaunchSlab::release;
    t->owner = slab;
    if (en.first_in_lane) t->deps.append(entry);
    for (uint32_t d = 0; d < en.dep_count; ++d) {
      const auto& ld = ex->deps[en.dep_begin + d];
      t->deps.add(ex->lanes[ld.lane], ex->base[ld.lane] + ld.offset);
    }
    sched.submit_locked(ex->lanes[en.lane], t);
  }
  Task* join = &tasks[n];
  join->op = NopOp::instance();
  join->release = &LaunchSlab::release;
  join->owner = slab;
  join->deps.append(entry);
  for (size_t l = 0; l < ex->lanes.size(); ++l)
    if (ex->lane_len[l]) join->deps.add(ex->lanes[l], ex->base[l] + ex->lane_len[l]);
  sched.submit_locked(ls, join);
  return nullptr;
}

}  // namespace tessera::cpu
