// The raw-Vulkan reference of tessera-bench's Vulkan benchmarks: plain
// Vulkan calls, no Tessera, doing what the Tessera side does.
//
// libvulkan.so.1 is dlopen'ed (like the Vulkan plugin does), never linked:
// tessera-bench starts on a machine without Vulkan, and these benchmarks
// then skip with "not available: <reason>".  Built only where
// <vulkan/vulkan.h> exists (TESSERA_BENCH_HAVE_VULKAN); elsewhere Raw()
// reports that the binary was built without the headers.
#ifndef TESSERA_BENCH_VULKAN_RAW_HPP_
#define TESSERA_BENCH_VULKAN_RAW_HPP_

#include <cstdint>
#include <string>
#include <vector>

#if defined(TESSERA_BENCH_HAVE_VULKAN)
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

namespace tessera_bench::rawvk {

// Every entry point the reference uses.  G: global (no instance),
// I: instance, D: device.
#define TESSERA_RAWVK_FUNCTIONS(G, I, D) \
  G(vkCreateInstance)                    \
  G(vkEnumerateInstanceVersion)          \
  I(vkDestroyInstance)                   \
  I(vkEnumeratePhysicalDevices)          \
  I(vkGetPhysicalDeviceProperties)       \
  I(vkGetPhysicalDeviceQueueFamilyProperties) \
  I(vkGetPhysicalDeviceMemoryProperties) \
  I(vkCreateDevice)                      \
  I(vkGetDeviceProcAddr)                 \
  D(vkDestroyDevice)                     \
  D(vkGetDeviceQueue)                    \
  D(vkDeviceWaitIdle)                    \
  D(vkCreateBuffer)                      \
  D(vkDestroyBuffer)                     \
  D(vkGetBufferMemoryRequirements)       \
  D(vkAllocateMemory)                    \
  D(vkFreeMemory)                        \
  D(vkBindBufferMemory)                  \
  D(vkMapMemory)                         \
  D(vkCreateShaderModule)                \
  D(vkDestroyShaderModule)               \
  D(vkCreateDescriptorSetLayout)         \
  D(vkDestroyDescriptorSetLayout)        \
  D(vkCreatePipelineLayout)              \
  D(vkDestroyPipelineLayout)             \
  D(vkCreateComputePipelines)            \
  D(vkDestroyPipeline)                   \
  D(vkCreateDescriptorPool)              \
  D(vkDestroyDescriptorPool)             \
  D(vkAllocateDescriptorSets)            \
  D(vkUpdateDescriptorSets)              \
  D(vkCreateCommandPool)                 \
  D(vkDestroyCommandPool)                \
  D(vkAllocateCommandBuffers)            \
  D(vkResetCommandBuffer)                \
  D(vkBeginCommandBuffer)                \
  D(vkEndCommandBuffer)                  \
  D(vkCmdBindPipeline)                   \
  D(vkCmdBindDescriptorSets)             \
  D(vkCmdPushConstants)                  \
  D(vkCmdDispatch)                       \
  D(vkCmdPipelineBarrier)                \
  D(vkCmdCopyBuffer)                     \
  D(vkCreateFence)                       \
  D(vkDestroyFence)                      \
  D(vkWaitForFences)                     \
  D(vkResetFences)                       \
  D(vkQueueSubmit)

// One VkInstance + VkDevice + queue on the first physical device with a
// compute queue (the device the Vulkan plugin lists first), a command pool
// with one resettable command buffer, and a fence.
struct Context {
  std::string error;  // non-empty: unusable, and why ("not available: ...")
  void* library = nullptr;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define TESSERA_RAWVK_DECLARE(name) PFN_##name name = nullptr;
  TESSERA_RAWVK_FUNCTIONS(TESSERA_RAWVK_DECLARE, TESSERA_RAWVK_DECLARE,
                          TESSERA_RAWVK_DECLARE)
#undef TESSERA_RAWVK_DECLARE
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  VkDevice device = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
};

// Created on first use and kept (leaked) for the run.  Thread-safe.
Context& Raw();

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;  // when the memory type is host-visible
  uint64_t size = 0;
};
// A storage + transfer buffer in device-local memory (preferring a type that
// is not host-visible, as the plugin does for TS_BUFFER_DEVICE).
bool CreateBuffer(Context& c, uint64_t size, Buffer* out, std::string* error);
void DestroyBuffer(Context& c, Buffer& b);

// A compute pipeline for entry point `entry` of a SPIR-V module whose
// buffers are set 0 bindings 0..n-1 and whose scalars are one push-constant
// range of `push_bytes`; one descriptor set, written once with `buffers`.
struct Kernel {
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  uint32_t push_bytes = 0;
};
bool CreateKernel(Context& c, const std::vector<uint32_t>& spirv, const char* entry,
                  const std::vector<const Buffer*>& buffers, uint32_t push_bytes,
                  Kernel* out, std::string* error);
void DestroyKernel(Context& c, Kernel& k);

// Records into the context's command buffer, which is reset first.
bool Begin(Context& c, std::string* error);
// Ends, submits with the fence, waits for it and resets it.
bool EndSubmitWait(Context& c, std::string* error);
// A full memory barrier between two operations (what a stream keeps).
void Barrier(Context& c);
// Binds the pipeline and its descriptor set.
void Bind(Context& c, const Kernel& k);
// Push constants + dispatch (after Bind).
void Dispatch(Context& c, const Kernel& k, const void* push, uint32_t gx, uint32_t gy,
              uint32_t gz);

const char* ResultName(VkResult r);

}  // namespace tessera_bench::rawvk
#endif  // TESSERA_BENCH_HAVE_VULKAN

namespace tessera_bench::rawvk {
// "" when the reference can run, else the reason ("not available: ...").
std::string Availability();
}  // namespace tessera_bench::rawvk

#endif  // TESSERA_BENCH_VULKAN_RAW_HPP_
