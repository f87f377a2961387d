// Plugin negotiation with a fuzzed function table: the core's checks of a
// plugin's table and answers (core/src/plugin_library.cpp, the device list
// and properties in core/src/backend_selection.cpp, the option and target
// lists in core/src/plugin_options.cpp, then a few calls on the devices).
//
// The plugin is registered as an embedded plugin named "fuzz"
// (RegisterStaticPlugin, the hook libtessera.so uses for the cpu plugin),
// so it runs in this process with isolation off: what is checked is the
// core, not the probe child.  The input is a script read as the core calls:
// the table's struct_size, ABI version and which entry points are missing
// come first, then each entry point, when called, reads its answer (success
// or an error object, a null out-pointer, lying counts and sizes, raw bytes
// for device properties and enum fields).  An exhausted script answers
// "success" with sane values, so short inputs reach deep.
//
// What the harness's plugin never does, since no core could catch it: give
// a pointer to less memory than it claims within the core's own bounds.
// Arrays hold min(claimed, kCapacity) entries (kCapacity is above every
// bound the core applies), strings are NUL-terminated, and host pointers
// span what they claim.  An error object the core does not destroy is a
// leak LeakSanitizer reports.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "tessera/plugin.h"
#include "../tests/plugins/required_table.hpp"
#include "tessera/runtime.hpp"

struct TsError {
  int32_t code;
  std::string message;
  int mode;  // 0 plain, 1 null message, 2 message_size SIZE_MAX, 3 short size,
             // 4 Error_GetCode fails, 5 Error_Message fails
};
struct TsClient {
  int unused;
};
struct TsDevice {
  int unused;
};
struct TsBuffer {
  int unused;
};
struct TsStream {
  int unused;
};
struct TsEvent {
  int unused;
};

namespace {

constexpr size_t kCapacity = 8192;      // entries an array really holds, at most
constexpr size_t kHostBytes = 1 << 16;  // host-addressable buffer memory

FuzzedDataProvider* g_script = nullptr;
std::deque<std::string> g_strings;  // storage of the strings handed out, per input
TsClient g_client;
TsDevice g_device_pool[kCapacity];
TsBuffer g_buffer_pool[64];
TsStream g_stream_pool[64];
TsEvent g_event_pool[64];
size_t g_next_buffer, g_next_stream, g_next_event;
alignas(64) unsigned char g_host[kHostBytes];
std::vector<TsDevice*> g_devices;
std::vector<TsOptionInfo> g_options;
std::vector<TsCompilerTarget> g_targets;

uint8_t Byte() { return g_script->ConsumeIntegral<uint8_t>(); }
bool Rarely() { return Byte() >= 224; }  // an exhausted script says no

const char* Text(size_t max) {
  g_strings.push_back(g_script->ConsumeRandomLengthString(max));
  return g_strings.back().c_str();
}
const char* MaybeText(size_t max) { return Rarely() ? nullptr : Text(max); }

// Writes a raw integer into an enum field (what a C plugin can do), without
// the harness itself loading an invalid enum value.
template <typename E>
void RawEnum(E* field, uint32_t value) {
  static_assert(sizeof(E) == sizeof(uint32_t));
  std::memcpy(field, &value, sizeof value);
}

// How much an array really holds for a claimed count.
size_t Held(size_t claimed) { return claimed < kCapacity ? claimed : kCapacity; }

// The answer of one call: nullptr (success) or an error object.
TsError* Verdict() {
  const uint8_t b = Byte();
  if (b < 192) return nullptr;
  auto* e = new TsError;
  e->code = (b & 1) ? g_script->ConsumeIntegral<int32_t>()
                    : g_script->ConsumeIntegralInRange<int32_t>(TS_ERROR_CANCELLED, TS_ERROR_ABI_MISMATCH);
  e->mode = (b >> 1) % 8;
  e->message = g_script->ConsumeRandomLengthString(80);
  return e;
}

// ---- errors
TsError* ErrorDestroy(TsError_Destroy_Args* args) {
  delete args->error;
  return nullptr;
}
TsError* ErrorMessage(TsError_Message_Args* args) {
  const TsError* e = args->error;
  if (e->mode == 5) return new TsError{TS_ERROR_INTERNAL, "Error_Message failed", 0};
  args->message = e->mode == 1 ? nullptr : e->message.c_str();
  args->message_size = e->mode == 2   ? SIZE_MAX
                       : e->mode == 3 ? e->message.size() / 2
                                      : e->message.size();
  return nullptr;
}
TsError* ErrorGetCode(TsError_GetCode_Args* args) {
  const TsError* e = args->error;
  if (e->mode == 4) return new TsError{TS_ERROR_INTERNAL, "Error_GetCode failed", 0};
  RawEnum(&args->code, static_cast<uint32_t>(e->code));
  return nullptr;
}

// ---- plugin and client
TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  if (TsError* e = Verdict()) return e;
  args->name = MaybeText(300);
  args->vendor = MaybeText(300);
  args->plugin_version = MaybeText(300);
  if (args->struct_size >= TS_PLUGIN_GETINFO_ARGS_STRUCT_SIZE && Byte() >= 128) {
    const size_t claimed = Byte() >= 240 ? g_script->ConsumeIntegral<size_t>() : Byte() % 8;
    g_options.assign(Held(claimed), TsOptionInfo{});
    for (TsOptionInfo& o : g_options) {
      o.struct_size = Rarely() ? Byte() : sizeof(TsOptionInfo);
      o.name = MaybeText(200);
      RawEnum(&o.type, Byte() >= 200 ? g_script->ConsumeIntegral<uint32_t>() : Byte() % 4);
      o.default_value = MaybeText(64);
      o.description = MaybeText(64);
    }
    args->client_options = Rarely() ? nullptr : g_options.data();
    args->num_client_options = claimed;
  }
  return nullptr;
}

TsError* CompilerGetTargets(TsCompiler_GetTargets_Args* args) {
  if (TsError* e = Verdict()) return e;
  const size_t claimed = Byte() >= 240 ? g_script->ConsumeIntegral<size_t>() : Byte() % 4;
  g_targets.assign(Held(claimed), TsCompilerTarget{});
  for (TsCompilerTarget& t : g_targets) {
    t.struct_size = Rarely() ? Byte() : sizeof(TsCompilerTarget);
    t.name = MaybeText(300);
    t.archs = MaybeText(64);
    t.default_arch = MaybeText(32);
    t.executable_format = MaybeText(32);
    t.emit_kinds = MaybeText(32);
    t.input_levels = Byte();
    t.schedule = MaybeText(64);
    t.options = nullptr;
    t.num_options = 0;
    t.build_id = MaybeText(32);
  }
  args->targets = Rarely() ? nullptr : g_targets.data();
  args->num_targets = claimed;
  return nullptr;
}

TsError* ClientCreate(TsClient_Create_Args* args) {
  if (TsError* e = Verdict()) return e;
  args->client = Rarely() ? nullptr : &g_client;
  return nullptr;
}
TsError* ClientDestroy(TsClient_Destroy_Args*) { return Verdict(); }

TsError* ClientGetDevices(TsClient_GetDevices_Args* args) {
  if (TsError* e = Verdict()) return e;
  const uint8_t how = Byte();
  const size_t claimed = how >= 240 ? g_script->ConsumeIntegral<size_t>() : 1 + how % 3;
  g_devices.assign(Held(claimed), nullptr);
  for (size_t i = 0; i < g_devices.size(); ++i) g_devices[i] = Rarely() ? nullptr : &g_device_pool[i];
  args->devices = Rarely() ? nullptr : g_devices.data();
  args->num_devices = claimed;
  return nullptr;
}

TsError* DeviceGetProperties(TsDevice_GetProperties_Args* args) {
  if (TsError* e = Verdict()) return e;
  TsDeviceProperties* p = args->properties;
  // The core says how large its struct is; nothing past that is written.
  const size_t size = p->struct_size < sizeof(*p) ? p->struct_size : sizeof(*p);
  if (Byte() >= 160) {
    // Raw bytes over everything after the header.
    auto* bytes = reinterpret_cast<unsigned char*>(p);
    const size_t header = offsetof(TsDeviceProperties, name);
    if (size > header) {
      std::vector<unsigned char> raw = g_script->ConsumeBytes<unsigned char>(size - header);
      if (!raw.empty()) std::memcpy(bytes + header, raw.data(), raw.size());
    }
    return nullptr;
  }
  std::snprintf(p->name, TS_NAME_MAX, "%s", Text(TS_NAME_MAX + 8));
  std::snprintf(p->vendor, TS_NAME_MAX, "fuzz");
  RawEnum(&p->type, Rarely() ? g_script->ConsumeIntegral<uint32_t>() : TS_DEVICE_TYPE_CPU);
  p->total_memory = Rarely() ? g_script->ConsumeIntegral<uint64_t>() : uint64_t{1} << 30;
  p->buffer_kinds = Rarely() ? g_script->ConsumeIntegral<uint32_t>() : 0x7;
  RawEnum(&p->prefetch_hint, Rarely() ? g_script->ConsumeIntegral<uint32_t>() : 0);
  RawEnum(&p->advise_hint, Rarely() ? g_script->ConsumeIntegral<uint32_t>() : 0);
  RawEnum(&p->peer_copy, Rarely() ? g_script->ConsumeIntegral<uint32_t>() : 0);
  std::snprintf(p->executable_formats, TS_NAME_MAX, "%s", Text(64));
  p->num_memory_heaps = Rarely() ? g_script->ConsumeIntegral<uint32_t>() : 1;
  p->memory_heaps[0].size = p->total_memory;
  p->num_memory_types = Rarely() ? g_script->ConsumeIntegral<uint32_t>() : 1;
  p->max_group_size = Byte();
  p->subgroup_size = Byte();
  if (size >= TS_DEVICE_PROPERTIES_STRUCT_SIZE) {
    p->kernel_features_known = Byte() & 1;
    p->subgroup_size_min = Byte();
    p->subgroup_size_max = Byte();
  }
  return nullptr;
}

TsError* DeviceGetDefaultStream(TsDevice_GetDefaultStream_Args* args) {
  if (TsError* e = Verdict()) return e;
  args->stream = Rarely() ? nullptr : &g_stream_pool[0];
  return nullptr;
}
TsError* DeviceSynchronize(TsDevice_Synchronize_Args*) { return Verdict(); }

// ---- memory, streams, events
TsError* BufferAllocate(TsBuffer_Allocate_Args* args) {
  if (TsError* e = Verdict()) return e;
  args->buffer = Rarely() ? nullptr : &g_buffer_pool[g_next_buffer++ % 64];
  // Host-addressable only where the harness has the memory for it.
  args->host_pointer = (args->size <= kHostBytes && Byte() >= 128) ? g_host : nullptr;
  return nullptr;
}
TsError* BufferFree(TsBuffer_Free_Args*) { return Verdict(); }
TsError* Memcpy(TsMemcpy_Args*) { return Verdict(); }
TsError* Memset(TsMemset_Args*) { return Verdict(); }
TsError* StreamCreate(TsStream_Create_Args* args) {
  if (TsError* e = Verdict()) return e;
  args->stream = Rarely() ? nullptr : &g_stream_pool[1 + g_next_stream++ % 63];
  return nullptr;
}
TsError* StreamDestroy(TsStream_Destroy_Args*) { return Verdict(); }
TsError* StreamSynchronize(TsStream_Synchronize_Args*) { return Verdict(); }
TsError* StreamQuery(TsStream_Query_Args* args) {
  if (TsError* e = Verdict()) return e;
  args->idle = Byte();
  return nullptr;
}
TsError* EventCreate(TsEvent_Create_Args* args) {
  if (TsError* e = Verdict()) return e;
  args->event = Rarely() ? nullptr : &g_event_pool[g_next_event++ % 64];
  return nullptr;
}
TsError* EventDestroy(TsEvent_Destroy_Args*) { return Verdict(); }
TsError* EventRecord(TsEvent_Record_Args*) { return Verdict(); }
TsError* EventSynchronize(TsEvent_Synchronize_Args*) { return Verdict(); }
TsError* StreamWaitEvent(TsStream_WaitEvent_Args*) { return Verdict(); }

TsPluginApi FullTable() {
  TsPluginApi api = tessera_test::RequiredTable({ErrorDestroy, ErrorMessage, ErrorGetCode, PluginGetInfo, ClientCreate,
                                                  ClientDestroy, ClientGetDevices, DeviceGetProperties});
  api.Device_GetDefaultStream = DeviceGetDefaultStream;
  api.Device_Synchronize = DeviceSynchronize;
  api.Buffer_Allocate = BufferAllocate;
  api.Buffer_Free = BufferFree;
  api.Memcpy = Memcpy;
  api.Memset = Memset;
  api.Stream_Create = StreamCreate;
  api.Stream_Destroy = StreamDestroy;
  api.Stream_Synchronize = StreamSynchronize;
  api.Stream_Query = StreamQuery;
  api.Stream_WaitEvent = StreamWaitEvent;
  api.Event_Create = EventCreate;
  api.Event_Destroy = EventDestroy;
  api.Event_Record = EventRecord;
  api.Event_Synchronize = EventSynchronize;
  api.Compiler_GetTargets = CompilerGetTargets;
  return api;
}

// The table of this input: as long as its struct_size says (within
// [header, full]), so that the core reading past a short table is an ASan
// report.
std::unique_ptr<unsigned char[]> g_table;

const TsPluginApi* GetApi() { return reinterpret_cast<const TsPluginApi*>(g_table.get()); }

void MakeTable() {
  TsPluginApi api = FullTable();
  const uint8_t s = Byte();
  switch (s % 8) {
    case 1: api.struct_size = TS_PLUGIN_API_MIN_STRUCT_SIZE; break;
    case 2: api.struct_size = SIZE_MAX; break;
    case 3: api.struct_size = g_script->ConsumeIntegral<size_t>(); break;
    case 4: api.struct_size = offsetof(TsPluginApi, Error_Destroy) + 8 * (Byte() % 48); break;
    default: break;
  }
  const uint8_t v = Byte();
  if (v % 4 == 1) api.abi_version.major = g_script->ConsumeIntegral<uint32_t>();
  if (v % 4 == 2) api.abi_version.minor = g_script->ConsumeIntegral<uint32_t>();
  // Entry points left out: bit i of the mask drops the i-th pointer.
  uint64_t missing = Byte() >= 192 ? g_script->ConsumeIntegral<uint64_t>() : 0;
  auto* slots = reinterpret_cast<void**>(reinterpret_cast<char*>(&api) + offsetof(TsPluginApi, Error_Destroy));
  const size_t nslots = (sizeof(TsPluginApi) - offsetof(TsPluginApi, Error_Destroy)) / sizeof(void*);
  for (size_t i = 0; i < nslots && i < 64; ++i)
    if ((missing >> i) & 1) slots[i] = nullptr;
  size_t bytes = api.struct_size;
  if (bytes < offsetof(TsPluginApi, Error_Destroy)) bytes = offsetof(TsPluginApi, Error_Destroy);
  if (bytes > sizeof(TsPluginApi)) bytes = sizeof(TsPluginApi);
  g_table.reset(new unsigned char[bytes]);
  std::memcpy(g_table.get(), &api, bytes);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The core's warnings about this plugin's answers are expected by the
  // thousand: off unless asked for.
  setenv("TESSERA_LOG", "off", /*overwrite=*/0);
  tessera::RegisterStaticPlugin("fuzz", &GetApi);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider script(data, size);
  g_script = &script;
  g_strings.clear();
  g_next_buffer = g_next_stream = g_next_event = 0;
  MakeTable();

  tessera::RuntimeOptions options;
  options.read_environment = false;
  options.isolate_plugins = false;
  options.backend = "fuzz";
  options.validate = 0;
  if (Byte() >= 128) {
    // One option for Client_Create, by a name the plugin may or may not list.
    const std::string name = g_script->ConsumeRandomLengthString(16);
    switch (Byte() % 3) {
      case 0: options.plugin_options["fuzz"].push_back(tessera::OptionValue::Int(name, g_script->ConsumeIntegral<int64_t>())); break;
      case 1: options.plugin_options["fuzz"].push_back(tessera::OptionValue::String(name, g_script->ConsumeRandomLengthString(16))); break;
      default: options.plugin_options["fuzz"].push_back(tessera::OptionValue::Bool(name, Byte() & 1)); break;
    }
  }
  {
    auto rt = tessera::Runtime::Create(options);
    if (rt.ok()) {
      const auto& devices = rt->devices();
      for (size_t i = 0; i < devices.size() && i < 2; ++i) {
        const tessera::Device& d = devices[i];
        (void)d.info();
        const uint64_t bytes = 1 + g_script->ConsumeIntegralInRange<uint64_t>(0, kHostBytes + 64);
        auto buffer = d.allocate(bytes, static_cast<TsBufferKind>(Byte() % 3));
        if (buffer.ok()) {
          std::vector<unsigned char> host(bytes, 0x5a);
          (void)tessera::copy(tessera::MemoryRef(*buffer), tessera::MemoryRef(host.data()), bytes);
          (void)tessera::copy(tessera::MemoryRef(host.data()), tessera::MemoryRef(*buffer), bytes);
          (void)tessera::memset(*buffer, 0, 1, bytes);
        }
        auto stream = d.create_stream();
        auto event = d.create_event();
        if (stream.ok()) {
          if (event.ok()) {
            (void)stream->record(*event);
            (void)d.default_stream().wait(*event);
          }
          (void)stream->query();
          (void)stream->synchronize();
          (void)stream->destroy();
        }
        (void)d.synchronize();
        if (buffer.ok()) (void)buffer->destroy();
      }
    }
  }
  g_script = nullptr;
  return 0;
}
