// The "abi" area's invalid-argument cases of communicators (abi_util.hpp).
// The valid call is an all_reduce (sum, f32) of 16 elements on a
// communicator of one rank: buffer() to itself on stream().
#include "areas/abi_util.hpp"

namespace tessera::cts::abi {
namespace {

using A_Create = TsCommunicator_Create_Args;
using A_Destroy = TsCommunicator_Destroy_Args;
using A_Coll = TsCommunicator_Collective_Args;
using A_Id = TsCommunicator_CreateUniqueId_Args;

// A Communicator_Create across processes (MINOR 4) whose other fields are
// valid: the checks of ranks and num_ranks come before the id is read, so
// zeros serve as the id.  `spans`: whether the case needs a plugin that
// reports TS_COLLECTIVE_CAP_MULTI_PROCESS (else one that does not).
bool AcrossProcesses(Env& env, A_Create& a, bool spans) {
  const bool has = env.info().collectives & TS_COLLECTIVE_CAP_MULTI_PROCESS;
  if (!env.Require(has == spans, spans ? "collectives.multi_process" : "a plugin without multi_process"))
    return false;
  a.unique_id = env.Keep(std::vector<uint8_t>(TS_UNIQUE_ID_BYTES, 0))->data();
  a.ranks = env.Keep(std::vector<uint32_t>{0})->data();
  a.num_ranks = 2;
  return true;
}

void ValidCreate(Env& env, A_Create& a) {
  if (!env.Require(env.info().collectives != 0, "collectives")) return;
  a.client = env.client();
  std::vector<TsDevice*>* devs = env.Keep(std::vector<TsDevice*>{env.device()});
  a.devices = devs->data();
  a.num_devices = 1;
}

// One element of the case's device list.
TsDevice*& DeviceAt(const A_Create& a, size_t i) { return const_cast<TsDevice**>(a.devices)[i]; }

void ValidCollective(Env& env, A_Coll& a) {
  if (!env.Require(env.info().collectives & TS_COLLECTIVE_CAP_ALL_REDUCE,
                   "collectives.all_reduce"))
    return;
  a.communicator = env.communicator();
  a.op = TS_COLLECTIVE_ALL_REDUCE;
  a.reduce_op = TS_REDUCE_SUM;
  a.dtype = TS_DTYPE_F32;
  a.count = 16;
  TsMemoryRef ref{env.buffer(), 0, nullptr};
  a.send = env.Keep(ref);
  a.recv = env.Keep(ref);
  a.streams = env.Keep(std::vector<TsStream*>{env.stream()})->data();
}
TsMemoryRef& Ref(const TsMemoryRef* r) { return const_cast<TsMemoryRef&>(*r); }

}  // namespace

void AddCollectiveCases(CaseList* out) {
  {
    EntryCases<A_Create> c(out, "Communicator_Create", &TsPluginApi::Communicator_Create,
                           TS_COMMUNICATOR_CREATE_ARGS_MIN_STRUCT_SIZE, ValidCreate);
    c.Header();
    c.Handle("Client", &A_Create::client);
    c.Add("DevicesNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Create& a) { a.devices = nullptr; });
    c.Add("NumDevicesZero", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Create& a) { a.num_devices = 0; });
    c.Add("DeviceNull", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Create& a) { DeviceAt(a, 0) = nullptr; });
    c.Add("DeviceForeign", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Create& a) {
      DeviceAt(a, 0) = static_cast<TsDevice*>(env.foreign());
    });
    c.Add("DeviceWrongType", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Create& a) {
      DeviceAt(a, 0) = EntryCases<A_Create>::WrongType<TsDevice>(env);
    });
    c.Add("DeviceTwice", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      a.devices = env.Keep(std::vector<TsDevice*>{env.device(), env.device()})->data();
      a.num_devices = 2;
    });
    c.Add("DeviceOfOtherClient", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_Create& a) { DeviceAt(a, 0) = env.other_device(); });
    // MINOR 4: across processes.
    c.Add("UniqueIdWithoutMultiProcess", TS_ERROR_UNSUPPORTED,
          [](Env& env, A_Create& a) { AcrossProcesses(env, a, false); });
    c.Add("RanksNull", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      if (AcrossProcesses(env, a, true)) a.ranks = nullptr;
    });
    c.Add("NumRanksBelowDevices", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      if (AcrossProcesses(env, a, true)) a.num_ranks = 0;
    });
    c.Add("RankOutOfRange", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      if (AcrossProcesses(env, a, true)) a.ranks = env.Keep(std::vector<uint32_t>{2})->data();
    });
  }
  {
    // MINOR 4, optional: "unsupported: entry point" where the plugin has none.
    EntryCases<A_Id> c(out, "Communicator_CreateUniqueId", &TsPluginApi::Communicator_CreateUniqueId,
                       TS_COMMUNICATOR_CREATEUNIQUEID_ARGS_STRUCT_SIZE,
                       [](Env& env, A_Id& a) { a.client = env.client(); });
    c.Header();
    c.Handle("Client", &A_Id::client);
  }
  {
    EntryCases<A_Destroy> c(out, "Communicator_Destroy", &TsPluginApi::Communicator_Destroy,
                            TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE,
                            [](Env& env, A_Destroy& a) { a.communicator = env.communicator(); });
    c.Header();
    c.Handle("Communicator", &A_Destroy::communicator);
  }
  {
    EntryCases<A_Coll> c(out, "Communicator_Collective", &TsPluginApi::Communicator_Collective,
                         TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE, ValidCollective);
    c.Header();
    c.Handle("Communicator", &A_Coll::communicator);
    c.Add("OpUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Coll& a) { a.op = static_cast<TsCollectiveOp>(17); });
    c.Add("ReduceOpUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Coll& a) { a.reduce_op = static_cast<TsReduceOp>(17); });
    c.Add("DtypeUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Coll& a) { a.dtype = static_cast<TsDataType>(99); });
    c.Add("CountZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Coll& a) { a.count = 0; });
    c.Add("CountPastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Coll& a) { a.count = 257; });
    c.Add("CountWraps", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Coll& a) { a.count = (UINT64_MAX >> 2) + 2; });
    c.Add("SendOffsetPastTheEnd", TS_ERROR_OUT_OF_RANGE,
          [](Env&, A_Coll& a) { Ref(a.send).offset = 1000; });
    c.Add("SendNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Coll& a) { a.send = nullptr; });
    c.Add("RecvNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Coll& a) { a.recv = nullptr; });
    c.Add("SendBufferNull", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Coll& a) { Ref(a.send).buffer = nullptr; });
    c.Add("SendBufferForeign", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Coll& a) {
      Ref(a.send).buffer = static_cast<TsBuffer*>(env.foreign());
    });
    c.Add("RecvBufferWrongType", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Coll& a) {
      Ref(a.recv).buffer = EntryCases<A_Coll>::WrongType<TsBuffer>(env);
    });
    c.Add("SendBufferOfOtherDevice", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_Coll& a) { Ref(a.send).buffer = env.buffer2(); });
    c.Add("StreamsNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Coll& a) { a.streams = nullptr; });
    c.Add("StreamNull", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Coll& a) { const_cast<TsStream**>(a.streams)[0] = nullptr; });
    c.Add("StreamForeign", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Coll& a) {
      const_cast<TsStream**>(a.streams)[0] = static_cast<TsStream*>(env.foreign());
    });
    c.Add("StreamOfOtherDevice", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Coll& a) {
      const_cast<TsStream**>(a.streams)[0] = env.stream2();
    });
    c.Add("BroadcastRootOutOfRange", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Coll& a) {
      env.Require(env.info().collectives & TS_COLLECTIVE_CAP_BROADCAST, "collectives.broadcast");
      a.op = TS_COLLECTIVE_BROADCAST;
      a.root = 1;
    });
  }
}

}  // namespace tessera::cts::abi
