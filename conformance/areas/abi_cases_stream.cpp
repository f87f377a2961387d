// The "abi" area's invalid-argument cases of streams, events and graphs
// (abi_util.hpp).
#include "areas/abi_util.hpp"

namespace tessera::cts::abi {
namespace {

using A_SCreate = TsStream_Create_Args;
using A_SDestroy = TsStream_Destroy_Args;
using A_SSync = TsStream_Synchronize_Args;
using A_SQuery = TsStream_Query_Args;
using A_SWait = TsStream_WaitEvent_Args;
using A_Stamp = TsStream_WriteTimestamp_Args;
using A_Begin = TsStream_BeginCapture_Args;
using A_End = TsStream_EndCapture_Args;
using A_ECreate = TsEvent_Create_Args;
using A_EDestroy = TsEvent_Destroy_Args;
using A_Record = TsEvent_Record_Args;
using A_EQuery = TsEvent_Query_Args;
using A_ESync = TsEvent_Synchronize_Args;
using A_Elapsed = TsEvent_ElapsedTime_Args;
using A_GDestroy = TsGraph_Destroy_Args;
using A_GInfo = TsGraph_GetInfo_Args;
using A_GInst = TsGraph_Instantiate_Args;
using A_XDestroy = TsGraphExec_Destroy_Args;
using A_XLaunch = TsGraphExec_Launch_Args;

// The cases of an entry whose only argument is one handle.
template <class A, class H>
void OneHandle(CaseList* out, const char* name, TsError* (*TsPluginApi::*entry)(A*),
               size_t size, const char* field, H* A::*member, H* (Env::*make)()) {
  EntryCases<A> c(out, name, entry, size, [member, make](Env& env, A& a) {
    a.*member = (env.*make)();
  });
  c.Header();
  c.Handle(field, member);
}

}  // namespace

void AddStreamCases(CaseList* out) {
  {
    EntryCases<A_SCreate> c(out, "Stream_Create", &TsPluginApi::Stream_Create,
                            TS_STREAM_CREATE_ARGS_STRUCT_SIZE,
                            [](Env& env, A_SCreate& a) { a.device = env.device(); });
    c.Header();
    c.Handle("Device", &A_SCreate::device);
    c.Add("FlagsUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_SCreate& a) { a.flags = 1u << 31; });
  }
  {
    EntryCases<A_SDestroy> c(out, "Stream_Destroy", &TsPluginApi::Stream_Destroy,
                             TS_STREAM_DESTROY_ARGS_STRUCT_SIZE,
                             [](Env& env, A_SDestroy& a) { a.stream = env.stream(); });
    c.Header();
    c.Handle("Stream", &A_SDestroy::stream);
    c.Add("DefaultStream", TS_ERROR_FAILED_PRECONDITION,
          [](Env& env, A_SDestroy& a) { a.stream = env.default_stream(); });
  }
  OneHandle(out, "Stream_Synchronize", &TsPluginApi::Stream_Synchronize,
            TS_STREAM_SYNCHRONIZE_ARGS_STRUCT_SIZE, "Stream", &A_SSync::stream, &Env::stream);
  OneHandle(out, "Stream_Query", &TsPluginApi::Stream_Query, TS_STREAM_QUERY_ARGS_STRUCT_SIZE,
            "Stream", &A_SQuery::stream, &Env::stream);
  {
    EntryCases<A_SWait> c(out, "Stream_WaitEvent", &TsPluginApi::Stream_WaitEvent,
                          TS_STREAM_WAITEVENT_ARGS_STRUCT_SIZE, [](Env& env, A_SWait& a) {
                            a.stream = env.stream();
                            a.event = env.recorded_event();
                          });
    c.Header();
    c.Handle("Stream", &A_SWait::stream);
    c.Handle("Event", &A_SWait::event);
  }
  {
    // MINOR 3, optional: "unsupported: entry point" where the plugin has none.
    EntryCases<A_Stamp> c(out, "Stream_WriteTimestamp", &TsPluginApi::Stream_WriteTimestamp,
                          TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE, [](Env& env, A_Stamp& a) {
                            a.stream = env.stream();
                            a.timestamp_ns = env.Keep(uint64_t{0});
                          });
    c.Header();
    c.Handle("Stream", &A_Stamp::stream);
    c.Add("TimestampNull", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Stamp& a) { a.timestamp_ns = nullptr; });
  }
  {
    EntryCases<A_Begin> c(out, "Stream_BeginCapture", &TsPluginApi::Stream_BeginCapture,
                          TS_STREAM_BEGINCAPTURE_ARGS_STRUCT_SIZE,
                          [](Env& env, A_Begin& a) { a.stream = env.stream(); });
    c.Header();
    c.Handle("Stream", &A_Begin::stream);
  }
  {
    EntryCases<A_End> c(out, "Stream_EndCapture", &TsPluginApi::Stream_EndCapture,
                        TS_STREAM_ENDCAPTURE_ARGS_STRUCT_SIZE,
                        [](Env& env, A_End& a) { a.stream = env.stream(); });
    c.Header();
    c.Handle("Stream", &A_End::stream);
    c.Add("NotCapturing", TS_ERROR_FAILED_PRECONDITION,
          [](Env& env, A_End&) { env.Require(env.info().graphs, "graphs"); });
  }
  {
    EntryCases<A_ECreate> c(out, "Event_Create", &TsPluginApi::Event_Create,
                            TS_EVENT_CREATE_ARGS_STRUCT_SIZE,
                            [](Env& env, A_ECreate& a) { a.device = env.device(); });
    c.Header();
    c.Handle("Device", &A_ECreate::device);
    c.Add("FlagsUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_ECreate& a) { a.flags = 1u << 31; });
  }
  OneHandle(out, "Event_Destroy", &TsPluginApi::Event_Destroy, TS_EVENT_DESTROY_ARGS_STRUCT_SIZE,
            "Event", &A_EDestroy::event, &Env::event);
  OneHandle(out, "Event_Query", &TsPluginApi::Event_Query, TS_EVENT_QUERY_ARGS_STRUCT_SIZE,
            "Event", &A_EQuery::event, &Env::event);
  OneHandle(out, "Event_Synchronize", &TsPluginApi::Event_Synchronize,
            TS_EVENT_SYNCHRONIZE_ARGS_STRUCT_SIZE, "Event", &A_ESync::event, &Env::event);
  {
    EntryCases<A_Record> c(out, "Event_Record", &TsPluginApi::Event_Record,
                           TS_EVENT_RECORD_ARGS_STRUCT_SIZE, [](Env& env, A_Record& a) {
                             a.event = env.event();
                             a.stream = env.stream();
                           });
    c.Header();
    c.Handle("Event", &A_Record::event);
    c.Handle("Stream", &A_Record::stream);
  }
  {
    EntryCases<A_Elapsed> c(out, "Event_ElapsedTime", &TsPluginApi::Event_ElapsedTime,
                            TS_EVENT_ELAPSEDTIME_ARGS_STRUCT_SIZE, [](Env& env, A_Elapsed& a) {
                              a.start = a.end = env.recorded_event();
                            });
    c.Header();
    c.Handle("Start", &A_Elapsed::start);
    c.Handle("End", &A_Elapsed::end);
    c.Add("StartNeverRecorded", TS_ERROR_FAILED_PRECONDITION,
          [](Env& env, A_Elapsed& a) { a.start = env.event(); });
    c.Add("EndNeverRecorded", TS_ERROR_FAILED_PRECONDITION,
          [](Env& env, A_Elapsed& a) { a.end = env.event(); });
    c.Add("StartWithoutTiming", TS_ERROR_FAILED_PRECONDITION,
          [](Env& env, A_Elapsed& a) { a.start = env.recorded_event(false); });
    c.Add("EndWithoutTiming", TS_ERROR_FAILED_PRECONDITION,
          [](Env& env, A_Elapsed& a) { a.end = env.recorded_event(false); });
  }
  OneHandle(out, "Graph_Destroy", &TsPluginApi::Graph_Destroy, TS_GRAPH_DESTROY_ARGS_STRUCT_SIZE,
            "Graph", &A_GDestroy::graph, &Env::graph);
  OneHandle(out, "Graph_GetInfo", &TsPluginApi::Graph_GetInfo, TS_GRAPH_GETINFO_ARGS_STRUCT_SIZE,
            "Graph", &A_GInfo::graph, &Env::graph);
  OneHandle(out, "Graph_Instantiate", &TsPluginApi::Graph_Instantiate,
            TS_GRAPH_INSTANTIATE_ARGS_STRUCT_SIZE, "Graph", &A_GInst::graph, &Env::graph);
  OneHandle(out, "GraphExec_Destroy", &TsPluginApi::GraphExec_Destroy,
            TS_GRAPHEXEC_DESTROY_ARGS_STRUCT_SIZE, "Exec", &A_XDestroy::exec, &Env::graph_exec);
  {
    EntryCases<A_XLaunch> c(out, "GraphExec_Launch", &TsPluginApi::GraphExec_Launch,
                            TS_GRAPHEXEC_LAUNCH_ARGS_STRUCT_SIZE, [](Env& env, A_XLaunch& a) {
                              a.exec = env.graph_exec();
                              a.stream = env.stream();
                            });
    c.Header();
    c.Handle("Exec", &A_XLaunch::exec);
    c.Handle("Stream", &A_XLaunch::stream);
    // A graph holds its device's kernels and buffers (the cpu plugin ran
    // one on another device's scheduler).
    c.Add("StreamOfOtherDevice", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_XLaunch& a) { a.stream = env.stream2(); });
    c.Add("StreamOfOtherClient", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_XLaunch& a) { a.stream = env.other_stream(); });
  }
}

}  // namespace tessera::cts::abi
