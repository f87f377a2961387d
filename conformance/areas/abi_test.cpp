// Area "abi": every entry point of the plugin ABI called directly (the
// plugin's function table, not the core) with each invalid argument its
// documentation names, one parameterized case per (entry, argument); each
// must return the documented error code, with a message, never crash, and
// leave the device usable.  The matrix is in abi_cases_*.cpp, what it
// covers in abi_util.hpp and docs/conformance.md.
#include <cstddef>
#include <ostream>

#include "areas/abi_util.hpp"

namespace tessera::cts::abi {

// GoogleTest prints a parameter with the case's name.
void PrintTo(const AbiCase& c, std::ostream* os) { *os << c.name; }

namespace {

const char* CodeName(TsErrorCode code) {
  switch (code) {
    case TS_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case TS_ERROR_NOT_FOUND: return "NOT_FOUND";
    case TS_ERROR_ALREADY_EXISTS: return "ALREADY_EXISTS";
    case TS_ERROR_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case TS_ERROR_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case TS_ERROR_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case TS_ERROR_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case TS_ERROR_INTERNAL: return "INTERNAL";
    case TS_ERROR_UNAVAILABLE: return "UNAVAILABLE";
    case TS_ERROR_UNSUPPORTED: return "UNSUPPORTED";
    case TS_ERROR_NOT_READY: return "NOT_READY";
    case TS_ERROR_INVALID_HANDLE: return "INVALID_HANDLE";
    case TS_ERROR_ABI_MISMATCH: return "ABI_MISMATCH";
    default: return "another code";
  }
}

const CaseList& AllCases() {
  static const CaseList cases = [] {
    CaseList out;
    AddClientCases(&out);
    AddMemoryCases(&out);
    AddStreamCases(&out);
    AddKernelCases(&out);
    AddCollectiveCases(&out);
    return out;
  }();
  return cases;
}

class Abi : public CtsTest, public ::testing::WithParamInterface<AbiCase> {};

TEST_P(Abi, Rejects) {
  const AbiCase& c = GetParam();
  // The plugin's own table, also under TESSERA_VALIDATE's layer.
  const TsPluginApi* api = runtime().plugin_own_api();
  ASSERT_NE(api, nullptr);
  TsErrorCode code{};
  std::string message;
  bool failed = false;
  std::string setup_error, unsupported;
  {
    Env env(runtime(), devices());
    TsError* e = c.run(env);
    setup_error = env.setup_error;
    unsupported = env.unsupported;
    if (e) {
      failed = true;
      TsError_GetCode_Args g{};
      g.struct_size = TS_ERROR_GETCODE_ARGS_STRUCT_SIZE;
      g.error = e;
      if (api->Error_GetCode(&g) == nullptr) code = g.code;
      TsError_Message_Args m{};
      m.struct_size = TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE;
      m.error = e;
      if (api->Error_Message(&m) == nullptr && m.message) message.assign(m.message, m.message_size);
      TsError_Destroy_Args d{};
      d.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
      d.error = e;
      api->Error_Destroy(&d);
    }
  }  // the case's objects are destroyed here
  ASSERT_TRUE(setup_error.empty()) << "setting up " << c.name << ": " << setup_error;
  if (!unsupported.empty()) CTS_UNSUPPORTED(unsupported);
  ASSERT_TRUE(failed) << c.name << " succeeded; expected " << CodeName(c.expected);
  EXPECT_EQ(code, c.expected) << c.name << " returned " << CodeName(code) << " (" << int(code)
                              << "), expected " << CodeName(c.expected) << ": " << message;
  EXPECT_FALSE(message.empty()) << c.name << " returned an error without a message";
  // The device still works.
  TsDevice_Synchronize_Args s{};
  s.struct_size = TS_DEVICE_SYNCHRONIZE_ARGS_STRUCT_SIZE;
  s.device = device().raw();
  const size_t sync_end = offsetof(TsPluginApi, Device_Synchronize) + sizeof(api->Device_Synchronize);
  if (api->Device_Synchronize && sync_end <= api->struct_size) {  // optional (docs/abi.md)
    EXPECT_EQ(api->Device_Synchronize(&s), nullptr) << "the device is unusable after " << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(, Abi, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<AbiCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tessera::cts::abi
