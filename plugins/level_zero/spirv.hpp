// SPIR-V modules for Executable_Load, checked before the driver sees them:
// zeModuleCreate gets a pointer and a size and hands both to the driver's
// compiler, so the header, every instruction's word count and the ids the
// plugin reads are checked against the bytes given.  What the check reads
// on the way is what Executable_GetKernel reports: the Kernel entry points,
// their LocalSize (a required group size) and the parameter kinds (buffers:
// CrossWorkgroup pointers; scalars: ints, floats and vectors of them).
// Pure functions (no driver): level_zero_plugin_test checks them on machines
// without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::level_zero::spirv {

inline constexpr uint32_t kMagic = 0x07230203u;
// Executable_Load reads at most this much (a file or a caller's image).
inline constexpr uint64_t kMaxImageBytes = uint64_t{1} << 30;

struct Param {
  enum Kind { kBuffer, kScalar, kOther } kind = kOther;
  uint32_t bytes = 0;  // scalars: the value's size; buffers: 8 (a pointer)
};

struct Kernel {
  std::string name;
  uint32_t local_size[3] = {0, 0, 0};  // OpExecutionMode LocalSize; 0: none
  // True when every parameter is a buffer or a scalar the plugin can pass.
  bool params_known = false;
  std::vector<Param> params;
};

struct Module {
  uint32_t version = 0;  // 0x00010200 for SPIR-V 1.2
  std::vector<Kernel> kernels;  // OpEntryPoint Kernel, in module order
  uint32_t glcompute_entries = 0;  // Vulkan shaders (not loadable here)
};

// "" when `data` is a well-formed little-endian SPIR-V module with at least
// one Kernel entry point (filling `out`); else what is wrong.
std::string CheckModule(const void* data, size_t size, Module* out);

// "" when a module of SPIR-V version word `module_version` (0x00010300 for
// 1.3) is within `device_supported` (ze_device_module_properties_t::
// spirvVersionSupported, ZE_MAKE_VERSION(1, 2) for 1.2; 0: unknown, taken
// as no limit); else what is wrong, naming both versions.
std::string CheckVersion(uint32_t module_version, uint32_t device_supported);

}  // namespace tessera::level_zero::spirv
