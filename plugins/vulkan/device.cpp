// Devices: creation (queue, features, memory types, pipeline cache),
// properties, the default stream, Device_Synchronize.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "enumerate.hpp"
#include "file_io.hpp"
#include "internal.hpp"
#include "plugin_log.hpp"
#include "vulkan_ext.h"

namespace tessera::vk {

namespace {

const char* vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x106B: return "Apple";
    case 0x10005: return "Mesa";
    default: return nullptr;
  }
}

// Memory type with all of `need`, preferring `want`, avoiding `avoid`.
int pick_type(const VkPhysicalDeviceMemoryProperties& m, VkMemoryPropertyFlags need,
              VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) {
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags f = m.memoryTypes[i].propertyFlags;
    if ((f & need) != need) continue;
    if (f & (VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT)) continue;
    int score = ((f & want) == want ? 2 : 0) + ((f & avoid) ? 0 : 1);
    if (score > best_score) best = static_cast<int>(i), best_score = score;
  }
  return best;
}


void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
}

// A pipeline cache larger than this is not read (lavapipe's grows by a few
// KiB per pipeline; drivers keep theirs well under this).
constexpr uint64_t kMaxPipelineCacheBytes = uint64_t{256} << 20;

// Loads the persisted pipeline cache when its header matches this device.
// Any problem with the file (missing, not a regular file, too large, another
// device's, refused by the driver) means starting with an empty cache: the
// cache only saves compile time, so it never makes the device unavailable.
void open_pipeline_cache(TsDevice* dev) {
  // The cache_dir option (the core passes $TESSERA_CACHE_DIR/vulkan or the
  // user's default cache folder); none: no persisted cache.
  std::string dir = dev->client->cache_dir;
  std::string data;
  if (!dir.empty()) {
    char uuid[2 * VK_UUID_SIZE + 1];
    for (int i = 0; i < VK_UUID_SIZE; ++i)
      std::snprintf(uuid + 2 * i, 3, "%02x", dev->props.pipelineCacheUUID[i]);
    dev->cache_path = strprintf("%s/%04x-%04x-%s.bin", dir.c_str(), dev->props.vendorID,
                                dev->props.deviceID, uuid);
    plugin_support::FileReadResult r = plugin_support::ReadBoundedFile(dev->cache_path, kMaxPipelineCacheBytes, &data);
    if (!r.ok() && r.status != plugin_support::FileReadStatus::kCannotOpen)
      plugin_support::LogWarning("vulkan: pipeline cache not loaded: " + r.message + "; starting with an empty cache");
    // Header: length, version, vendorID, deviceID, UUID (VkPipelineCacheHeaderVersionOne).
    bool ok = data.size() >= 16 + VK_UUID_SIZE;
    if (ok) {
      uint32_t h[4];
      std::memcpy(h, data.data(), sizeof h);
      ok = h[0] >= 16 + VK_UUID_SIZE && h[0] <= data.size() &&
           h[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && h[2] == dev->props.vendorID &&
           h[3] == dev->props.deviceID &&
           std::memcmp(data.data() + 16, dev->props.pipelineCacheUUID, VK_UUID_SIZE) == 0;
    }
    if (!ok) data.clear();
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  if (dev->fn.vkCreatePipelineCache(dev->device, &ci, nullptr, &dev->pipeline_cache) != VK_SUCCESS) {
    // The driver refused the file's contents: start empty.
    data.clear();
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    dev->fn.vkCreatePipelineCache(dev->device, &ci, nullptr, &dev->pipeline_cache);
  }
  dev->cache_loaded_size = data.size();
}

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// VK_EXT_calibrated_timestamps reads the device's tick counter and the
// host's CLOCK_MONOTONIC (std::chrono::steady_clock on Linux, the clock of
// completion times) together, with no queue work: usable only when both
// domains are there.
bool can_calibrate_timestamps(const InstanceFns& ifn, VkPhysicalDevice phys) {
  if (!ifn.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT) return false;
  std::vector<VkTimeDomainEXT> domains;
  // Vulkan defines 4 domains: a count past 64 is a driver's error.
  if (!enumerate_bounded(
          [&](uint32_t* n, VkTimeDomainEXT* d) {
            return ifn.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(phys, n, d);
          },
          64, &domains))
    return false;
  auto has = [&](VkTimeDomainEXT d) {
    return std::find(domains.begin(), domains.end(), d) != domains.end();
  };
  return has(VK_TIME_DOMAIN_DEVICE_EXT) && has(VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT);
}

}  // namespace

bool test_masks_feature(const TsClient* c, const char* name) {
  if (c->test_mask_features.empty()) return false;
  std::string list = "," + c->test_mask_features + ",";
  return list.find(std::string(",") + name + ",") != std::string::npos;
}

void save_pipeline_cache(TsDevice* dev) {
  if (!dev->pipeline_cache || dev->cache_path.empty() ||
      dev->pipelines_built.load(std::memory_order_relaxed) == 0)
    return;
  size_t size = 0;
  if (dev->fn.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &size, nullptr) != VK_SUCCESS ||
      size == 0 || size == dev->cache_loaded_size)
    return;
  std::vector<char> data(size);
  if (dev->fn.vkGetPipelineCacheData(dev->device, dev->pipeline_cache, &size, data.data()) != VK_SUCCESS)
    return;
  make_dirs(dev->cache_path.substr(0, dev->cache_path.rfind('/')));
  // Atomic (temporary file, fsync, rename): readers see the old or the new.
  const std::string why = plugin_support::WriteFileAtomically(dev->cache_path, data.data(), size);
  if (!why.empty()) plugin_support::LogWarning("vulkan: pipeline cache not saved: " + why);
}
}  // namespace tessera::vk

using namespace tessera::vk;

TsDevice::~TsDevice() {
  if (!device) return;
  stop_flusher(this);  // first: it submits and touches the streams
  synchronize_device(this);
  fn.vkDeviceWaitIdle(device);
  save_pipeline_cache(this);
  if (default_stream) {
    default_stream->state.reset();
    delete default_stream;
  }
  streams.clear();
  retired.clear();
  calibration_stream.reset();
  release_stamps(this);
  // The device is idle (vkDeviceWaitIdle drains Mesa's submit thread too):
  // now the timelines can go.
  for (VkSemaphore sem : free_semaphores) fn.vkDestroySemaphore(device, sem, nullptr);
  free_semaphores.clear();
  for (VkDescriptorPool p : free_pools) fn.vkDestroyDescriptorPool(device, p, nullptr);
  release(this, patterns);
  release(this, staging);
  if (pipeline_cache) fn.vkDestroyPipelineCache(device, pipeline_cache, nullptr);
  fn.vkDestroyDevice(device, nullptr);
}

namespace tessera::vk {

TsError* create_device(TsClient* c, VkPhysicalDevice phys, uint32_t ordinal,
                       std::unique_ptr<TsDevice>* out, std::string* skip) {
  const InstanceFns& ifn = c->fn;
  auto d = std::make_unique<TsDevice>();
  d->client = c;
  d->ordinal = ordinal;
  d->phys = phys;
  // Properties (1.1/1.2 structures through vkGetPhysicalDeviceProperties2).
  VkPhysicalDeviceExternalMemoryHostPropertiesEXT hostp{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  d->maint3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  d->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  d->subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  d->float_controls.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  VkPhysicalDeviceProperties basic{};
  ifn.vkGetPhysicalDeviceProperties(phys, &basic);
  if (basic.apiVersion < VK_API_VERSION_1_2) {
    *skip = strprintf("%s supports Vulkan %u.%u; Tessera needs 1.2 (timeline semaphores)",
                      basic.deviceName, VK_API_VERSION_MAJOR(basic.apiVersion),
                      VK_API_VERSION_MINOR(basic.apiVersion));
    return nullptr;
  }
  std::vector<VkExtensionProperties> dev_exts;
  uint32_t reported = 0;
  if (!enumerate_bounded(
          [&](uint32_t* n, VkExtensionProperties* e) {
            return ifn.vkEnumerateDeviceExtensionProperties(phys, nullptr, n, e);
          },
          kMaxEnumerated, &dev_exts, &reported)) {
    *skip = strprintf("%s: vkEnumerateDeviceExtensionProperties failed or reported %u extensions "
                      "(more than %u: a driver error)",
                      basic.deviceName, reported, kMaxEnumerated);
    return nullptr;
  }
  bool has_host_import = has_extension(dev_exts, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) &&
                         !test_masks_feature(c, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  bool has_atomic_float = has_extension(dev_exts, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  bool has_calibrated_timestamps =
      has_extension(dev_exts, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) &&
      !test_masks_feature(c, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) &&
      can_calibrate_timestamps(ifn, phys);
  bool has_atomic_float2 = has_extension(dev_exts, VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  // Subgroup size control is core in 1.3; a 1.2 device may have the EXT.
  bool api13 = basic.apiVersion >= VK_API_VERSION_1_3;
  bool has_sg_control_ext =
      !api13 && has_extension(dev_exts, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);

  VkPhysicalDeviceSubgroupSizeControlProperties sgc{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &d->subgroup;
  d->subgroup.pNext = &d->driver;
  d->driver.pNext = &d->float_controls;
  d->float_controls.pNext = &d->maint3;
  d->maint3.pNext = has_host_import ? &hostp : nullptr;
  if (api13 || has_sg_control_ext) {
    sgc.pNext = d->maint3.pNext;
    d->maint3.pNext = &sgc;
  }
  ifn.vkGetPhysicalDeviceProperties2(phys, &p2);
  d->subgroup.pNext = d->driver.pNext = d->float_controls.pNext = d->maint3.pNext = nullptr;
  // Test hook (test_masks_feature): a device without IEEE inf/NaN in f32.
  if (test_masks_feature(c, "shaderSignedZeroInfNanPreserveFloat32"))
    d->float_controls.shaderSignedZeroInfNanPreserveFloat32 = VK_FALSE;
  d->props = p2.properties;
  ifn.vkGetPhysicalDeviceMemoryProperties(phys, &d->memory);

  // A queue family with compute; prefer one with timestamps.
  std::vector<VkQueueFamilyProperties> fams;
  uint32_t reported_families = 0;
  if (!enumerate_bounded(
          [&](uint32_t* n, VkQueueFamilyProperties* f) { ifn.vkGetPhysicalDeviceQueueFamilyProperties(phys, n, f); },
          kMaxEnumerated, &fams, &reported_families)) {
    *skip = strprintf("%s reported %u queue families (more than %u: a driver error)", d->props.deviceName,
                      reported_families, kMaxEnumerated);
    return nullptr;
  }
  const uint32_t nf = static_cast<uint32_t>(fams.size());
  int fam = -1;
  for (uint32_t i = 0; i < nf; ++i) {
    if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || fams[i].queueCount == 0) continue;
    if (fam < 0 || (fams[i].timestampValidBits && !fams[fam].timestampValidBits))
      fam = static_cast<int>(i);
  }
  if (fam < 0) {
    *skip = strprintf("%s has no compute queue", d->props.deviceName);
    return nullptr;
  }
  d->family = static_cast<uint32_t>(fam);
  d->timestamps = fams[fam].timestampValidBits > 0 && d->props.limits.timestampPeriod > 0;
  d->timestamp_bits = fams[fam].timestampValidBits;

  // Features: query what exists, enable what kernels may use.
  EnabledFeatures sup;
  sup.f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  sup.v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  sup.v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  sup.v13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  bool v13 = d->props.apiVersion >= VK_API_VERSION_1_3 &&
             ifn.vkGetPhysicalDeviceFeatures2 != nullptr;
  sup.atomic_float.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
  sup.subgroup_size_control.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  sup.f2.pNext = &sup.v11;
  sup.v11.pNext = &sup.v12;
  sup.v12.pNext = v13 ? &sup.v13 : nullptr;
  void** tail = v13 ? &sup.v13.pNext : &sup.v12.pNext;
  if (has_atomic_float) *tail = &sup.atomic_float, tail = &sup.atomic_float.pNext;
  if (has_sg_control_ext) *tail = &sup.subgroup_size_control, tail = &sup.subgroup_size_control.pNext;
  sup.atomic_float2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT;
  if (has_atomic_float2) *tail = &sup.atomic_float2, tail = &sup.atomic_float2.pNext;
  ifn.vkGetPhysicalDeviceFeatures2(phys, &sup.f2);
  // Test hook (see test_masks_feature): masked features count as absent.
#define MASK(s, f) \
  if (test_masks_feature(c, #f)) sup.s.f = VK_FALSE
  MASK(f2.features, shaderInt64); MASK(f2.features, shaderFloat64);
  MASK(f2.features, shaderInt16); MASK(v11, storageBuffer16BitAccess);
  MASK(v11, storagePushConstant16); MASK(v12, shaderFloat16); MASK(v12, shaderInt8);
  MASK(v12, storageBuffer8BitAccess); MASK(v12, storagePushConstant8);
  MASK(v12, shaderBufferInt64Atomics); MASK(v12, shaderSharedInt64Atomics);
  MASK(v12, shaderSubgroupExtendedTypes);
  MASK(v13, computeFullSubgroups); MASK(subgroup_size_control, computeFullSubgroups);
  MASK(atomic_float, shaderBufferFloat32AtomicAdd);
  MASK(atomic_float, shaderSharedFloat32AtomicAdd);
  MASK(atomic_float2, shaderBufferFloat32AtomicMinMax);
  MASK(atomic_float2, shaderSharedFloat32AtomicMinMax);
#undef MASK
  if (!sup.v12.timelineSemaphore) {
    *skip = strprintf("%s lacks timeline semaphores", d->props.deviceName);
    return nullptr;
  }
  EnabledFeatures& en = d->features;
  en.f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  en.v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  en.v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  en.v13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
#define EN(s, f) en.s.f = sup.s.f
  EN(f2.features, shaderInt64); EN(f2.features, shaderFloat64); EN(f2.features, shaderInt16);
  EN(v11, storageBuffer16BitAccess); EN(v11, uniformAndStorageBuffer16BitAccess);
  EN(v11, storagePushConstant16); EN(v11, variablePointersStorageBuffer);
  EN(v11, variablePointers);
  EN(v12, timelineSemaphore); EN(v12, shaderFloat16); EN(v12, shaderInt8);
  EN(v12, storageBuffer8BitAccess); EN(v12, uniformAndStorageBuffer8BitAccess);
  EN(v12, storagePushConstant8); EN(v12, shaderBufferInt64Atomics);
  EN(v12, shaderSharedInt64Atomics); EN(v12, vulkanMemoryModel);
  EN(v12, vulkanMemoryModelDeviceScope); EN(v12, scalarBlockLayout);
  EN(v12, uniformBufferStandardLayout); EN(v12, subgroupBroadcastDynamicId);
  EN(v12, bufferDeviceAddress); EN(v12, hostQueryReset);
  EN(v12, shaderSubgroupExtendedTypes);  // subgroup ops on 8/16/64-bit values
  if (v13) {
    EN(v13, subgroupSizeControl); EN(v13, computeFullSubgroups); EN(v13, maintenance4);
  }
  en.atomic_float.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
  en.subgroup_size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  if (has_atomic_float) {
    EN(atomic_float, shaderBufferFloat32Atomics); EN(atomic_float, shaderBufferFloat32AtomicAdd);
    EN(atomic_float, shaderSharedFloat32Atomics); EN(atomic_float, shaderSharedFloat32AtomicAdd);
  }
  en.atomic_float2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT;
  if (has_atomic_float2) {
    EN(atomic_float2, shaderBufferFloat32AtomicMinMax);
    EN(atomic_float2, shaderSharedFloat32AtomicMinMax);
  }
  if (has_sg_control_ext) {
    EN(subgroup_size_control, subgroupSizeControl);
    EN(subgroup_size_control, computeFullSubgroups);
  }
#undef EN
  en.f2.pNext = &en.v11;
  en.v11.pNext = &en.v12;
  en.v12.pNext = v13 ? &en.v13 : nullptr;
  tail = v13 ? &en.v13.pNext : &en.v12.pNext;
  // Extension feature structs go into the chain only with their extension.
  bool use_atomic_float2 =
      has_atomic_float2 && (en.atomic_float2.shaderBufferFloat32AtomicMinMax ||
                            en.atomic_float2.shaderSharedFloat32AtomicMinMax);
  // VK_EXT_shader_atomic_float2 requires VK_EXT_shader_atomic_float.
  bool use_atomic_float = has_atomic_float && (en.atomic_float.shaderBufferFloat32AtomicAdd ||
                                               en.atomic_float.shaderSharedFloat32AtomicAdd ||
                                               use_atomic_float2);
  if (!use_atomic_float) use_atomic_float2 = false, en.atomic_float2 = {en.atomic_float2.sType};
  if (use_atomic_float) *tail = &en.atomic_float, tail = &en.atomic_float.pNext;
  if (use_atomic_float2) *tail = &en.atomic_float2, tail = &en.atomic_float2.pNext;
  if (has_sg_control_ext && en.subgroup_size_control.subgroupSizeControl)
    *tail = &en.subgroup_size_control;
  // 1.2 + EXT: only when the extension (and its feature struct) is enabled.
  en.full_subgroups = v13 ? en.v13.computeFullSubgroups == VK_TRUE
                          : has_sg_control_ext &&
                                en.subgroup_size_control.subgroupSizeControl == VK_TRUE &&
                                en.subgroup_size_control.computeFullSubgroups == VK_TRUE;
  en.max_subgroup_size = sgc.maxSubgroupSize ? sgc.maxSubgroupSize : d->subgroup.subgroupSize;
  en.min_subgroup_size = sgc.minSubgroupSize ? sgc.minSubgroupSize : d->subgroup.subgroupSize;
  en.size_control =
      v13 ? en.v13.subgroupSizeControl == VK_TRUE
          : has_sg_control_ext && en.subgroup_size_control.subgroupSizeControl == VK_TRUE;
  en.subgroup_ops = (d->subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
                        ? d->subgroup.supportedOperations : 0;
  static const std::pair<const char*, VkSubgroupFeatureFlags> kSubgroupOps[] = {
      {"subgroupBasic", VK_SUBGROUP_FEATURE_BASIC_BIT},
      {"subgroupVote", VK_SUBGROUP_FEATURE_VOTE_BIT},
      {"subgroupArithmetic", VK_SUBGROUP_FEATURE_ARITHMETIC_BIT},
      {"subgroupBallot", VK_SUBGROUP_FEATURE_BALLOT_BIT},
      {"subgroupShuffle", VK_SUBGROUP_FEATURE_SHUFFLE_BIT},
      {"subgroupShuffleRelative", VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT},
      {"subgroupClustered", VK_SUBGROUP_FEATURE_CLUSTERED_BIT},
      {"subgroupQuad", VK_SUBGROUP_FEATURE_QUAD_BIT}};
  for (const auto& [name, bit] : kSubgroupOps)
    if (test_masks_feature(c, name)) en.subgroup_ops &= ~bit;

  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = d->family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  std::vector<const char*> exts;
  if (has_host_import) exts.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  if (use_atomic_float) exts.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  if (use_atomic_float2) exts.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  // Only useful with timestamps on our queue family.
  has_calibrated_timestamps = has_calibrated_timestamps && d->timestamps;
  if (has_calibrated_timestamps) exts.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  if (has_sg_control_ext && en.subgroup_size_control.subgroupSizeControl)
    exts.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &en.f2;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  dci.ppEnabledExtensionNames = exts.data();
  VkResult r = ifn.vkCreateDevice(phys, &dci, nullptr, &d->device);
  if (r != VK_SUCCESS) {
    *skip = strprintf("vkCreateDevice(%s) failed: %s", d->props.deviceName, vk_result_name(r));
    return nullptr;
  }
  std::string reason;
  if (!d->fn.Load(ifn, d->device, &reason)) {
    *skip = reason;
    ifn.vkGetDeviceProcAddr(d->device, "vkDestroyDevice");
    auto destroy = reinterpret_cast<PFN_vkDestroyDevice>(
        ifn.vkGetDeviceProcAddr(d->device, "vkDestroyDevice"));
    if (destroy) destroy(d->device, nullptr);
    d->device = VK_NULL_HANDLE;
    return nullptr;
  }
  d->fn.vkGetDeviceQueue(d->device, d->family, 0, &d->queue);
  d->import_host = has_host_import && d->fn.vkGetMemoryHostPointerPropertiesEXT;
  if (d->import_host && hostp.minImportedHostPointerAlignment)
    d->import_alignment = hostp.minImportedHostPointerAlignment;
  d->calibrated_timestamps = has_calibrated_timestamps && d->fn.vkGetCalibratedTimestampsEXT;
  // Test hook (test_masks_feature): a driver whose CLOCK_MONOTONIC reading
  // is wrong.
  d->test_skew_calibrated_host = test_masks_feature(c, "calibrated_timestamps_host_clock");

  const auto& m = d->memory;
  const VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                              HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                              HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                              CA = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  d->type_device = pick_type(m, DL, 0, HV);
  if (d->type_device < 0) d->type_device = pick_type(m, 0, 0, 0);
  d->type_host = pick_type(m, HV | HC, CA, DL);
  d->type_managed = pick_type(m, DL | HV | HC, CA, 0);

  open_pipeline_cache(d.get());
  std::shared_ptr<StreamState> ds;
  TS_VK_RETURN_IF_ERROR(create_stream_state(d.get(), true, false, &ds));
  d->streams.push_back(ds);
  d->default_stream = new TsStream;
  d->default_stream->device = d.get();
  d->default_stream->state = std::move(ds);
  // Memset edge patterns: 16 bytes of each byte value.
  TS_VK_RETURN_IF_ERROR(allocate(d.get(), 256 * 16, MemoryUse::kHost, &d->patterns,
                                 "the memset pattern buffer"));
  for (int v = 0; v < 256; ++v) std::memset(d->patterns.mapped + v * 16, v, 16);
  TS_VK_RETURN_IF_ERROR(start_flusher(d.get()));
  // The completion-time clock, now, while the queue is idle: without
  // VK_EXT_calibrated_timestamps (or with a driver whose answer is wrong)
  // it is measured through the queue, and no timestamp ever waits behind
  // work for it (timestamp.cpp).
  if (d->timestamps) calibrate_stamp_clock_at_creation(d.get());
  // Armed last: the device's own set-up work is not the one that fails.
  d->test_fail_end_command_buffer.store(test_masks_feature(c, "end_command_buffer_once"));
  fill_properties(d.get());
  *out = std::move(d);
  return nullptr;
}

void fill_properties(TsDevice* d) {
  TsDeviceProperties& p = d->ts;
  p = TsDeviceProperties{};
  p.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
  std::snprintf(p.name, sizeof p.name, "%s", d->props.deviceName);
  const char* vendor = vendor_name(d->props.vendorID);
  if (vendor)
    std::snprintf(p.vendor, sizeof p.vendor, "%s", vendor);
  else
    std::snprintf(p.vendor, sizeof p.vendor, "vendor 0x%04x", d->props.vendorID);
  // The driver's own name and version; the Vulkan version goes to api_version.
  if (d->driver.driverInfo[0])
    std::snprintf(p.driver_version, sizeof p.driver_version, "%s %s", d->driver.driverName,
                  d->driver.driverInfo);
  else
    std::snprintf(p.driver_version, sizeof p.driver_version, "%s (driverVersion 0x%08x)",
                  d->driver.driverName[0] ? d->driver.driverName : "unknown driver",
                  d->props.driverVersion);
  uint32_t api = d->props.apiVersion;
  std::snprintf(p.api_version, sizeof p.api_version, "Vulkan %u.%u.%u",
                VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api),
                VK_API_VERSION_PATCH(api));
  p.max_scalar_arg_bytes = d->props.limits.maxPushConstantsSize;
  // A buffer argument binds buffer size - offset bytes (Kernel_Launch).
  p.max_buffer_arg_bytes = d->props.limits.maxStorageBufferRange;
  // Heaps and types exactly as VkPhysicalDeviceMemoryProperties lists them
  // (same indices), with the flags Tessera names.
  p.num_memory_heaps = std::min<uint32_t>(d->memory.memoryHeapCount, TS_MAX_MEMORY_HEAPS);
  for (uint32_t i = 0; i < p.num_memory_heaps; ++i) {
    const VkMemoryHeap& h = d->memory.memoryHeaps[i];
    p.memory_heaps[i].size = h.size;
    p.memory_heaps[i].flags =
        (h.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) ? TS_MEMORY_DEVICE_LOCAL : 0u;
  }
  p.num_memory_types = std::min<uint32_t>(d->memory.memoryTypeCount, TS_MAX_MEMORY_TYPES);
  for (uint32_t i = 0; i < p.num_memory_types; ++i) {
    const VkMemoryType& t = d->memory.memoryTypes[i];
    uint32_t f = 0;
    if (t.propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) f |= TS_MEMORY_DEVICE_LOCAL;
    if (t.propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) f |= TS_MEMORY_HOST_VISIBLE;
    if (t.propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) f |= TS_MEMORY_HOST_COHERENT;
    if (t.propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) f |= TS_MEMORY_HOST_CACHED;
    p.memory_types[i].heap_index = t.heapIndex;
    p.memory_types[i].flags = f;
  }
  switch (d->props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_CPU: p.type = TS_DEVICE_TYPE_SOFTWARE; break;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: p.type = TS_DEVICE_TYPE_DISCRETE_GPU; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: p.type = TS_DEVICE_TYPE_INTEGRATED_GPU; break;
    default: p.type = TS_DEVICE_TYPE_VIRTUAL; break;
  }
  p.ordinal = d->ordinal;
  for (uint32_t i = 0; i < d->memory.memoryHeapCount; ++i)
    if (d->memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      p.total_memory += d->memory.memoryHeaps[i].size;
  p.buffer_kinds = 1u << TS_BUFFER_DEVICE;
  if (d->type_host >= 0) p.buffer_kinds |= 1u << TS_BUFFER_HOST_PINNED;
  if (d->type_managed >= 0) p.buffer_kinds |= 1u << TS_BUFFER_MANAGED;
  // Managed buffers live in a DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT type
  // (UMA, or a host-visible VRAM window): host and device both reach them,
  // shared in place, so managed_memory is 1 (the header's meaning).  Nothing
  // migrates, so the hints do nothing.
  p.managed_memory = d->type_managed >= 0 ? 1 : 0;
  p.prefetch_hint = TS_HINT_IGNORED;
  p.advise_hint = TS_HINT_IGNORED;
  p.peer_copy = TS_PEER_COPY_HOST_STAGED;
  p.graphs = 1;
  p.collectives = TS_COLLECTIVE_CAP_ALL_REDUCE | TS_COLLECTIVE_CAP_BROADCAST |
                  TS_COLLECTIVE_CAP_ALL_GATHER | TS_COLLECTIVE_CAP_REDUCE_SCATTER |
                  TS_COLLECTIVE_CAP_DETERMINISTIC;
  // Vulkan scopes: Invocation, Subgroup, Workgroup, QueueFamily/Device.  No
  // system scope (host and peers) in Vulkan's memory model.
  p.atomic_scopes = TS_ATOMIC_SCOPE_TILE | TS_ATOMIC_SCOPE_GROUP | TS_ATOMIC_SCOPE_DEVICE;
  p.subgroup_size = d->subgroup.subgroupSize;
  p.shared_memory_per_group = d->props.limits.maxComputeSharedMemorySize;
  p.max_group_size = d->props.limits.maxComputeWorkGroupInvocations;
  // Vulkan does not report compute units; a CPU device runs on the host's cores.
  p.compute_units = d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                        ? std::thread::hardware_concurrency()
                        : 0;
  p.stream_weights = 0;  // one queue in submission order
  std::snprintf(p.executable_formats, sizeof p.executable_formats, "spirv,archive:spirv");
  // What kernels may use: the features the device was created with (the
  // ones Executable_Load checks a module against), less what the test hook
  // masks.
  const EnabledFeatures& f = d->features;
  p.kernel_features_known = 1;
  p.shader_types = (f.v12.shaderInt8 ? TS_SHADER_TYPE_INT8 : 0u) |
                   (f.f2.features.shaderInt16 ? TS_SHADER_TYPE_INT16 : 0u) |
                   (f.f2.features.shaderInt64 ? TS_SHADER_TYPE_INT64 : 0u) |
                   (f.v12.shaderFloat16 ? TS_SHADER_TYPE_FLOAT16 : 0u) |
                   (f.f2.features.shaderFloat64 ? TS_SHADER_TYPE_FLOAT64 : 0u);
  p.subgroup_ops = f.subgroup_ops & 0xffu;  // same bits as VkSubgroupFeatureFlagBits
  p.float_atomics =
      (f.atomic_float.shaderBufferFloat32AtomicAdd ? TS_FLOAT_ATOMIC_ADD_GLOBAL : 0u) |
      (f.atomic_float.shaderSharedFloat32AtomicAdd ? TS_FLOAT_ATOMIC_ADD_SHARED : 0u) |
      (f.atomic_float2.shaderBufferFloat32AtomicMinMax ? TS_FLOAT_ATOMIC_MIN_MAX_GLOBAL : 0u) |
      (f.atomic_float2.shaderSharedFloat32AtomicMinMax ? TS_FLOAT_ATOMIC_MIN_MAX_SHARED : 0u);
  p.subgroup_size_min = f.min_subgroup_size;
  p.subgroup_size_max = f.max_subgroup_size;
  p.subgroup_size_control = f.size_control ? 1 : 0;
  p.full_subgroups = f.full_subgroups ? 1 : 0;
  p.host_memory_import = d->import_host ? 1 : 0;
  // Kernels of two streams never run at the same time under this plugin, on
  // any device: every stream submits to the device's one VkQueue, and a
  // batch separates consecutive operations with a full pipeline barrier
  // (record_barrier, stream.cpp), whose first scope is every command earlier
  // in the queue's submission order -- other streams' batches included --
  // and whose second scope is every later one.  So a stream's operation
  // after a barrier waits for whatever any stream submitted before it, and
  // a GPU that could overlap independent submissions is serialized too
  // (only the last operation of one batch and the first of the next, with
  // no barrier between them, could overlap).  Lavapipe also executes its
  // queue's submissions one at a time.  Concurrency would need a queue per
  // stream (and barriers scoped to it): until then, 0.
  p.concurrent_streams = 0;
}

TS_VK_ENTRY(Device_GetProperties, TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->device, "Device_GetProperties", "device");
  TsDeviceProperties* out = args->properties;
  if (!out)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Device_GetProperties: properties is NULL");
  // A caller built against an older MINOR passes a shorter struct: accept
  // anything that holds the MINOR-0 fields and write only what it has room for.
  if (out->struct_size < TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Device_GetProperties: TsDeviceProperties.struct_size is %zu, smaller "
                  "than the %zu bytes of ABI 1.0: set it to TS_DEVICE_PROPERTIES_STRUCT_SIZE",
                  out->struct_size, static_cast<size_t>(TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE));
  size_t n = std::min(out->struct_size, sizeof(TsDeviceProperties));
  size_t caller = out->struct_size;
  TsExtension* ext = out->extension_start;
  std::memcpy(out, &args->device->ts, n);
  out->struct_size = caller;
  out->extension_start = ext;
  // Vendor extension (vulkan_ext.h): the device's counters.
  const TsDevice* d = args->device;
  // Append-only like the ABI's structs: a shorter (older) struct gets the
  // fields it has.
  using S = TsVulkanDeviceStats;
  for (TsExtension* e = args->extension_start; e; e = e->next) {
    if (e->type != TS_EXTENSION_VULKAN_DEVICE_STATS) continue;
    auto* st = reinterpret_cast<S*>(e);
    auto relaxed = std::memory_order_relaxed;
    if (TS_FIELD_PRESENT(e, S, queue_submits)) st->queue_submits = d->stat_submits.load(relaxed);
    if (TS_FIELD_PRESENT(e, S, submitted_commands))
      st->submitted_commands = d->stat_commands.load(relaxed);
    if (TS_FIELD_PRESENT(e, S, staged_copies)) st->staged_copies = d->stat_staged.load(relaxed);
    if (TS_FIELD_PRESENT(e, S, host_imports)) st->host_imports = d->stat_imports.load(relaxed);
    if (TS_FIELD_PRESENT(e, S, pipeline_cache_loaded_bytes))
      st->pipeline_cache_loaded_bytes = d->cache_loaded_size;
    if (TS_FIELD_PRESENT(e, S, pipeline_cache_path))
      st->pipeline_cache_path = d->cache_path.c_str();
    if (TS_FIELD_PRESENT(e, S, timeline_semaphores))
      st->timeline_semaphores = d->stat_semaphores.load(relaxed);
    if (TS_FIELD_PRESENT(e, S, validation_layer))
      st->validation_layer = d->client->validation_layer ? 1 : 0;
    if (TS_FIELD_PRESENT(e, S, debug_messenger)) st->debug_messenger = d->client->messenger ? 1 : 0;
    if (TS_FIELD_PRESENT(e, S, calibrated_timestamps))
      st->calibrated_timestamps =
          d->calibrated_timestamps && !d->calibrated_timestamps_bad.load(relaxed) ? 1 : 0;
    if (TS_FIELD_PRESENT(e, S, queue_calibrations))
      st->queue_calibrations = d->stat_queue_calibrations.load(relaxed);
  }
  return nullptr;
}

TS_VK_ENTRY(Device_GetDefaultStream, TS_DEVICE_GETDEFAULTSTREAM_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->device, "Device_GetDefaultStream", "device");
  args->stream = args->device->default_stream;
  return nullptr;
}

TS_VK_ENTRY(Device_Synchronize, TS_DEVICE_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->device, "Device_Synchronize", "device");
  return synchronize_device(args->device);
}

}  // namespace tessera::vk
