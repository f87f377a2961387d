// Shared by the Vulkan plugin's test files: the fixture that opens the
// "vulkan" backend (skipping where there is no Vulkan), the status macros and
// small file helpers.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessera/runtime.hpp"
#include "test_util.hpp"
#include "vulkan_ext.h"

namespace tessera_vk_test {

using tessera::Buffer;
using tessera::Device;
using tessera::Event;
using tessera::Executable;
using tessera::Kernel;
using tessera::KernelArg;
using tessera::Runtime;
using tessera::RuntimeOptions;
using tessera::Status;
using tessera::StatusCode;
using tessera::Stream;


// A runtime on the vulkan plugin alone, configured by `options` (string
// values of its client options, e.g. {{"test_mask_features", "shaderInt64"}}),
// not by TESSERA_BACKEND and the like.  What the core would map from the
// environment onto the plugin's options is mapped here too: the cache
// folder (TESSERA_CACHE_DIR) and TESSERA_VALIDATE (the ctest
// vulkan_plugin_validation runs the suite under it).
inline tessera::StatusOr<Runtime> CreateVulkanRuntime(
    const std::vector<std::pair<std::string, std::string>>& plugin_options = {}) {
  std::vector<std::pair<std::string, std::string>> values;
  if (std::string dir = tessera::DefaultCacheDirectory(); !dir.empty()) values.push_back({"cache_dir", dir + "/vulkan"});
  if (const char* v = std::getenv("TESSERA_VALIDATE"); v && *v) values.push_back({"validation", v});
  values.insert(values.end(), plugin_options.begin(), plugin_options.end());
  return Runtime::Create(tessera::testing::PluginOptions("vulkan", values));
}

inline std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string ShaderPath(const char* name) {
  return std::string(TESSERA_VK_SHADER_DIR) + "/" + name + ".spv";
}

// The code and message of `e`, which it destroys ("" for NULL).
inline std::string TakeError(const TsPluginApi* api, TsError* e, TsErrorCode* code = nullptr) {
  if (!e) return "";
  TsError_GetCode_Args gc{};
  gc.struct_size = TS_ERROR_GETCODE_ARGS_STRUCT_SIZE;
  gc.error = e;
  api->Error_GetCode(&gc);
  if (code) *code = gc.code;
  TsError_Message_Args gm{};
  gm.struct_size = TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE;
  gm.error = e;
  api->Error_Message(&gm);
  std::string m = gm.message ? gm.message : "(no message)";
  TsError_Destroy_Args gd{};
  gd.struct_size = TS_ERROR_DESTROY_ARGS_STRUCT_SIZE;
  gd.error = e;
  api->Error_Destroy(&gd);
  return m;
}

// The plugin's counters for `dev` (vulkan_ext.h), through the plugin's own
// Device_GetProperties with the extension chained.
inline TsVulkanDeviceStats Stats(const Runtime& rt, const Device& dev) {
  TsVulkanDeviceStats stats{};
  stats.header.struct_size = TS_VULKAN_DEVICE_STATS_STRUCT_SIZE;
  stats.header.type = TS_EXTENSION_VULKAN_DEVICE_STATS;
  TsDeviceProperties props{};
  props.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
  TsDevice_GetProperties_Args args{};
  args.struct_size = TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE;
  args.extension_start = &stats.header;
  args.device = dev.raw();
  args.properties = &props;
  TsError* e = rt.plugin_api()->Device_GetProperties(&args);
  EXPECT_EQ(e, nullptr) << "Device_GetProperties with TsVulkanDeviceStats failed";
  return stats;
}

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rt = CreateVulkanRuntime(plugin_options_);
    if (!rt.ok()) {
      if (rt.status().code() == StatusCode::kUnavailable)
        GTEST_SKIP() << "Vulkan is unavailable here: " << rt.status().ToString();
      FAIL() << rt.status().ToString();
    }
    rt_ = std::move(rt).value();
    ASSERT_FALSE(rt_.devices().empty());
    dev_ = rt_.devices()[0];
  }

  // Loads test_shaders/<name>.spv and returns its kernel <name>.
  void LoadKernel(const char* name, Executable* exe, Kernel* k) {
    std::string path = ShaderPath(name);
    if (ReadFile(path).empty()) GTEST_SKIP() << "no " << path << " (glslangValidator missing)";
    auto e = dev_.load_executable("spirv", path);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    *exe = std::move(e).value();
    auto kk = exe->kernel(name);
    ASSERT_TRUE(kk.ok()) << kk.status().ToString();
    *k = std::move(kk).value();
  }

  Buffer Alloc(uint64_t size, TsBufferKind kind = TS_BUFFER_DEVICE) {
    auto b = dev_.allocate(size, kind);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(b).value() : Buffer();
  }

  // The plugin's options for rt_ (e.g. test_mask_features): set them in a
  // derived fixture's constructor.
  std::vector<std::pair<std::string, std::string>> plugin_options_;
  Runtime rt_;
  Device dev_;
};

}  // namespace tessera_vk_test
