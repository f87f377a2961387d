// Stream capture and graphs: NOT IMPLEMENTED; TsDeviceProperties.graphs is 0
// and every entry is TS_ERROR_UNSUPPORTED with the reason.
//
// The mapping is known (docs/abi.md): capture would redirect a stream's
// appends into a regular command list (zeCommandListCreate), the events of
// the capture becoming signals and waits inside it, and a launch would be
// zeCommandQueueExecuteCommandLists on a command queue ordered with the
// stream by events.  Doing that correctly needs what this plugin does not
// have yet: events reset inside the list (zeCommandListAppendEventReset) so
// a graph can replay, a command queue per stream beside its immediate list,
// cross-stream joins recorded in one list, and the buffers a graph uses
// tracked as in the cuda plugin.  Until then a capture is refused up front
// rather than recorded wrongly.
#include "internal.hpp"

namespace tessera::level_zero {

namespace {
TsError* no_graphs(const char* entry) {
  return errorf(TS_ERROR_UNSUPPORTED,
                "level_zero: %s: stream capture and graphs are not implemented by the "
                "level_zero plugin (TsDeviceProperties.graphs is 0): issue the work directly. "
                "The planned mapping records into a regular command list (zeCommandListCreate) "
                "and replays it with zeCommandQueueExecuteCommandLists",
                entry);
}
}  // namespace

TS_ZE_ENTRY(Stream_BeginCapture, TS_STREAM_BEGINCAPTURE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_BeginCapture", "stream");
  return no_graphs("Stream_BeginCapture");
}

TS_ZE_ENTRY(Stream_EndCapture, TS_STREAM_ENDCAPTURE_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->stream, "Stream_EndCapture", "stream");
  return no_graphs("Stream_EndCapture");
}

TS_ZE_ENTRY(Graph_Destroy, TS_GRAPH_DESTROY_ARGS_STRUCT_SIZE) {
  return no_graphs("Graph_Destroy");
}

TS_ZE_ENTRY(Graph_GetInfo, TS_GRAPH_GETINFO_ARGS_STRUCT_SIZE) {
  return no_graphs("Graph_GetInfo");
}

TS_ZE_ENTRY(Graph_Instantiate, TS_GRAPH_INSTANTIATE_ARGS_STRUCT_SIZE) {
  return no_graphs("Graph_Instantiate");
}

TS_ZE_ENTRY(GraphExec_Destroy, TS_GRAPHEXEC_DESTROY_ARGS_STRUCT_SIZE) {
  return no_graphs("GraphExec_Destroy");
}

TS_ZE_ENTRY(GraphExec_Launch, TS_GRAPHEXEC_LAUNCH_ARGS_STRUCT_SIZE) {
  return no_graphs("GraphExec_Launch");
}

}  // namespace tessera::level_zero
