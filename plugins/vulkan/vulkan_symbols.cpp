#include "vulkan_symbols.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace tessera::vk {

bool InstanceFns::OpenLibrary(const char* name, std::string* reason) {
  library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* err = dlerror();
    *reason = err ? err : (std::string(name) + ": dlopen failed");
    return false;
  }
  vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
  if (!vkGetInstanceProcAddr) {
    *reason = std::string(name) + " has no vkGetInstanceProcAddr";
    Close();
    return false;
  }
#define VK_GLOBAL(fn)                                                              \
  fn = reinterpret_cast<PFN_##fn>(vkGetInstanceProcAddr(VK_NULL_HANDLE, #fn));      \
  if (!fn) {                                                                       \
    *reason = std::string(name) + " does not provide " #fn " (a Vulkan 1.1+ loader " \
              "is needed)";                                                        \
    Close();                                                                       \
    return false;                                                                  \
  }
#define VK_INSTANCE(fn)
#define VK_DEVICE(fn)
#include "vulkan_symbols.inc"
  return true;
}

bool InstanceFns::LoadInstance(VkInstance instance, std::string* reason) {
#define VK_GLOBAL(fn)
#define VK_INSTANCE(fn)                                                        \
  fn = reinterpret_cast<PFN_##fn>(vkGetInstanceProcAddr(instance, #fn));      \
  if (!fn) {                                                                   \
    *reason = "the Vulkan loader does not provide " #fn;                       \
    return false;                                                              \
  }
#define VK_INSTANCE_OPTIONAL(fn) \
  fn = reinterpret_cast<PFN_##fn>(vkGetInstanceProcAddr(instance, #fn));
#define VK_DEVICE(fn)
#include "vulkan_symbols.inc"
  return true;
}

void InstanceFns::Close() {
  if (library) dlclose(library);
  library = nullptr;
}

bool DeviceFns::Load(const InstanceFns& ifn, VkDevice device, std::string* reason) {
#define VK_GLOBAL(fn)
#define VK_INSTANCE(fn)
#define VK_DEVICE(fn)                                                         \
  fn = reinterpret_cast<PFN_##fn>(ifn.vkGetDeviceProcAddr(device, #fn));     \
  if (!fn) {                                                                  \
    *reason = "the Vulkan driver does not provide " #fn;                      \
    return false;                                                             \
  }
#define VK_DEVICE_OPTIONAL(fn) \
  fn = reinterpret_cast<PFN_##fn>(ifn.vkGetDeviceProcAddr(device, #fn));
#include "vulkan_symbols.inc"
  return true;
}

}  // namespace tessera::vk
