/*
 * The skeleton plugin: the smallest complete Tessera plugin.
 *
 * It fills the WHOLE TsPluginApi table.  The error entry points and
 * Plugin_GetInfo work; every other entry point returns
 * TS_ERROR_UNIMPLEMENTED with a message naming itself.  A new plugin starts
 * as a copy of this file (README.md) and replaces the stubs one by one,
 * running tessera-conformance after each step.
 *
 * Built against the installed headers alone (<tessera/plugin.h>), in C99.
 * Its compiler entry points (ABI 1.2) are in compiler.c.
 * Only tessera_plugin_get_api is exported (tessera_add_plugin builds with
 * hidden visibility).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/plugin.h>

#include "skeleton.h"

/* ------------------------------------------------------------ errors
 * An error owns its message; the caller destroys it with Error_Destroy
 * (plugin.h, ERRORS).  Allocation failure yields a static error object
 * so that reporting an error never fails. */
struct TsError {
  TsErrorCode code;
  char* message;
  int is_static;
};

static struct TsError kOutOfMemoryError = {
    TS_ERROR_RESOURCE_EXHAUSTED, "skeleton plugin: out of memory while reporting an error", 1};

TsError* SkeletonError(TsErrorCode code, const char* text) {
  TsError* e = (TsError*)malloc(sizeof(TsError));
  size_t n = strlen(text);
  if (!e) return &kOutOfMemoryError;
  e->message = (char*)malloc(n + 1);
  if (!e->message) {
    free(e);
    return &kOutOfMemoryError;
  }
  memcpy(e->message, text, n + 1);
  e->code = code;
  e->is_static = 0;
  return e;
}

static TsError* Unimplemented(const char* entry_point) {
  char text[256];
  snprintf(text, sizeof(text),
           "skeleton plugin: %s is not implemented yet; see "
           "examples/plugin_skeleton/README.md",
           entry_point);
  return SkeletonError(TS_ERROR_UNIMPLEMENTED, text);
}

#define CHECK_ARGS SKELETON_CHECK_ARGS

static TsError* Error_Destroy(TsError_Destroy_Args* args) {
  CHECK_ARGS(args, TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, "Error_Destroy");
  if (args->error && !args->error->is_static) {
    free(args->error->message);
    free(args->error);
  }
  return NULL;
}

static TsError* Error_Message(TsError_Message_Args* args) {
  CHECK_ARGS(args, TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE, "Error_Message");
  if (!args->error)
    return SkeletonError(TS_ERROR_INVALID_ARGUMENT, "skeleton plugin: Error_Message: error is NULL");
  args->message = args->error->message;
  args->message_size = strlen(args->error->message);
  return NULL;
}

static TsError* Error_GetCode(TsError_GetCode_Args* args) {
  CHECK_ARGS(args, TS_ERROR_GETCODE_ARGS_STRUCT_SIZE, "Error_GetCode");
  if (!args->error)
    return SkeletonError(TS_ERROR_INVALID_ARGUMENT, "skeleton plugin: Error_GetCode: error is NULL");
  args->code = args->error->code;
  return NULL;
}

/* ------------------------------------------------------------ plugin */
static TsError* Plugin_GetInfo(TsPlugin_GetInfo_Args* args) {
  CHECK_ARGS(args, TS_PLUGIN_GETINFO_ARGS_MIN_STRUCT_SIZE, "Plugin_GetInfo");
  args->name = "skeleton";
  args->vendor = "Tessera SDK example";
  args->plugin_version = "0.1.0";
  return NULL;
}

/* ------------------------------------------------------------ stubs
 * Replace these one by one.  Order of work that keeps conformance useful:
 * Client_* and Device_* first (the suite needs a device), then
 * the Buffer, Host, Memcpy and Memset entries, then Stream and Event ones,
 * then the rest. */
#define SKELETON_STUB(name) \
  static TsError* name(Ts##name##_Args* args) { \
    (void)args;                                 \
    return Unimplemented(#name);                \
  }

SKELETON_STUB(Client_Create)
SKELETON_STUB(Client_Destroy)
SKELETON_STUB(Client_GetDevices)
SKELETON_STUB(Device_GetProperties)
SKELETON_STUB(Device_GetDefaultStream)
SKELETON_STUB(Device_Synchronize)
SKELETON_STUB(Buffer_Allocate)
SKELETON_STUB(Buffer_Free)
SKELETON_STUB(Host_Allocate)
SKELETON_STUB(Host_Free)
SKELETON_STUB(Host_Register)
SKELETON_STUB(Host_Unregister)
SKELETON_STUB(Memcpy)
SKELETON_STUB(Memset)
SKELETON_STUB(Buffer_Prefetch)
SKELETON_STUB(Buffer_Advise)
SKELETON_STUB(Stream_Create)
SKELETON_STUB(Stream_Destroy)
SKELETON_STUB(Stream_Synchronize)
SKELETON_STUB(Stream_Query)
SKELETON_STUB(Stream_WaitEvent)
SKELETON_STUB(Stream_BeginCapture)
SKELETON_STUB(Stream_EndCapture)
SKELETON_STUB(Event_Create)
SKELETON_STUB(Event_Destroy)
SKELETON_STUB(Event_Record)
SKELETON_STUB(Event_Query)
SKELETON_STUB(Event_Synchronize)
SKELETON_STUB(Event_ElapsedTime)
SKELETON_STUB(Graph_Destroy)
SKELETON_STUB(Graph_GetInfo)
SKELETON_STUB(Graph_Instantiate)
SKELETON_STUB(GraphExec_Destroy)
SKELETON_STUB(GraphExec_Launch)
SKELETON_STUB(Executable_Load)
SKELETON_STUB(Executable_Destroy)
SKELETON_STUB(Executable_GetKernel)
SKELETON_STUB(Kernel_Launch)
SKELETON_STUB(Communicator_Create)
SKELETON_STUB(Communicator_Destroy)
SKELETON_STUB(Communicator_Collective)

/* ------------------------------------------------------------ the table
 * struct_size says which entries this plugin knows (the whole ABI 1.2 table,
 * compiler entries included: compiler.c); the
 * core never calls past it.  Designated initialisers keep the table right
 * when entries are appended in a later MINOR. */
static const TsPluginApi kApi = {
    .struct_size = TS_PLUGIN_API_STRUCT_SIZE,
    .extension_start = NULL,
    .abi_version = {TESSERA_ABI_VERSION_MAJOR, TESSERA_ABI_VERSION_MINOR},
    .Error_Destroy = Error_Destroy,
    .Error_Message = Error_Message,
    .Error_GetCode = Error_GetCode,
    .Plugin_GetInfo = Plugin_GetInfo,
    .Client_Create = Client_Create,
    .Client_Destroy = Client_Destroy,
    .Client_GetDevices = Client_GetDevices,
    .Device_GetProperties = Device_GetProperties,
    .Device_GetDefaultStream = Device_GetDefaultStream,
    .Device_Synchronize = Device_Synchronize,
    .Buffer_Allocate = Buffer_Allocate,
    .Buffer_Free = Buffer_Free,
    .Host_Allocate = Host_Allocate,
    .Host_Free = Host_Free,
    .Host_Register = Host_Register,
    .Host_Unregister = Host_Unregister,
    .Memcpy = Memcpy,
    .Memset = Memset,
    .Buffer_Prefetch = Buffer_Prefetch,
    .Buffer_Advise = Buffer_Advise,
    .Stream_Create = Stream_Create,
    .Stream_Destroy = Stream_Destroy,
    .Stream_Synchronize = Stream_Synchronize,
    .Stream_Query = Stream_Query,
    .Stream_WaitEvent = Stream_WaitEvent,
    .Stream_BeginCapture = Stream_BeginCapture,
    .Stream_EndCapture = Stream_EndCapture,
    .Event_Create = Event_Create,
    .Event_Destroy = Event_Destroy,
    .Event_Record = Event_Record,
    .Event_Query = Event_Query,
    .Event_Synchronize = Event_Synchronize,
    .Event_ElapsedTime = Event_ElapsedTime,
    .Graph_Destroy = Graph_Destroy,
    .Graph_GetInfo = Graph_GetInfo,
    .Graph_Instantiate = Graph_Instantiate,
    .GraphExec_Destroy = GraphExec_Destroy,
    .GraphExec_Launch = GraphExec_Launch,
    .Executable_Load = Executable_Load,
    .Executable_Destroy = Executable_Destroy,
    .Executable_GetKernel = Executable_GetKernel,
    .Kernel_Launch = Kernel_Launch,
    .Communicator_Create = Communicator_Create,
    .Communicator_Destroy = Communicator_Destroy,
    .Communicator_Collective = Communicator_Collective,
    .Compiler_GetTargets = Compiler_GetTargets, /* compiler.c */
    .Compiler_Compile = Compiler_Compile,
    .Compilation_Destroy = Compilation_Destroy,
};

/* The one exported symbol (TESSERA_PLUGIN_ENTRY_POINT). */
TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) { return &kApi; }
