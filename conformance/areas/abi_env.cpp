// The objects the invalid-argument cases of the "abi" area use (abi_util.hpp),
// made through the plugin's table on first use and destroyed with the case.
#include <cstring>

#include "areas/abi_util.hpp"

namespace tessera::cts::abi {
namespace {

alignas(64) unsigned char g_zeros[4096];  // never written: not an object

template <class A>
A Args() {
  A a{};
  a.struct_size = sizeof(A);
  return a;
}

std::string MessageOf(const TsPluginApi* api, TsError* e) {
  auto m = Args<TsError_Message_Args>();
  m.error = e;
  if (api->Error_Message(&m) != nullptr || m.message == nullptr) return "(no message)";
  return std::string(m.message, m.message_size);
}

}  // namespace

Env::Env(const Runtime& rt, const std::vector<tessera::Device>& devices)
    : api(rt.plugin_own_api()), runtime_(rt), devices_(devices), client_(rt.raw_client()) {}

void* Env::foreign() const { return g_zeros; }

bool Env::Require(bool cond, const std::string& capability) {
  if (!cond && unsupported.empty()) unsupported = capability;
  return cond;
}

TsError* Env::Destroy(TsError* e) {
  if (e) {
    auto d = Args<TsError_Destroy_Args>();
    d.error = e;
    api->Error_Destroy(&d);
  }
  return nullptr;
}

void Env::Fail(const std::string& what, TsError* e) {
  if (setup_error.empty())
    setup_error = what + ": " + (e ? MessageOf(api, e) : std::string("no object"));
  Destroy(e);
}

TsDevice* Env::device2() {
  if (!Require(devices_.size() >= 2, "devices>=2 (for cpu: TESSERA_CPU_DEVICES)")) return nullptr;
  return devices_[1].raw();
}

// Null with *error empty when the plugin has no Buffer_Allocate (the case is
// unsupported), with *error set when the call failed (the case fails).
static TsBuffer* AllocateOn(Env& env, TsDevice* dev, std::string* error) {
  error->clear();
  auto a = Args<TsBuffer_Allocate_Args>();
  a.device = dev;
  a.size = 1024;
  a.kind = TS_BUFFER_DEVICE;
  if (!env.Has(&TsPluginApi::Buffer_Allocate, "Buffer_Allocate")) return nullptr;
  if (TsError* e = env.api->Buffer_Allocate(&a)) {
    *error = "Buffer_Allocate";
    auto d = Args<TsError_Destroy_Args>();
    d.error = e;
    env.api->Error_Destroy(&d);
    return nullptr;
  }
  return a.buffer;
}

// As AllocateOn, for Stream_Create.
static TsStream* StreamOn(Env& env, TsDevice* dev, std::string* error) {
  error->clear();
  auto a = Args<TsStream_Create_Args>();
  a.device = dev;
  if (!env.Has(&TsPluginApi::Stream_Create, "Stream_Create")) return nullptr;
  if (TsError* e = env.api->Stream_Create(&a)) {
    *error = "Stream_Create";
    auto d = Args<TsError_Destroy_Args>();
    d.error = e;
    env.api->Error_Destroy(&d);
    return nullptr;
  }
  return a.stream;
}

TsBuffer* Env::buffer() {
  std::string err;
  if (!buffer_ && !(buffer_ = AllocateOn(*this, device(), &err)) && !err.empty()) Fail(err, nullptr);
  return buffer_;
}

TsBuffer* Env::buffer2() {
  std::string err;
  if (!buffer2_ && device2() && !(buffer2_ = AllocateOn(*this, device2(), &err)) && !err.empty())
    Fail(err, nullptr);
  return buffer2_;
}

TsStream* Env::stream() {
  std::string err;
  if (!stream_ && !(stream_ = StreamOn(*this, device(), &err)) && !err.empty()) Fail(err, nullptr);
  return stream_;
}

TsStream* Env::stream2() {
  std::string err;
  if (!stream2_ && device2() && !(stream2_ = StreamOn(*this, device2(), &err)) && !err.empty())
    Fail(err, nullptr);
  return stream2_;
}

TsStream* Env::default_stream() {
  auto a = Args<TsDevice_GetDefaultStream_Args>();
  a.device = device();
  if (!Has(&TsPluginApi::Device_GetDefaultStream, "Device_GetDefaultStream")) return nullptr;
  if (TsError* e = api->Device_GetDefaultStream(&a)) Fail("Device_GetDefaultStream", e);
  return a.stream;
}

TsEvent* Env::event() {
  if (event_) return event_;
  auto a = Args<TsEvent_Create_Args>();
  a.device = device();
  if (!Has(&TsPluginApi::Event_Create, "Event_Create")) return nullptr;
  if (TsError* e = api->Event_Create(&a)) Fail("Event_Create", e);
  else events_.push_back(event_ = a.event);
  return event_;
}

TsEvent* Env::recorded_event(bool timing) {
  TsEvent*& slot = recorded_[timing ? 0 : 1];
  if (slot) return slot;
  auto a = Args<TsEvent_Create_Args>();
  a.device = device();
  a.flags = timing ? 0 : TS_EVENT_DISABLE_TIMING;
  if (!Has(&TsPluginApi::Event_Create, "Event_Create") || !Has(&TsPluginApi::Event_Record, "Event_Record") ||
      !Has(&TsPluginApi::Event_Synchronize, "Event_Synchronize"))
    return nullptr;
  if (TsError* e = api->Event_Create(&a)) {
    Fail("Event_Create", e);
    return nullptr;
  }
  events_.push_back(a.event);
  auto r = Args<TsEvent_Record_Args>();
  r.event = a.event;
  r.stream = stream();
  if (!r.stream) return nullptr;
  if (TsError* e = api->Event_Record(&r)) {
    Fail("Event_Record", e);
    return nullptr;
  }
  auto s = Args<TsEvent_Synchronize_Args>();
  s.event = a.event;
  if (TsError* e = api->Event_Synchronize(&s)) {
    Fail("Event_Synchronize", e);
    return nullptr;
  }
  return slot = a.event;
}

void* Env::pinned() {
  if (pinned_) return pinned_;
  auto a = Args<TsHost_Allocate_Args>();
  a.client = client_;
  a.size = 4096;
  if (!Has(&TsPluginApi::Host_Allocate, "Host_Allocate")) return nullptr;
  if (TsError* e = api->Host_Allocate(&a)) Fail("Host_Allocate", e);
  return pinned_ = a.pointer;
}

TsExecutable* Env::executable() {
  if (executable_) return executable_;
  const KernelModule* m = ShippedModuleFor(info());
  if (!Require(m != nullptr, "executable_formats (none of the suite's formats)")) return nullptr;
  if (GlobalConfig().kernels_dir.empty()) {
    Fail("the conformance kernel modules were not found (TESSERA_CTS_KERNELS_DIR)", nullptr);
    return nullptr;
  }
  const std::string path = KernelModulePath(*m, "fill_u32");
  auto a = Args<TsExecutable_Load_Args>();
  a.device = device();
  a.format = m->format;
  a.path = path.c_str();
  if (!Has(&TsPluginApi::Executable_Load, "Executable_Load")) return nullptr;
  if (TsError* e = api->Executable_Load(&a)) Fail("Executable_Load " + path, e);
  return executable_ = a.executable;
}

TsKernel* Env::kernel() {
  if (kernel_) return kernel_;
  auto a = Args<TsExecutable_GetKernel_Args>();
  a.executable = executable();
  if (!a.executable) return nullptr;
  a.name = "fill_u32";
  if (!Has(&TsPluginApi::Executable_GetKernel, "Executable_GetKernel")) return nullptr;
  if (TsError* e = api->Executable_GetKernel(&a)) {
    Fail("Executable_GetKernel fill_u32", e);
    return nullptr;
  }
  const TsDim3 r = a.required_group_size;
  kernel_group_ = r.x && r.y && r.z ? r : TsDim3{1, 1, 1};
  return kernel_ = a.kernel;
}

TsGraph* Env::graph() {
  if (graph_) return graph_;
  if (!Require(info().graphs, "graphs")) return nullptr;
  if (!Has(&TsPluginApi::Stream_BeginCapture, "Stream_BeginCapture") ||
      !Has(&TsPluginApi::Stream_EndCapture, "Stream_EndCapture") || !Has(&TsPluginApi::Memset, "Memset"))
    return nullptr;
  std::string err;
  if (!capture_stream_ && !(capture_stream_ = StreamOn(*this, device(), &err))) {
    if (!err.empty()) Fail(err, nullptr);
    return nullptr;
  }
  auto b = Args<TsStream_BeginCapture_Args>();
  b.stream = capture_stream_;
  if (TsError* e = api->Stream_BeginCapture(&b)) {
    Fail("Stream_BeginCapture", e);
    return nullptr;
  }
  auto m = Args<TsMemset_Args>();
  m.buffer = buffer();
  m.size = 64;
  m.stream = capture_stream_;
  TsError* me = m.buffer ? api->Memset(&m) : nullptr;
  auto end = Args<TsStream_EndCapture_Args>();
  end.stream = capture_stream_;
  TsError* ee = api->Stream_EndCapture(&end);
  if (me) Fail("Memset while capturing", me);
  if (ee) Fail("Stream_EndCapture", ee);
  return graph_ = end.graph;
}

TsGraphExec* Env::graph_exec() {
  if (graph_exec_) return graph_exec_;
  auto a = Args<TsGraph_Instantiate_Args>();
  a.graph = graph();
  if (!a.graph || !Has(&TsPluginApi::Graph_Instantiate, "Graph_Instantiate")) return nullptr;
  if (TsError* e = api->Graph_Instantiate(&a)) Fail("Graph_Instantiate", e);
  return graph_exec_ = a.exec;
}

TsCommunicator* Env::communicator() {
  if (communicator_) return communicator_;
  if (!Require(info().collectives != 0, "collectives")) return nullptr;
  TsDevice* devs[1] = {device()};
  auto a = Args<TsCommunicator_Create_Args>();
  a.client = client_;
  a.devices = devs;
  a.num_devices = 1;
  if (!Has(&TsPluginApi::Communicator_Create, "Communicator_Create")) return nullptr;
  if (TsError* e = api->Communicator_Create(&a)) Fail("Communicator_Create", e);
  return communicator_ = a.communicator;
}

TsClient* Env::other_client() {
  if (other_client_) return other_client_;
  auto a = Args<TsClient_Create_Args>();
  if (TsError* e = api->Client_Create(&a)) Fail("Client_Create (a second client)", e);
  return other_client_ = a.client;
}

TsDevice* Env::other_device() {
  TsClient* c = other_client();
  if (!c) return nullptr;
  auto a = Args<TsClient_GetDevices_Args>();
  a.client = c;
  if (TsError* e = api->Client_GetDevices(&a)) {
    Fail("Client_GetDevices (the second client)", e);
    return nullptr;
  }
  if (a.num_devices == 0 || a.devices == nullptr) {
    Fail("the second client has no device", nullptr);
    return nullptr;
  }
  return a.devices[0];
}

TsBuffer* Env::other_buffer() {
  std::string err;
  if (!other_buffer_) {
    TsDevice* d = other_device();
    if (d && !(other_buffer_ = AllocateOn(*this, d, &err)) && !err.empty()) Fail(err + " (second client)", nullptr);
  }
  return other_buffer_;
}

TsStream* Env::other_stream() {
  std::string err;
  if (!other_stream_) {
    TsDevice* d = other_device();
    if (d && !(other_stream_ = StreamOn(*this, d, &err)) && !err.empty()) Fail(err + " (second client)", nullptr);
  }
  return other_stream_;
}

TsError* Env::error_object() {
  // Client_GetDevices (required of every plugin) of a NULL client: an error.
  auto a = Args<TsClient_GetDevices_Args>();
  a.client = nullptr;
  TsError* e = api->Client_GetDevices(&a);
  if (e == nullptr) Fail("Client_GetDevices of a NULL client succeeded", nullptr);
  else errors_.push_back(e);
  return e;
}

std::string Env::compile_target() {
  auto a = Args<TsCompiler_GetTargets_Args>();
  TsError* e = Invoke(&TsPluginApi::Compiler_GetTargets, "Compiler_GetTargets", &a);
  if (e) {
    Fail("Compiler_GetTargets", e);
    return "";
  }
  if (!Require(a.num_targets > 0 && a.targets && a.targets[0].name, "compiler")) return "";
  return a.targets[0].name;
}

Env::~Env() {
  for (TsError* e : errors_) Destroy(e);
  // Everything queued first, then the objects in reverse order of need.
  for (const tessera::Device& d : devices_) {
    auto s = Args<TsDevice_Synchronize_Args>();
    s.device = d.raw();
    if (Present(&TsPluginApi::Device_Synchronize)) Destroy(api->Device_Synchronize(&s));
  }
  if (communicator_) {
    auto a = Args<TsCommunicator_Destroy_Args>();
    a.communicator = communicator_;
    if (Present(&TsPluginApi::Communicator_Destroy)) Destroy(api->Communicator_Destroy(&a));
  }
  if (graph_exec_) {
    auto a = Args<TsGraphExec_Destroy_Args>();
    a.exec = graph_exec_;
    if (Present(&TsPluginApi::GraphExec_Destroy)) Destroy(api->GraphExec_Destroy(&a));
  }
  if (graph_) {
    auto a = Args<TsGraph_Destroy_Args>();
    a.graph = graph_;
    if (Present(&TsPluginApi::Graph_Destroy)) Destroy(api->Graph_Destroy(&a));
  }
  if (executable_) {
    auto a = Args<TsExecutable_Destroy_Args>();
    a.executable = executable_;
    if (Present(&TsPluginApi::Executable_Destroy)) Destroy(api->Executable_Destroy(&a));
  }
  for (TsEvent* e : events_) {
    auto a = Args<TsEvent_Destroy_Args>();
    a.event = e;
    if (Present(&TsPluginApi::Event_Destroy)) Destroy(api->Event_Destroy(&a));
  }
  for (TsStream* s : {stream_, stream2_, capture_stream_, other_stream_}) {
    if (!s) continue;
    auto a = Args<TsStream_Destroy_Args>();
    a.stream = s;
    if (Present(&TsPluginApi::Stream_Destroy)) Destroy(api->Stream_Destroy(&a));
  }
  for (TsBuffer* b : {buffer_, buffer2_, other_buffer_}) {
    if (!b) continue;
    auto a = Args<TsBuffer_Free_Args>();
    a.buffer = b;
    if (Present(&TsPluginApi::Buffer_Free)) Destroy(api->Buffer_Free(&a));
  }
  if (pinned_) {
    auto a = Args<TsHost_Free_Args>();
    a.client = client_;
    a.pointer = pinned_;
    if (Present(&TsPluginApi::Host_Free)) Destroy(api->Host_Free(&a));
  }
  if (other_client_) {
    auto a = Args<TsClient_Destroy_Args>();
    a.client = other_client_;
    Destroy(api->Client_Destroy(&a));
  }
}

}  // namespace tessera::cts::abi
