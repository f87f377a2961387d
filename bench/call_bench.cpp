// abi_call: the cost the C++ core adds to one cheap call.  Both benchmarks
// ask the same idle stream whether it is idle; core goes through
// tessera::Stream::query(), direct calls the plugin's Stream_Query entry
// point with the raw handle.  core - direct is the core's overhead per call.
#include "bench_env.hpp"

namespace tessera_bench {
namespace {

void BM_AbiCallCore(benchmark::State& state) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  if (!CheckOrSkip(state, env->stream.synchronize(), "synchronize")) return;
  for (auto _ : state) {
    tessera::StatusOr<bool> idle = env->stream.query();
    benchmark::DoNotOptimize(idle);
  }
  state.SetItemsProcessed(state.iterations());
}

// Destroys a plugin error, returning its message for a skip reason.
std::string TakeError(const TsPluginApi* api, TsError* error) {
  TsError_Message_Args m{};
  m.struct_size = TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE;
  m.error = error;
  std::string message = "unknown plugin error";
  if (api->Error_Message && !api->Error_Message(&m) && m.message)
    message.assign(m.message, m.message_size);
  TsError_Destroy_Args d{};
  d.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
  d.error = error;
  if (api->Error_Destroy) api->Error_Destroy(&d);
  return message;
}

void BM_AbiCallDirect(benchmark::State& state) {
  BenchEnv* env = EnvOrSkip(state);
  if (!env) return;
  if (!CheckOrSkip(state, env->stream.synchronize(), "synchronize")) return;
  const TsPluginApi* api = env->runtime.plugin_api();
  TsStream* raw = env->stream.raw();
  if (api == nullptr || raw == nullptr ||
      api->struct_size < TS_STRUCT_SIZE(TsPluginApi, Stream_Query) ||
      api->Stream_Query == nullptr) {
    state.SkipWithError("the plugin table has no Stream_Query entry point");
    return;
  }
  for (auto _ : state) {
    // Filled every call, as the core must do.
    TsStream_Query_Args args;
    args.struct_size = TS_STREAM_QUERY_ARGS_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.stream = raw;
    args.idle = 0;
    TsError* error = api->Stream_Query(&args);
    if (error != nullptr) {
      const std::string message = "Stream_Query: " + TakeError(api, error);
      state.SkipWithError(message.c_str());
      break;
    }
    benchmark::DoNotOptimize(args.idle);
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

void RegisterCallBenchmarks(const RegisterOptions& o) {
  using benchmark::RegisterBenchmark;
  Configure(RegisterBenchmark("abi_call/core", BM_AbiCallCore), o, 0.1);
  Configure(RegisterBenchmark("abi_call/direct", BM_AbiCallDirect), o, 0.1);
}

}  // namespace tessera_bench
