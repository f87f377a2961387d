// Stream capture and graphs: cuStreamBeginCapture (relaxed mode, so other
// threads may allocate and free while a stream captures) / cuStreamEndCapture
// produce a CUgraph; Graph_Instantiate is cuGraphInstantiateWithFlags,
// GraphExec_Launch cuGraphLaunch, Graph_GetInfo cuGraphGetNodes +
// cuGraphGetEdges.
//
// Bookkeeping CUDA does not offer: a CaptureSession per capture, joined by
// the streams that wait on an event recorded in it (exactly CUDA's rule), so
// the plugin knows which streams capture without asking the driver; and the
// buffers and executables the captured work uses (CapturedRefs), because a
// CUDA graph keeps neither alive: GraphExec_Launch refuses to replay once
// one is gone, naming it, instead of letting kernels touch freed memory.
#include "internal.hpp"

namespace tessera::cuda {

std::shared_ptr<CaptureSession> capture_of(TsStream* s) {
  TsClient* c = s->device->client;
  if (c->active_captures.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lk(c->capture_mu);
  return s->capture;
}

namespace {

// Ends `sess` for all its streams (capture_mu held).
void end_session_locked(TsClient* c, CaptureSession& sess) {
  for (TsStream* m : sess.members) {
    m->capture.reset();
    m->device->capturing.fetch_sub(1, std::memory_order_acq_rel);
    if (!m->non_blocking) m->device->capturing_blocking.fetch_sub(1, std::memory_order_acq_rel);
  }
  sess.members.clear();
  sess.ended = true;
  c->active_captures.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace

TS_CU_ENTRY(Stream_BeginCapture, TS_STREAM_BEGINCAPTURE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->stream, "Stream_BeginCapture", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  if (s->is_default)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cuda: Stream_BeginCapture: CUDA cannot capture its legacy default stream; "
                  "capture a created stream");
  TS_CU_RETURN_IF_ERROR(bind(dev));
  TsClient* c = dev->client;
  std::lock_guard<std::mutex> lk(c->capture_mu);
  if (s->capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cuda: Stream_BeginCapture: the stream is already capturing a graph");
  TS_CU_CALL(dev, dev->fn->cuStreamBeginCapture(s->stream, CU_STREAM_CAPTURE_MODE_RELAXED),
             "cuStreamBeginCapture(CU_STREAM_CAPTURE_MODE_RELAXED)");
  auto sess = std::make_shared<CaptureSession>();
  sess->origin = s;
  sess->members.push_back(s);
  s->capture = sess;
  c->active_captures.fetch_add(1, std::memory_order_acq_rel);
  dev->capturing.fetch_add(1, std::memory_order_acq_rel);
  if (!s->non_blocking) dev->capturing_blocking.fetch_add(1, std::memory_order_acq_rel);
  return nullptr;
}

TS_CU_ENTRY(Stream_EndCapture, TS_STREAM_ENDCAPTURE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->stream, "Stream_EndCapture", "stream");
  TsStream* s = args->stream;
  TsDevice* dev = s->device;
  TS_CU_RETURN_IF_ERROR(bind(dev));
  TsClient* c = dev->client;
  CUgraph g = nullptr;
  CUresult r;
  auto refs = std::make_shared<plugin_support::CapturedRefs>();
  {
    std::lock_guard<std::mutex> lk(c->capture_mu);
    std::shared_ptr<CaptureSession> sess = s->capture;
    if (!sess)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cuda: Stream_EndCapture: the stream is not capturing a graph");
    if (sess->origin != s)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "cuda: Stream_EndCapture: the stream joined a capture begun on another "
                    "stream; end it on that stream");
    r = dev->fn->cuStreamEndCapture(s->stream, &g);
    // CUDA ends the capture for every stream in it, whatever the result.
    *refs = std::move(sess->refs);
    end_session_locked(c, *sess);
  }
  if (r != CUDA_SUCCESS) {
    if (g) dev->fn->cuGraphDestroy(g);
    return dev_error(dev, r, "cuStreamEndCapture");
  }
  if (!g)
    return errorf(TS_ERROR_INTERNAL, "cuda: cuStreamEndCapture succeeded without a graph");
  auto* graph = new TsGraph;
  graph->device = dev;
  graph->graph = g;
  graph->refs = std::move(refs);
  dev->live_graphs.add(graph);
  args->graph = graph;
  return nullptr;
}

TS_CU_ENTRY(Graph_Destroy, TS_GRAPH_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->graph, "Graph_Destroy", "graph");
  TsGraph* g = args->graph;
  TS_CU_RETURN_IF_ERROR(bind(g->device));
  CUresult r = g->device->fn->cuGraphDestroy(g->graph);
  TsDevice* dev = g->device;
  dev->live_graphs.remove(g);
  g->magic = kMagicDead;
  delete g;
  return r == CUDA_SUCCESS ? nullptr : dev_error(dev, r, "cuGraphDestroy");
}

TS_CU_ENTRY(Graph_GetInfo, TS_GRAPH_GETINFO_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->graph, "Graph_GetInfo", "graph");
  TsGraph* g = args->graph;
  TS_CU_RETURN_IF_ERROR(bind(g->device));
  size_t nodes = 0, edges = 0;
  TS_CU_CALL(g->device, g->device->fn->cuGraphGetNodes(g->graph, nullptr, &nodes),
             "cuGraphGetNodes");
  TS_CU_CALL(g->device,
             g->device->fn->cuGraphGetEdges(g->graph, nullptr, nullptr, nullptr, &edges),
             "cuGraphGetEdges");
  args->num_nodes = nodes;
  args->num_edges = edges;
  return nullptr;
}

TS_CU_ENTRY(Graph_Instantiate, TS_GRAPH_INSTANTIATE_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->graph, "Graph_Instantiate", "graph");
  TsGraph* g = args->graph;
  TS_CU_RETURN_IF_ERROR(bind(g->device));
  CUgraphExec exec = nullptr;
  TS_CU_CALL(g->device, g->device->fn->cuGraphInstantiate(&exec, g->graph, 0),
             "cuGraphInstantiateWithFlags");
  auto* e = new TsGraphExec;
  e->device = g->device;
  e->exec = exec;
  e->refs = g->refs;  // immutable; independent of the graph's lifetime
  g->device->live_graph_execs.add(e);
  args->exec = e;
  return nullptr;
}

TS_CU_ENTRY(GraphExec_Destroy, TS_GRAPHEXEC_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->exec, "GraphExec_Destroy", "graph exec");
  TsGraphExec* e = args->exec;
  TsDevice* dev = e->device;
  TS_CU_RETURN_IF_ERROR(bind(dev));
  CUresult r = dev->fn->cuGraphExecDestroy(e->exec);
  dev->live_graph_execs.remove(e);
  e->magic = kMagicDead;
  delete e;
  return r == CUDA_SUCCESS ? nullptr : dev_error(dev, r, "cuGraphExecDestroy");
}

TS_CU_ENTRY(GraphExec_Launch, TS_GRAPHEXEC_LAUNCH_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->exec, "GraphExec_Launch", "graph exec");
  TS_CU_CHECK_HANDLE(args->stream, "GraphExec_Launch", "stream");
  TsGraphExec* e = args->exec;
  TsStream* s = args->stream;
  if (s->device != e->device)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: GraphExec_Launch: the graph was captured on device %u, the stream is "
                  "on device %u",
                  e->device->ordinal, s->device->ordinal);
  TS_CU_RETURN_IF_ERROR(refuse_if_capturing(s, "GraphExec_Launch"));
  if (s->is_default)
    TS_CU_RETURN_IF_ERROR(refuse_sync_while_capturing(s->device, "a graph launch on the default stream"));
  if (e->refs) TS_CU_RETURN_IF_ERROR(e->refs->check("cuda"));
  TS_CU_RETURN_IF_ERROR(bind(s->device));
  TS_CU_CALL(s->device, s->device->fn->cuGraphLaunch(e->exec, s->stream), "cuGraphLaunch");
  return nullptr;
}

}  // namespace tessera::cuda
