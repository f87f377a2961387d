// The raw-Vulkan reference (see vulkan_raw.hpp): dlopen'ed libvulkan.so.1,
// one instance and device, buffers, compute pipelines and a fenced submit.
#include "vulkan_raw.hpp"

#include <mutex>

#if defined(TESSERA_BENCH_HAVE_VULKAN)
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tessera_bench::rawvk {
namespace {

// Set-up failures (instance, device) mean "no usable Vulkan here"; later
// failures are real errors.
std::string Failed(const char* what, VkResult r) {
  return std::string("raw Vulkan reference: ") + what + " failed: " + ResultName(r);
}
std::string Unavailable(const char* what, VkResult r) {
  return "not available: " + Failed(what, r);
}

void Create(Context& c) {
  // TESSERA_VULKAN_LIBRARY is the plugin's override; honour it here too so
  // both sides always load the same loader.
  const char* path = std::getenv("TESSERA_VULKAN_LIBRARY");
  if (!path || !*path) path = "libvulkan.so.1";
  c.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!c.library) {
    const char* why = dlerror();
    c.error = std::string("not available: ") + (why ? why : path);
    return;
  }
  c.vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(c.library, "vkGetInstanceProcAddr"));
  if (!c.vkGetInstanceProcAddr) {
    c.error = std::string("not available: ") + path + " has no vkGetInstanceProcAddr";
    return;
  }
#define TESSERA_RAWVK_LOAD_GLOBAL(name) \
  c.name = reinterpret_cast<PFN_##name>(c.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));
#define TESSERA_RAWVK_SKIP(name)
  TESSERA_RAWVK_FUNCTIONS(TESSERA_RAWVK_LOAD_GLOBAL, TESSERA_RAWVK_SKIP, TESSERA_RAWVK_SKIP)
  uint32_t version = VK_API_VERSION_1_0;
  if (c.vkEnumerateInstanceVersion) c.vkEnumerateInstanceVersion(&version);
  if (!c.vkCreateInstance || version < VK_API_VERSION_1_2) {
    c.error = "not available: the Vulkan loader is older than 1.2";
    return;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tessera-bench raw reference";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkResult r = c.vkCreateInstance(&ici, nullptr, &c.instance);
  if (r != VK_SUCCESS) {
    c.error = Unavailable("vkCreateInstance", r);
    return;
  }
#define TESSERA_RAWVK_LOAD_INSTANCE(name)                                              \
  c.name = reinterpret_cast<PFN_##name>(c.vkGetInstanceProcAddr(c.instance, #name)); \
  if (!c.name) {                                                                       \
    c.error = "not available: raw Vulkan reference: no " #name;                       \
    return;                                                                            \
  }
  TESSERA_RAWVK_FUNCTIONS(TESSERA_RAWVK_SKIP, TESSERA_RAWVK_LOAD_INSTANCE, TESSERA_RAWVK_SKIP)

  uint32_t n = 0;
  c.vkEnumeratePhysicalDevices(c.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> phys(n);
  if (n) c.vkEnumeratePhysicalDevices(c.instance, &n, phys.data());
  for (VkPhysicalDevice p : phys) {
    uint32_t nq = 0;
    c.vkGetPhysicalDeviceQueueFamilyProperties(p, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> q(nq);
    c.vkGetPhysicalDeviceQueueFamilyProperties(p, &nq, q.data());
    for (uint32_t i = 0; i < nq; ++i)
      if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        c.phys = p;
        c.family = i;
        break;
      }
    if (c.phys) break;
  }
  if (!c.phys) {
    c.error = "not available: no Vulkan device with a compute queue";
    return;
  }
  c.vkGetPhysicalDeviceProperties(c.phys, &c.props);
  c.vkGetPhysicalDeviceMemoryProperties(c.phys, &c.memory);
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = c.family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  r = c.vkCreateDevice(c.phys, &dci, nullptr, &c.device);
  if (r != VK_SUCCESS) {
    c.error = Unavailable("vkCreateDevice", r);
    return;
  }
#define TESSERA_RAWVK_LOAD_DEVICE(name)                                           \
  c.name = reinterpret_cast<PFN_##name>(c.vkGetDeviceProcAddr(c.device, #name)); \
  if (!c.name) {                                                                  \
    c.error = "not available: raw Vulkan reference: no " #name;                  \
    return;                                                                       \
  }
  TESSERA_RAWVK_FUNCTIONS(TESSERA_RAWVK_SKIP, TESSERA_RAWVK_SKIP, TESSERA_RAWVK_LOAD_DEVICE)
  c.vkGetDeviceQueue(c.device, c.family, 0, &c.queue);
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = c.family;
  if ((r = c.vkCreateCommandPool(c.device, &pci, nullptr, &c.pool)) != VK_SUCCESS) {
    c.error = Failed("vkCreateCommandPool", r);
    return;
  }
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = c.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  if ((r = c.vkAllocateCommandBuffers(c.device, &ai, &c.cb)) != VK_SUCCESS) {
    c.error = Failed("vkAllocateCommandBuffers", r);
    return;
  }
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if ((r = c.vkCreateFence(c.device, &fci, nullptr, &c.fence)) != VK_SUCCESS) {
    c.error = Failed("vkCreateFence", r);
    return;
  }
}

constexpr VkPipelineStageFlags kStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;

}  // namespace

const char* ResultName(VkResult r) {
  switch (r) {
#define CASE(x) \
  case x:       \
    return #x;
    CASE(VK_SUCCESS)
    CASE(VK_NOT_READY)
    CASE(VK_TIMEOUT)
    CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    CASE(VK_ERROR_INITIALIZATION_FAILED)
    CASE(VK_ERROR_DEVICE_LOST)
    CASE(VK_ERROR_LAYER_NOT_PRESENT)
    CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
#undef CASE
    default:
      return "VkResult (other)";
  }
}

Context& Raw() {
  static Context* c = [] {
    auto* ctx = new Context;  // leaked: see bench_env.cpp
    Create(*ctx);
    return ctx;
  }();
  return *c;
}

std::string Availability() { return Raw().error; }

bool CreateBuffer(Context& c, uint64_t size, Buffer* out, std::string* error) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
              VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = c.vkCreateBuffer(c.device, &bci, nullptr, &out->buffer);
  if (r != VK_SUCCESS) return *error = Failed("vkCreateBuffer", r), false;
  VkMemoryRequirements req;
  c.vkGetBufferMemoryRequirements(c.device, out->buffer, &req);
  int type = -1, fallback = -1;
  for (uint32_t i = 0; i < c.memory.memoryTypeCount; ++i) {
    if (!(req.memoryTypeBits & (1u << i))) continue;
    VkMemoryPropertyFlags f = c.memory.memoryTypes[i].propertyFlags;
    if (!(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
    if (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && type < 0) type = static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  if (type < 0) type = fallback;
  if (type < 0) return *error = "raw Vulkan reference: no device-local memory type", false;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = c.vkAllocateMemory(c.device, &mai, nullptr, &out->memory);
  if (r != VK_SUCCESS) return *error = Failed("vkAllocateMemory", r), false;
  r = c.vkBindBufferMemory(c.device, out->buffer, out->memory, 0);
  if (r != VK_SUCCESS) return *error = Failed("vkBindBufferMemory", r), false;
  if (c.memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
    c.vkMapMemory(c.device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
  out->size = size;
  return true;
}

void DestroyBuffer(Context& c, Buffer& b) {
  if (b.buffer) c.vkDestroyBuffer(c.device, b.buffer, nullptr);
  if (b.memory) c.vkFreeMemory(c.device, b.memory, nullptr);
  b = Buffer{};
}

bool CreateKernel(Context& c, const std::vector<uint32_t>& spirv, const char* entry,
                  const std::vector<const Buffer*>& buffers, uint32_t push_bytes,
                  Kernel* k, std::string* error) {
  VkResult r;
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = spirv.size() * 4;
  smci.pCode = spirv.data();
  if ((r = c.vkCreateShaderModule(c.device, &smci, nullptr, &k->module)) != VK_SUCCESS)
    return *error = Failed("vkCreateShaderModule", r), false;
  std::vector<VkDescriptorSetLayoutBinding> lb;
  for (uint32_t i = 0; i < buffers.size(); ++i)
    lb.push_back({i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.bindingCount = static_cast<uint32_t>(lb.size());
  dslci.pBindings = lb.data();
  if ((r = c.vkCreateDescriptorSetLayout(c.device, &dslci, nullptr, &k->set_layout)) !=
      VK_SUCCESS)
    return *error = Failed("vkCreateDescriptorSetLayout", r), false;
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &k->set_layout;
  plci.pushConstantRangeCount = push_bytes ? 1 : 0;
  plci.pPushConstantRanges = &range;
  if ((r = c.vkCreatePipelineLayout(c.device, &plci, nullptr, &k->layout)) != VK_SUCCESS)
    return *error = Failed("vkCreatePipelineLayout", r), false;
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = k->module;
  cpci.stage.pName = entry;
  cpci.layout = k->layout;
  if ((r = c.vkCreateComputePipelines(c.device, VK_NULL_HANDLE, 1, &cpci, nullptr,
                                      &k->pipeline)) != VK_SUCCESS)
    return *error = Failed("vkCreateComputePipelines", r), false;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            static_cast<uint32_t>(buffers.size() ? buffers.size() : 1)};
  VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  if ((r = c.vkCreateDescriptorPool(c.device, &dpci, nullptr, &k->pool)) != VK_SUCCESS)
    return *error = Failed("vkCreateDescriptorPool", r), false;
  VkDescriptorSetAllocateInfo dsai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dsai.descriptorPool = k->pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &k->set_layout;
  if ((r = c.vkAllocateDescriptorSets(c.device, &dsai, &k->set)) != VK_SUCCESS)
    return *error = Failed("vkAllocateDescriptorSets", r), false;
  std::vector<VkDescriptorBufferInfo> infos;
  for (const Buffer* b : buffers) infos.push_back({b->buffer, 0, VK_WHOLE_SIZE});
  std::vector<VkWriteDescriptorSet> writes(infos.size());
  for (uint32_t i = 0; i < infos.size(); ++i) {
    writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = k->set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  c.vkUpdateDescriptorSets(c.device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                           nullptr);
  k->push_bytes = push_bytes;
  return true;
}

void DestroyKernel(Context& c, Kernel& k) {
  if (k.pool) c.vkDestroyDescriptorPool(c.device, k.pool, nullptr);
  if (k.pipeline) c.vkDestroyPipeline(c.device, k.pipeline, nullptr);
  if (k.layout) c.vkDestroyPipelineLayout(c.device, k.layout, nullptr);
  if (k.set_layout) c.vkDestroyDescriptorSetLayout(c.device, k.set_layout, nullptr);
  if (k.module) c.vkDestroyShaderModule(c.device, k.module, nullptr);
  k = Kernel{};
}

bool Begin(Context& c, std::string* error) {
  VkResult r = c.vkResetCommandBuffer(c.cb, 0);
  if (r != VK_SUCCESS) return *error = Failed("vkResetCommandBuffer", r), false;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  r = c.vkBeginCommandBuffer(c.cb, &bi);
  if (r != VK_SUCCESS) return *error = Failed("vkBeginCommandBuffer", r), false;
  return true;
}

bool EndSubmitWait(Context& c, std::string* error) {
  VkResult r = c.vkEndCommandBuffer(c.cb);
  if (r != VK_SUCCESS) return *error = Failed("vkEndCommandBuffer", r), false;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &c.cb;
  r = c.vkQueueSubmit(c.queue, 1, &si, c.fence);
  if (r != VK_SUCCESS) return *error = Failed("vkQueueSubmit", r), false;
  r = c.vkWaitForFences(c.device, 1, &c.fence, VK_TRUE, UINT64_MAX);
  if (r != VK_SUCCESS) return *error = Failed("vkWaitForFences", r), false;
  r = c.vkResetFences(c.device, 1, &c.fence);
  if (r != VK_SUCCESS) return *error = Failed("vkResetFences", r), false;
  return true;
}

void Barrier(Context& c) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  c.vkCmdPipelineBarrier(c.cb, kStages, kStages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Bind(Context& c, const Kernel& k) {
  c.vkCmdBindPipeline(c.cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
  c.vkCmdBindDescriptorSets(c.cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &k.set, 0,
                            nullptr);
}

void Dispatch(Context& c, const Kernel& k, const void* push, uint32_t gx, uint32_t gy,
              uint32_t gz) {
  if (k.push_bytes)
    c.vkCmdPushConstants(c.cb, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k.push_bytes, push);
  c.vkCmdDispatch(c.cb, gx, gy, gz);
}

}  // namespace tessera_bench::rawvk

#else  // !TESSERA_BENCH_HAVE_VULKAN

namespace tessera_bench::rawvk {
std::string Availability() {
  return "not available: tessera-bench was built without the Vulkan headers "
         "(apt-get install libvulkan-dev)";
}
}  // namespace tessera_bench::rawvk

#endif
