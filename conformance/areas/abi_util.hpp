// The invalid-argument matrix of the "abi" area (abi_test.cpp): one
// case per (entry point, invalid argument), calling the plugin's function
// table directly (Runtime::plugin_own_api()), never through the core, which
// checks many of these itself, nor through a layer stacked over the plugin
// (TESSERA_VALIDATE).
//
// A case starts from a VALID Args struct (the entry's builder), changes one
// thing, calls the entry and expects the code the ABI documents
// (core/include/tessera/plugin.h, docs/abi.md):
//   - args NULL, struct_size 0 or below the ABI x.0 size: INVALID_ARGUMENT;
//   - a NULL handle: INVALID_ARGUMENT; a handle that is not a live object of
//     this plugin (a block of zeros, or a live object of another type):
//     INVALID_HANDLE;
//   - NULL outputs, sizes of 0, bad enum values and flags: INVALID_ARGUMENT;
//   - a range past the end of a buffer: OUT_OF_RANGE;
//   - objects of another device or client where the entry needs one:
//     INVALID_ARGUMENT.
// The objects a case needs are made through the raw ABI on first use (Env)
// and destroyed with the test.
#ifndef TESSERA_CONFORMANCE_AREAS_ABI_UTIL_HPP_
#define TESSERA_CONFORMANCE_AREAS_ABI_UTIL_HPP_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cts/cts.hpp"

namespace tessera::cts::abi {

// The objects of one case, created on first use.  A creation that fails
// sets setup_error (the case then fails, it never runs with a NULL that
// would pass for the invalid argument under test).  A missing capability
// sets unsupported (the case is skipped with it).
class Env {
 public:
  Env(const Runtime& rt, const std::vector<tessera::Device>& devices);
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  const TsPluginApi* api;
  std::string setup_error;
  std::string unsupported;

  // False (and `unsupported` set to `capability`) when !cond.
  bool Require(bool cond, const std::string& capability);

  const DeviceInfo& info() const { return devices_[0].info(); }
  TsClient* client() const { return client_; }
  TsDevice* device() const { return devices_[0].raw(); }
  // The second device of the client (Require(devices>=2) first).
  TsDevice* device2();
  // A block of zeros: not a live object of any plugin.
  void* foreign() const;

  TsBuffer* buffer();       // 1 KiB device buffer on device()
  TsBuffer* buffer2();      // 1 KiB on device2()
  TsStream* stream();       // a stream of device()
  TsStream* stream2();      // a stream of device2()
  TsStream* default_stream();
  TsEvent* event();         // created, never recorded
  TsEvent* recorded_event(bool timing = true);  // recorded on stream(), complete
  void* pinned();           // 4 KiB of Host_Allocate
  TsExecutable* executable();  // the suite's module with fill_u32 (Require: formats)
  TsKernel* kernel();          // fill_u32 of executable()
  TsDim3 kernel_group() const { return kernel_group_; }
  TsGraph* graph();            // one memset captured (Require: graphs)
  TsGraphExec* graph_exec();
  TsCommunicator* communicator();  // over device() (Require: collectives)
  // A second client of the same plugin, and objects of it.
  TsClient* other_client();
  TsDevice* other_device();
  TsBuffer* other_buffer();
  TsStream* other_stream();

  // An error object of the plugin (for Error_Message / Error_GetCode).
  TsError* error_object();
  // Keeps `value` alive until the case ends (what an Args struct points at).
  template <class T>
  T* Keep(T value) {
    auto p = std::make_shared<T>(std::move(value));
    keep_.push_back(p);
    return p.get();
  }
  // The first compile target's name, or "" (Require: compiler).
  std::string compile_target();

  // Whether the plugin provides `entry` (a TsPluginApi member): not NULL
  // and within its table.  Only the eight entries docs/abi.md requires may
  // be called without asking.
  template <class A>
  bool Present(TsError* (*TsPluginApi::*entry)(A*)) const {
    const size_t end = reinterpret_cast<const char*>(&(api->*entry)) -
                       reinterpret_cast<const char*>(api) + sizeof(api->*entry);
    return end <= api->struct_size && api->*entry != nullptr;
  }
  // Present, or false with unsupported set to "entry point <name>".
  template <class A>
  bool Has(TsError* (*TsPluginApi::*entry)(A*), const char* name) {
    return Require(Present(entry), std::string("entry point ") + name);
  }

  // Calls `entry` with `args`, or sets unsupported when the plugin does
  // not provide it.
  template <class A>
  TsError* Invoke(TsError* (*TsPluginApi::*entry)(A*), const char* name, A* args) {
    if (!Has(entry, name)) return nullptr;
    return (api->*entry)(args);
  }

 private:
  void Fail(const std::string& what, TsError* e);
  TsError* Destroy(TsError* e);

  std::vector<std::shared_ptr<void>> keep_;
  std::vector<TsError*> errors_;
  Runtime runtime_;
  std::vector<tessera::Device> devices_;
  TsClient* client_;
  TsBuffer* buffer_ = nullptr;
  TsBuffer* buffer2_ = nullptr;
  TsStream* stream_ = nullptr;
  TsStream* stream2_ = nullptr;
  std::vector<TsEvent*> events_;
  TsEvent* event_ = nullptr;
  TsEvent* recorded_[2] = {nullptr, nullptr};
  void* pinned_ = nullptr;
  TsExecutable* executable_ = nullptr;
  TsKernel* kernel_ = nullptr;
  TsDim3 kernel_group_{1, 1, 1};
  TsStream* capture_stream_ = nullptr;
  TsGraph* graph_ = nullptr;
  TsGraphExec* graph_exec_ = nullptr;
  TsCommunicator* communicator_ = nullptr;
  TsClient* other_client_ = nullptr;
  TsBuffer* other_buffer_ = nullptr;
  TsStream* other_stream_ = nullptr;
};

// One case of the matrix.
struct AbiCase {
  std::string name;  // <Entry>_<what>: the GoogleTest parameter name
  TsErrorCode expected;
  std::function<TsError*(Env&)> run;
};
using CaseList = std::vector<AbiCase>;

// The cases of one entry point: each starts from `valid` and changes one
// field.  Header() adds the three cases every entry has (args NULL,
// struct_size 0, struct_size one below ABI x.0's).
template <class A>
class EntryCases {
 public:
  using Entry = TsError* (*TsPluginApi::*)(A*);
  using Fill = std::function<void(Env&, A&)>;
  EntryCases(CaseList* out, const char* name, Entry entry, size_t min_size, Fill valid)
      : out_(out), name_(name), entry_(entry), min_size_(min_size), valid_(std::move(valid)) {}

  void Add(const std::string& what, TsErrorCode code, Fill mutate) {
    const char* name = name_;
    Entry entry = entry_;
    Fill valid = valid_;
    out_->push_back({std::string(name_) + "_" + what, code,
                     [=](Env& env) -> TsError* {
                       A a{};
                       a.struct_size = sizeof(A);
                       valid(env, a);
                       mutate(env, a);
                       if (!env.setup_error.empty() || !env.unsupported.empty()) return nullptr;
                       return env.Invoke(entry, name, &a);
                     }});
  }
  void Header() {
    const char* name = name_;
    Entry entry = entry_;
    out_->push_back({std::string(name_) + "_ArgsNull", TS_ERROR_INVALID_ARGUMENT,
                     [=](Env& env) { return env.Invoke(entry, name, static_cast<A*>(nullptr)); }});
    Add("StructSizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A& a) { a.struct_size = 0; });
    const size_t small = min_size_ - 1;
    Add("StructSizeTooSmall", TS_ERROR_INVALID_ARGUMENT,
        [small](Env&, A& a) { a.struct_size = small; });
  }
  // A handle field: NULL is INVALID_ARGUMENT; zeros and a live object of
  // another type are INVALID_HANDLE.
  template <class H>
  void Handle(const std::string& field, H* A::*member) {
    Add(field + "Null", TS_ERROR_INVALID_ARGUMENT, [member](Env&, A& a) { a.*member = nullptr; });
    Add(field + "Foreign", TS_ERROR_INVALID_HANDLE,
        [member](Env& env, A& a) { a.*member = static_cast<H*>(env.foreign()); });
    Add(field + "WrongType", TS_ERROR_INVALID_HANDLE, [member](Env& env, A& a) {
      a.*member = WrongType<H>(env);
    });
  }
  // A handle field that may be NULL (a stream: synchronous; a device: the
  // host): only the foreign and wrong-type cases.
  template <class H>
  void OptionalHandle(const std::string& field, H* A::*member) {
    Add(field + "Foreign", TS_ERROR_INVALID_HANDLE,
        [member](Env& env, A& a) { a.*member = static_cast<H*>(env.foreign()); });
    Add(field + "WrongType", TS_ERROR_INVALID_HANDLE, [member](Env& env, A& a) {
      a.*member = WrongType<H>(env);
    });
  }

  // A live object of the plugin that is not an H.
  template <class H>
  static H* WrongType(Env& env) {
    void* other = std::is_same<H, TsBuffer>::value ? static_cast<void*>(env.stream())
                                                   : static_cast<void*>(env.buffer());
    return static_cast<H*>(other);
  }

 private:
  CaseList* out_;
  const char* name_;
  Entry entry_;
  size_t min_size_;
  Fill valid_;
};

// The matrix, by part of the ABI (abi_cases_*.cpp).
void AddClientCases(CaseList* out);     // plugin, client, device, errors
void AddMemoryCases(CaseList* out);     // buffers, host memory, copies, hints
void AddStreamCases(CaseList* out);     // streams, events, graphs
void AddKernelCases(CaseList* out);     // executables, kernels, compiler
void AddCollectiveCases(CaseList* out); // communicators

}  // namespace tessera::cts::abi

#endif  // TESSERA_CONFORMANCE_AREAS_ABI_UTIL_HPP_
