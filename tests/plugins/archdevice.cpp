// Test plugin: the CPU plugin with a device that says which architecture it
// compiles for (TsDeviceProperties.compile_arch, ABI 1.5), taken from
// TESSERA_TEST_COMPILE_ARCH (unset: ""), and a compile target that lists
// "native,testarch" and whose schedule adds "testarch:mma=bogus": a token
// only a lowering for testarch applies, so a compile failing on mma=bogus
// was scheduled for the device's arch (tests/compile_arch.sh).
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "plugins/cpu/plugin_api.h"
#include "tessera/plugin.h"

namespace {

const TsPluginApi& Cpu() { return *tessera_cpu_plugin_get_api(); }

TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  TsError* e = Cpu().Plugin_GetInfo(args);
  if (e) return e;
  args->name = "archdevice";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0.0-archdevice";
  return nullptr;
}

TsError* DeviceGetProperties(TsDevice_GetProperties_Args* args) {
  TsError* e = Cpu().Device_GetProperties(args);
  if (e) return e;
  TsDeviceProperties* p = args->properties;
  if (TS_FIELD_PRESENT(p, TsDeviceProperties, compile_arch)) {
    const char* arch = std::getenv("TESSERA_TEST_COMPILE_ARCH");
    std::strncpy(p->compile_arch, arch ? arch : "", TS_NAME_MAX - 1);
    p->compile_arch[TS_NAME_MAX - 1] = '\0';
  }
  return nullptr;
}

TsError* CompilerGetTargets(TsCompiler_GetTargets_Args* args) {
  TsError* e = Cpu().Compiler_GetTargets(args);
  if (e || args->num_targets == 0) return e;
  static std::once_flag once;
  static TsCompilerTarget target;
  static std::string schedule;
  std::call_once(once, [&] {
    target = args->targets[0];
    schedule = std::string(target.schedule) + " testarch:mma=bogus";
    target.schedule = schedule.c_str();
    target.archs = "native,testarch";
  });
  args->targets = &target;
  args->num_targets = 1;
  return nullptr;
}

TsPluginApi MakeTable() {
  TsPluginApi api;
  std::memcpy(&api, &Cpu(), sizeof api);
  api.Plugin_GetInfo = PluginGetInfo;
  api.Device_GetProperties = DeviceGetProperties;
  api.Compiler_GetTargets = CompilerGetTargets;
  return api;
}

}  // namespace

// Built on first use: the cpu plugin's table (another translation unit's
// static) is initialized by then.
extern "C" TESSERA_PLUGIN_EXPORT const TsPluginApi* tessera_plugin_get_api(void) {
  static const TsPluginApi api = MakeTable();
  return &api;
}
