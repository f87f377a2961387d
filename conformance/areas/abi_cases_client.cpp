// The "abi" area's invalid-argument cases of the plugin, client, device and
// error entry points (abi_util.hpp).  Error_Destroy has none: like free(),
// it takes NULL, and it has no error of its own to report.
#include <cstring>

#include "areas/abi_util.hpp"

namespace tessera::cts::abi {
namespace {

using A_Info = TsPlugin_GetInfo_Args;
using A_Create = TsClient_Create_Args;
using A_CDestroy = TsClient_Destroy_Args;
using A_Devices = TsClient_GetDevices_Args;
using A_Props = TsDevice_GetProperties_Args;
using A_DefStream = TsDevice_GetDefaultStream_Args;
using A_DSync = TsDevice_Synchronize_Args;
using A_Msg = TsError_Message_Args;
using A_Code = TsError_GetCode_Args;

TsNamedValue Option(const char* name) {
  TsNamedValue v{};
  v.struct_size = TS_NAMED_VALUE_STRUCT_SIZE;
  v.name = name;
  v.type = TS_VALUE_STRING;
  v.string_value = "1";
  return v;
}

// The first option the plugin lists whose type is not a string, or NULL.
const TsOptionInfo* TypedOption(Env& env) {
  TsPlugin_GetInfo_Args a{};
  a.struct_size = sizeof a;
  if (TsError* e = env.api->Plugin_GetInfo(&a)) {
    TsError_Destroy_Args d{};
    d.struct_size = sizeof d;
    d.error = e;
    env.api->Error_Destroy(&d);
    return nullptr;
  }
  if (!TS_FIELD_PRESENT(&a, TsPlugin_GetInfo_Args, num_client_options)) return nullptr;
  for (size_t i = 0; i < a.num_client_options; ++i)
    if (a.client_options[i].type != TS_VALUE_STRING && a.client_options[i].name)
      return &a.client_options[i];
  return nullptr;
}

}  // namespace

void AddClientCases(CaseList* out) {
  {
    EntryCases<A_Info> c(out, "Plugin_GetInfo", &TsPluginApi::Plugin_GetInfo,
                         TS_PLUGIN_GETINFO_ARGS_MIN_STRUCT_SIZE, [](Env&, A_Info&) {});
    c.Header();
  }
  {
    // Each case would create a client if the plugin accepted it.
    EntryCases<A_Create> c(out, "Client_Create", &TsPluginApi::Client_Create,
                           TS_CLIENT_CREATE_ARGS_MIN_STRUCT_SIZE, [](Env&, A_Create&) {});
    c.Header();
    c.Add("OptionsNullWithCount", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Create& a) {
      a.options = nullptr;
      a.num_options = 1;
    });
    c.Add("OptionUnknown", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      a.options = env.Keep(Option("no_such_option_of_any_plugin"));
      a.num_options = 1;
    });
    c.Add("OptionNameNull", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      a.options = env.Keep(Option(nullptr));
      a.num_options = 1;
    });
    c.Add("OptionStructSizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      TsNamedValue v = Option("no_such_option_of_any_plugin");
      v.struct_size = 0;
      a.options = env.Keep(v);
      a.num_options = 1;
    });
    c.Add("OptionValueNotParsable", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      const TsOptionInfo* o = TypedOption(env);
      if (!env.Require(o != nullptr, "a client option of a non-string type")) return;
      TsNamedValue v = Option(o->name);
      v.string_value = "not a value of any type";
      a.options = env.Keep(v);
      a.num_options = 1;
    });
    c.Add("OptionTypeUnknown", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Create& a) {
      const TsOptionInfo* o = TypedOption(env);
      if (!env.Require(o != nullptr, "a client option of a non-string type")) return;
      TsNamedValue v = Option(o->name);
      v.type = static_cast<TsValueType>(77);
      a.options = env.Keep(v);
      a.num_options = 1;
    });
  }
  {
    EntryCases<A_CDestroy> c(out, "Client_Destroy", &TsPluginApi::Client_Destroy,
                             TS_CLIENT_DESTROY_ARGS_STRUCT_SIZE,
                             [](Env& env, A_CDestroy& a) { a.client = env.other_client(); });
    c.Header();
    c.Handle("Client", &A_CDestroy::client);
  }
  {
    EntryCases<A_Devices> c(out, "Client_GetDevices", &TsPluginApi::Client_GetDevices,
                            TS_CLIENT_GETDEVICES_ARGS_STRUCT_SIZE,
                            [](Env& env, A_Devices& a) { a.client = env.client(); });
    c.Header();
    c.Handle("Client", &A_Devices::client);
  }
  {
    EntryCases<A_Props> c(out, "Device_GetProperties", &TsPluginApi::Device_GetProperties,
                          TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE, [](Env& env, A_Props& a) {
                            a.device = env.device();
                            TsDeviceProperties p{};
                            p.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
                            a.properties = env.Keep(p);
                          });
    c.Header();
    c.Handle("Device", &A_Props::device);
    c.Add("PropertiesNull", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Props& a) { a.properties = nullptr; });
    c.Add("PropertiesStructSizeZero", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Props& a) { a.properties->struct_size = 0; });
    c.Add("PropertiesStructSizeTooSmall", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Props& a) {
      a.properties->struct_size = TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE - 1;
    });
  }
  {
    EntryCases<A_DefStream> c(out, "Device_GetDefaultStream",
                              &TsPluginApi::Device_GetDefaultStream,
                              TS_DEVICE_GETDEFAULTSTREAM_ARGS_STRUCT_SIZE,
                              [](Env& env, A_DefStream& a) { a.device = env.device(); });
    c.Header();
    c.Handle("Device", &A_DefStream::device);
  }
  {
    EntryCases<A_DSync> c(out, "Device_Synchronize", &TsPluginApi::Device_Synchronize,
                          TS_DEVICE_SYNCHRONIZE_ARGS_STRUCT_SIZE,
                          [](Env& env, A_DSync& a) { a.device = env.device(); });
    c.Header();
    c.Handle("Device", &A_DSync::device);
  }
  {
    EntryCases<A_Msg> c(out, "Error_Message", &TsPluginApi::Error_Message,
                        TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE,
                        [](Env& env, A_Msg& a) { a.error = env.error_object(); });
    c.Header();
    c.Add("ErrorNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Msg& a) { a.error = nullptr; });
  }
  {
    EntryCases<A_Code> c(out, "Error_GetCode", &TsPluginApi::Error_GetCode,
                         TS_ERROR_GETCODE_ARGS_STRUCT_SIZE,
                         [](Env& env, A_Code& a) { a.error = env.error_object(); });
    c.Header();
    c.Add("ErrorNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Code& a) { a.error = nullptr; });
  }
}

}  // namespace tessera::cts::abi
