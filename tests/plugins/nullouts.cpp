// Test plugin (i): the real CPU plugin behind a table whose create entry
// points succeed without creating anything (a null out-pointer) and whose
// other answers are out of range, for the defensive core's tests
// (test_plugin_answers.cpp): each must be an INTERNAL error naming the
// plugin and the entry point, never a null handle or a bogus value passed on.
//   Stream_Create, Host_Allocate, Communicator_Create, Executable_GetKernel:
//     success, out-pointer NULL
//   Buffer_Allocate of 77 bytes, Event_Create with flags 0, Executable_Load
//     of a path ending in "null-executable": the same (other calls work, so
//     that the tests below have a buffer and events)
//   Buffer_Advise: result 99;  Event_ElapsedTime: NaN milliseconds;
//   Buffer_GetDeviceAddress: address 0
#include <cmath>
#include <cstring>

#include "plugins/cpu/plugin_api.h"
#include "tessera/plugin.h"

namespace {

const TsPluginApi& Cpu() { return *tessera_cpu_plugin_get_api(); }

TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  TsError* e = Cpu().Plugin_GetInfo(args);
  args->name = "nullouts";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0.0-nullouts";
  return e;
}

#define SUCCEED_WITH_NULL(Entry, field)     \
  TsError* Entry(Ts##Entry##_Args* args) {  \
    args->field = nullptr;                  \
    return nullptr;                         \
  }
SUCCEED_WITH_NULL(Stream_Create, stream)
SUCCEED_WITH_NULL(Host_Allocate, pointer)
SUCCEED_WITH_NULL(Communicator_Create, communicator)
SUCCEED_WITH_NULL(Executable_GetKernel, kernel)
#undef SUCCEED_WITH_NULL

TsError* BufferAllocate(TsBuffer_Allocate_Args* args) {
  if (args->size != 77) return Cpu().Buffer_Allocate(args);
  args->buffer = nullptr;
  return nullptr;
}

TsError* EventCreate(TsEvent_Create_Args* args) {
  if (args->flags != 0) return Cpu().Event_Create(args);
  args->event = nullptr;
  return nullptr;
}

TsError* ExecutableLoad(TsExecutable_Load_Args* args) {
  const char* tail = "null-executable";
  if (args->path && std::strlen(args->path) >= std::strlen(tail) &&
      std::strcmp(args->path + std::strlen(args->path) - std::strlen(tail), tail) == 0) {
    args->executable = nullptr;
    return nullptr;
  }
  return Cpu().Executable_Load(args);
}

TsError* BufferAdvise(TsBuffer_Advise_Args* args) {
  args->result = static_cast<TsHintResult>(99);
  return nullptr;
}

TsError* BufferGetDeviceAddress(TsBuffer_GetDeviceAddress_Args* args) {
  args->address = 0;
  return nullptr;
}

TsError* EventElapsedTime(TsEvent_ElapsedTime_Args* args) {
  args->milliseconds = std::nan("");
  return nullptr;
}

TsPluginApi MakeTable() {
  TsPluginApi api = Cpu();
  api.Plugin_GetInfo = PluginGetInfo;
  api.Buffer_Allocate = BufferAllocate;
  api.Stream_Create = Stream_Create;
  api.Event_Create = EventCreate;
  api.Host_Allocate = Host_Allocate;
  api.Communicator_Create = Communicator_Create;
  api.Executable_GetKernel = Executable_GetKernel;
  api.Executable_Load = ExecutableLoad;
  api.Buffer_Advise = BufferAdvise;
  api.Event_ElapsedTime = EventElapsedTime;
  api.Buffer_GetDeviceAddress = BufferGetDeviceAddress;
  return api;
}

}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  static const TsPluginApi kApi = MakeTable();  // built on first use, see newminor.cpp
  return &kApi;
}
