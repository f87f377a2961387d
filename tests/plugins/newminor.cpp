// Test plugin (g): a plugin "built against a newer MINOR" of the header.
//
// The real CPU plugin behind a table that claims ABI 1.99 and is longer than
// the core's TsPluginApi: three entry points appended by some future MINOR
// follow the ones the core knows.  The core must load it, use what it knows
// and never call the rest (they abort).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "plugins/cpu/plugin_api.h"
#include "tessera/plugin.h"

namespace {

TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  args->name = "newminor";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0.0-newminor";
  return nullptr;
}

struct FutureArgs {
  size_t struct_size;
  TsExtension* extension_start;
};
TsError* FutureEntry(FutureArgs*) {
  std::fprintf(stderr, "newminor: the core called an entry point it cannot know\n");
  std::abort();
}

// The table of ABI 1.99: the 1.0 table plus appended entries.
struct FutureApi {
  TsPluginApi v1_0;
  TsError* (*Future_A)(FutureArgs*);
  TsError* (*Future_B)(FutureArgs*);
  TsError* (*Future_C)(FutureArgs*);
};

FutureApi MakeTable() {
  FutureApi api;
  std::memcpy(&api.v1_0, tessera_cpu_plugin_get_api(), sizeof api.v1_0);
  api.v1_0.Plugin_GetInfo = PluginGetInfo;
  api.v1_0.abi_version.major = TESSERA_ABI_VERSION_MAJOR;
  api.v1_0.abi_version.minor = 99;
  api.Future_A = FutureEntry;
  api.Future_B = FutureEntry;
  api.Future_C = FutureEntry;
  api.v1_0.struct_size = TS_STRUCT_SIZE(FutureApi, Future_C);
  return api;
}
}  // namespace

extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  // Built on first use: the CPU plugin's own table may be initialised
  // dynamically, and static-initialisation order across files is unspecified.
  static const FutureApi kApi = MakeTable();
  return &kApi.v1_0;
}
