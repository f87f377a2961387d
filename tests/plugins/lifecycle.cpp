// Test plugin (h): the real CPU plugin behind a table that watches object
// lifetimes, for the core's teardown tests (test_lifecycle.cpp).
//
// It counts the objects alive in each client (buffers, streams, events,
// graphs, graph execs, executables, communicators, pinned host blocks) and
// reports three moments to the test program through a function the test
// executable exports, found with dlsym(RTLD_DEFAULT):
//   "client_create"  (value: clients alive after it)
//   "client_destroy" (value: objects still alive in that client: must be 0)
//   "unload"         (the shared object is being unmapped)
// Without that function (any other program) it reports nothing.
#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "plugins/cpu/plugin_api.h"
#include "tessera/plugin.h"

namespace {

using ReportFn = void (*)(const char* event, long value);

ReportFn Reporter() {
  return reinterpret_cast<ReportFn>(dlsym(RTLD_DEFAULT, "tessera_test_lifecycle_report"));
}
void Report(const char* event, long value) {
  if (ReportFn f = Reporter()) f(event, value);
}

const TsPluginApi& Cpu() { return *tessera_cpu_plugin_get_api(); }

std::atomic<long> g_clients{0};
std::atomic<long> g_objects{0};  // one client at a time in these tests

TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  args->name = "lifecycle";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0.0-lifecycle";
  return nullptr;
}

TsError* ClientCreate(TsClient_Create_Args* args) {
  TsError* e = Cpu().Client_Create(args);
  if (!e) Report("client_create", ++g_clients);
  return e;
}

TsError* ClientDestroy(TsClient_Destroy_Args* args) {
  Report("client_destroy", g_objects.load());
  TsError* e = Cpu().Client_Destroy(args);
  if (!e) --g_clients;
  return e;
}

// Wraps a create (+1 on success) or destroy (-1 on success) entry point.
#define COUNT(Entry, delta)                     \
  TsError* Entry(Ts##Entry##_Args* args) {      \
    TsError* e = Cpu().Entry(args);             \
    if (!e) g_objects += (delta);               \
    return e;                                   \
  }
COUNT(Buffer_Allocate, 1)
COUNT(Buffer_Free, -1)
COUNT(Host_Allocate, 1)
COUNT(Host_Free, -1)
COUNT(Stream_Create, 1)
COUNT(Stream_Destroy, -1)
COUNT(Event_Create, 1)
COUNT(Event_Destroy, -1)
COUNT(Stream_EndCapture, 1)
COUNT(Graph_Destroy, -1)
COUNT(Graph_Instantiate, 1)
COUNT(GraphExec_Destroy, -1)
COUNT(Executable_Load, 1)
COUNT(Executable_Destroy, -1)
COUNT(Communicator_Create, 1)
COUNT(Communicator_Destroy, -1)
#undef COUNT

TsPluginApi MakeTable() {
  TsPluginApi api;
  std::memcpy(&api, &Cpu(), sizeof api);
  api.Plugin_GetInfo = PluginGetInfo;
  api.Client_Create = ClientCreate;
  api.Client_Destroy = ClientDestroy;
#define WRAP(Entry) api.Entry = Entry;
  WRAP(Buffer_Allocate) WRAP(Buffer_Free) WRAP(Host_Allocate) WRAP(Host_Free)
  WRAP(Stream_Create) WRAP(Stream_Destroy) WRAP(Event_Create) WRAP(Event_Destroy)
  WRAP(Stream_EndCapture) WRAP(Graph_Destroy) WRAP(Graph_Instantiate)
  WRAP(GraphExec_Destroy) WRAP(Executable_Load) WRAP(Executable_Destroy)
  WRAP(Communicator_Create) WRAP(Communicator_Destroy)
#undef WRAP
  return api;
}

__attribute__((destructor)) void OnUnload() { Report("unload", g_clients.load()); }

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  static const TsPluginApi kApi = MakeTable();
  return &kApi;
}
