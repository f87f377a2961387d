// libvulkan.so.1, opened with dlopen and resolved through vulkan_symbols.inc.
// The plugin never links against libvulkan: one build loads on machines with
// no Vulkan loader and reports "not available: <dlerror text>".
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace tessera::vk {

// Loader-level and instance-level functions.  One per client (instance);
// immutable after Load*, so any thread may read it.
struct InstanceFns {
  void* library = nullptr;  // dlopen handle, closed by Close()
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define VK_GLOBAL(name) PFN_##name name = nullptr;
#define VK_INSTANCE(name) PFN_##name name = nullptr;
#define VK_DEVICE(name)
#include "vulkan_symbols.inc"

  // dlopen of `name` (the client's library option, "libvulkan.so.1" by
  // default) + the VK_GLOBAL entries.  On failure returns false and sets
  // `reason` (the dlerror text, or the missing symbol).
  bool OpenLibrary(const char* name, std::string* reason);
  // The VK_INSTANCE entries for `instance`; false (+ reason) if a required
  // one is missing.
  bool LoadInstance(VkInstance instance, std::string* reason);
  void Close();
};

// Device-level functions, resolved with vkGetDeviceProcAddr (no dispatch
// through the loader's trampolines).  Immutable after Load.
struct DeviceFns {
#define VK_GLOBAL(name)
#define VK_INSTANCE(name)
#define VK_DEVICE(name) PFN_##name name = nullptr;
#include "vulkan_symbols.inc"

  bool Load(const InstanceFns& ifn, VkDevice device, std::string* reason);
};

}  // namespace tessera::vk
