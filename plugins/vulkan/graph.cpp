// Graphs: stream capture records operations into one reusable secondary
// command buffer (SIMULTANEOUS_USE); a launch executes it inside the
// stream's open batch with vkCmdExecuteCommands, so replays batch too.
//
// Streams that join a capture (by waiting on an event recorded in it)
// record into the same command buffer in issue order.  Issue order respects
// every captured dependency, so one linear command buffer with a barrier
// between operations is a valid schedule; the event edges are counted for
// Graph_GetInfo.  (lavapipe has one queue, so parallel branches would not
// run concurrently anyway.)
#include <algorithm>

#include "internal.hpp"

namespace tessera::vk {

// The recorded commands; shared by the graph, its execs and the batches
// that replay it.  Owns its command pool, so it can die on any thread.
struct GraphData {
  TsDevice* dev = nullptr;
  VkCommandPool pool = VK_NULL_HANDLE;
  CommandList cl;
  size_t nodes = 0;
  size_t edges = 0;
  // The buffers, executables and pinned host ranges the commands name; a
  // launch after one of them is gone would submit destroyed VkBuffers.
  plugin_support::CapturedRefs refs;
  ~GraphData() {
    if (!dev) return;
    for (VkDescriptorPool p : cl.pools) dev->fn.vkDestroyDescriptorPool(dev->device, p, nullptr);
    for (Allocation& a : cl.staging) release(dev, a);
    if (pool) dev->fn.vkDestroyCommandPool(dev->device, pool, nullptr);  // frees cl.cb
  }
};

struct CaptureSession {
  explicit CaptureSession(StreamState* origin) : joins(origin) {}
  std::shared_ptr<GraphData> graph;
  // Who joined, the nodes and edges, and who was joined back
  // (plugins/common/capture_joins.hpp).
  plugin_support::CaptureJoins<StreamState> joins;
  bool open = true;
};

TsError* capture_begin_op_locked(StreamState& s, CommandList** out) {
  CaptureSession& c = *s.capture;
  CommandList& cl = c.graph->cl;
  if (cl.commands > 0) record_barrier(s.dev, cl.cb);
  c.joins.AddNode(&s);
  cl.commands++;
  *out = &cl;
  return nullptr;
}

void capture_note_locked(StreamState& s, const std::weak_ptr<const void>& token,
                         const std::string& what) {
  CaptureSession& c = *s.capture;
  c.graph->refs.add(token, strprintf("%s (node %lld)", what.c_str(),
                                     static_cast<long long>(c.joins.nodes() - 1)));
}

std::string describe_buffer(const TsBuffer* b) {
  const char* kind = b->kind == TS_BUFFER_HOST_PINNED ? "host-pinned"
                     : b->kind == TS_BUFFER_MANAGED   ? "managed"
                                                      : "device";
  return strprintf("a %s %s buffer", human_size(b->size).c_str(), kind);
}

void capture_record_event_locked(StreamState& s, TsEvent* ev) {
  ev->capture = s.capture;
  ev->capture_point = s.capture->joins.Record(&s);
  ev->last_is_capture = true;
}

TsError* capture_wait_event_locked(StreamState& s, TsEvent* ev) {
  std::shared_ptr<CaptureSession> c = ev->capture;
  if (!c->open)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_WaitEvent: the event was last recorded inside a graph "
                  "capture that has ended; record it again outside the capture");
  if (s.capture && s.capture != c)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_WaitEvent: %s is capturing another graph",
                  s.label.c_str());
  if (!s.capture) {  // s joins the capture
    if (s.is_default)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "vulkan: Stream_WaitEvent: the default stream cannot join a capture: fork "
                    "work onto a stream created with Stream_Create");
    s.capture = c;
    c->joins.Join(&s);
  }
  c->joins.Wait(&s, ev->capture_point);
  return nullptr;
}

TS_VK_ENTRY(Stream_BeginCapture, TS_STREAM_BEGINCAPTURE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->stream, "Stream_BeginCapture", "stream");
  StreamState& s = *args->stream->state;
  TsDevice* dev = s.dev;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s.capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_BeginCapture: %s is already capturing", s.label.c_str());
  // The default stream orders every blocking stream and the synchronous
  // copies: captured, all of them would stop (as the cpu plugin and CUDA's
  // legacy stream, refused).
  if (s.is_default)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_BeginCapture: %s is the default stream, which cannot be "
                  "captured: capture a stream created with Stream_Create",
                  s.label.c_str());
  auto g = std::make_shared<GraphData>();
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.queueFamilyIndex = dev->family;
  TS_VK_CALL(dev->fn.vkCreateCommandPool(dev->device, &pci, nullptr, &g->pool),
             "vkCreateCommandPool(graph)");
  g->dev = dev;
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = g->pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
  ai.commandBufferCount = 1;
  TS_VK_CALL(dev->fn.vkAllocateCommandBuffers(dev->device, &ai, &g->cl.cb),
             "vkAllocateCommandBuffers(graph)");
  VkCommandBufferInheritanceInfo inh{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  bi.pInheritanceInfo = &inh;
  TS_VK_CALL(dev->fn.vkBeginCommandBuffer(g->cl.cb, &bi), "vkBeginCommandBuffer(graph)");
  g->cl.begun = true;
  auto c = std::make_shared<CaptureSession>(&s);
  c->graph = std::move(g);
  s.capture = std::move(c);
  return nullptr;
}

TS_VK_ENTRY(Stream_EndCapture, TS_STREAM_ENDCAPTURE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->stream, "Stream_EndCapture", "stream");
  StreamState& s = *args->stream->state;
  TsDevice* dev = s.dev;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (!s.capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_EndCapture: %s is not capturing", s.label.c_str());
  std::shared_ptr<CaptureSession> c = s.capture;
  if (c->joins.origin() != &s)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_EndCapture: %s joined a capture begun on %s; end it "
                  "there",
                  s.label.c_str(), c->joins.origin()->label.c_str());
  // The capture is over either way.
  c->open = false;
  const size_t first_unjoined = c->joins.FirstUnjoined();
  const std::string unjoined = first_unjoined ? c->joins.member(first_unjoined)->label : "";
  for (size_t k = 0; k < c->joins.num_members(); ++k) c->joins.member(k)->capture.reset();
  if (!unjoined.empty())
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_EndCapture: %s joined the capture and was not joined "
                  "back (the origin stream must wait on an event recorded last in it); "
                  "no graph was produced",
                  unjoined.c_str());
  std::shared_ptr<GraphData> g = std::move(c->graph);
  TS_VK_CALL(dev->fn.vkEndCommandBuffer(g->cl.cb), "vkEndCommandBuffer(graph)");
  g->nodes = static_cast<size_t>(c->joins.nodes());
  g->edges = c->joins.edges();
  auto* graph = new TsGraph;
  graph->device = dev;
  graph->data = std::move(g);
  dev->live.graphs.insert(graph);
  args->graph = graph;
  return nullptr;
}

void abandon_capture_locked(StreamState& s) {
  std::shared_ptr<CaptureSession> c = s.capture;
  if (!c) return;
  c->open = false;  // events recorded in it can no longer be waited on
  for (size_t k = 0; k < c->joins.num_members(); ++k) c->joins.member(k)->capture.reset();
}

void destroy_graph(TsGraph* g) {
  {
    std::lock_guard<std::mutex> lk(g->device->mu);
    g->device->live.graphs.erase(g);
  }
  g->magic = kMagicDead;
  delete g;  // the data goes with the last exec or batch replaying it
}

void destroy_graph_exec(TsGraphExec* x) {
  {
    std::lock_guard<std::mutex> lk(x->device->mu);
    x->device->live.graph_execs.erase(x);
  }
  x->magic = kMagicDead;
  delete x;  // batches still replaying it hold the data
}

TS_VK_ENTRY(Graph_Destroy, TS_GRAPH_DESTROY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->graph, "Graph_Destroy", "graph");
  destroy_graph(args->graph);
  return nullptr;
}

TS_VK_ENTRY(Graph_GetInfo, TS_GRAPH_GETINFO_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->graph, "Graph_GetInfo", "graph");
  args->num_nodes = args->graph->data->nodes;
  args->num_edges = args->graph->data->edges;
  return nullptr;
}

TS_VK_ENTRY(Graph_Instantiate, TS_GRAPH_INSTANTIATE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->graph, "Graph_Instantiate", "graph");
  auto* exec = new TsGraphExec;
  exec->device = args->graph->device;
  exec->data = args->graph->data;  // immutable once captured
  {
    std::lock_guard<std::mutex> lk(exec->device->mu);
    exec->device->live.graph_execs.insert(exec);
  }
  args->exec = exec;
  return nullptr;
}

TS_VK_ENTRY(GraphExec_Destroy, TS_GRAPHEXEC_DESTROY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->exec, "GraphExec_Destroy", "exec");
  destroy_graph_exec(args->exec);
  return nullptr;
}

TS_VK_ENTRY(GraphExec_Launch, TS_GRAPHEXEC_LAUNCH_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->exec, "GraphExec_Launch", "exec");
  TS_VK_CHECK_HANDLE(args->stream, "GraphExec_Launch", "stream");
  TsGraphExec* exec = args->exec;
  StreamState& s = *args->stream->state;
  TsDevice* dev = s.dev;
  if (exec->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: GraphExec_Launch: the graph was captured on another device");
  TS_VK_RETURN_IF_ERROR(exec->data->refs.check("vulkan"));
  std::lock_guard<std::mutex> lk(dev->mu);
  if (s.capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: GraphExec_Launch inside a capture (%s is capturing): a graph "
                  "cannot be launched into another; end the capture first",
                  s.label.c_str());
  CommandList* cl = nullptr;
  TS_VK_RETURN_IF_ERROR(begin_op_locked(s, &cl));
  if (exec->data->nodes > 0) {
    dev->fn.vkCmdExecuteCommands(cl->cb, 1, &exec->data->cl.cb);
    cl->graphs.push_back(exec->data);
  }
  return end_op_locked(s);
}

}  // namespace tessera::vk
