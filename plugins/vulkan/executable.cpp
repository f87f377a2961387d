// Executables and kernels: Executable_Load("spirv", or "archive:spirv" for
// several modules) -> VkShaderModules,
// GetKernel(name) -> compute pipeline for that entry point (VkPipelineCache),
// Kernel_Launch -> descriptor set + push constants + vkCmdDispatch.
//
// Launch ABI (what a SPIR-V producer must follow):
//  - buffer arguments, in order, are the storage (or uniform) buffers of
//    descriptor set 0, in increasing binding number (bindings 0..n-1);
//  - scalar arguments, in order, are the members of the push-constant block,
//    at the offsets the block declares; each must have the member's size;
//  - grid = number of workgroups; group_size must equal the shader's
//    LocalSize (or its WorkgroupSize built-in constant);
//  - Vulkan has no dynamic shared memory: shared_memory_bytes may only be
//    the size the shader already declares statically (or 0).
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "file_io.hpp"
#include "internal.hpp"
#include "spirv.hpp"
#include "tessera/kernel_archive.hpp"

namespace tessera::vk {

namespace {

// The module's kernels, for messages: "kernel 'k'" or "kernels 'a', 'b'".
std::string kernels_of(const spirv::Module& m, const std::string& origin) {
  std::string names;
  size_t n = 0;
  for (const spirv::EntryPoint& e : m.entries)
    if (e.model == 5) names += (n++ ? ", '" : "'") + e.name + "'";
  return (n == 1 ? "kernel " : "kernels ") + names + " (" + origin + ")";
}

// Each capability the module declares against the device feature it needs,
// and its workgroup memory against maxComputeSharedMemorySize; before any
// Vulkan call sees the module, so a device that lacks something gets
// TS_ERROR_UNSUPPORTED naming it instead of a crash, an undefined result or
// a validation-layer complaint (vkCreateShaderModule requires every
// capability's feature to be enabled).
//
// An allow-list: a capability is accepted only when it is listed below and
// what it needs is enabled on the device (or, for the first few, implied by
// Vulkan 1.2 itself).  Any other capability -- one the device was not
// created with (Geometry, ShaderClockKHR, ...) or one this plugin has never
// heard of -- is UNSUPPORTED naming it and the device, rather than a driver
// error or undefined behaviour.
TsError* check_capabilities(TsDevice* dev, const spirv::Module& m, const std::string& origin) {
  const EnabledFeatures& f = dev->features;
  const VkPhysicalDeviceFloatControlsProperties& fc = dev->float_controls;
  auto subgroup_op = [&](VkSubgroupFeatureFlags bit) { return (f.subgroup_ops & bit) != 0; };
  for (uint32_t cap : m.capabilities) {
    bool ok = true;
    const char* feature = "";
    switch (cap) {
#define FEAT(value, expr, name) \
  case value:                   \
    ok = (expr);                \
    feature = name;             \
    break;
      // Core Vulkan 1.2, no feature needed.
      case 0:     // Matrix
      case 1:     // Shader
      case 4437:  // DeviceGroup
      case 5301:  // ShaderNonUniform
        break;
      FEAT(9, f.v12.shaderFloat16, "VkPhysicalDeviceVulkan12Features::shaderFloat16")
      FEAT(10, f.f2.features.shaderFloat64, "VkPhysicalDeviceFeatures::shaderFloat64")
      FEAT(11, f.f2.features.shaderInt64, "VkPhysicalDeviceFeatures::shaderInt64")
      // 64-bit atomics on buffers or shared memory (the capability does not
      // say which: either feature is accepted, the driver checks the rest).
      FEAT(12, f.v12.shaderBufferInt64Atomics || f.v12.shaderSharedInt64Atomics,
           "VkPhysicalDeviceVulkan12Features::shaderBufferInt64Atomics or "
           "shaderSharedInt64Atomics")
      FEAT(22, f.f2.features.shaderInt16, "VkPhysicalDeviceFeatures::shaderInt16")
      FEAT(39, f.v12.shaderInt8, "VkPhysicalDeviceVulkan12Features::shaderInt8")
      FEAT(61, subgroup_op(VK_SUBGROUP_FEATURE_BASIC_BIT),
           "VkPhysicalDeviceSubgroupProperties::supportedOperations BASIC in compute")
      FEAT(62, subgroup_op(VK_SUBGROUP_FEATURE_VOTE_BIT),
           "VkPhysicalDeviceSubgroupProperties::supportedOperations VOTE in compute")
      FEAT(63, subgroup_op(VK_SUBGROUP_FEATURE_ARITHMETIC_BIT),
           "VkPhysicalDeviceSubgroupProperties::supportedOperations ARITHMETIC in compute")
      FEAT(64, subgroup_op(VK_SUBGROUP_FEATURE_BALLOT_BIT),
           "VkPhysicalDeviceSubgroupProperties::supportedOperations BALLOT in compute")
      FEAT(65, subgroup_op(VK_SUBGROUP_FEATURE_SHUFFLE_BIT),
           "VkPhysicalDeviceSubgroupProperties::supportedOperations SHUFFLE in compute")
      FEAT(66, subgroup_op(VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT),
           "VkPhysicalDeviceSubgroupProperties::supportedOperations SHUFFLE_RELATIVE in compute")
      FEAT(67, subgroup_op(VK_SUBGROUP_FEATURE_CLUSTERED_BIT),
           "VkPhysicalDeviceSubgroupProperties::supportedOperations CLUSTERED in compute")
      FEAT(68, subgroup_op(VK_SUBGROUP_FEATURE_QUAD_BIT),
           "VkPhysicalDeviceSubgroupProperties::supportedOperations QUAD in compute")
      FEAT(4433, f.v11.storageBuffer16BitAccess,
           "VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess")
      FEAT(4434, f.v11.uniformAndStorageBuffer16BitAccess,
           "VkPhysicalDeviceVulkan11Features::uniformAndStorageBuffer16BitAccess")
      FEAT(4435, f.v11.storagePushConstant16,
           "VkPhysicalDeviceVulkan11Features::storagePushConstant16")
      FEAT(4448, f.v12.storageBuffer8BitAccess,
           "VkPhysicalDeviceVulkan12Features::storageBuffer8BitAccess")
      FEAT(4449, f.v12.uniformAndStorageBuffer8BitAccess,
           "VkPhysicalDeviceVulkan12Features::uniformAndStorageBuffer8BitAccess")
      FEAT(4450, f.v12.storagePushConstant8,
           "VkPhysicalDeviceVulkan12Features::storagePushConstant8")
      FEAT(4441, f.v11.variablePointersStorageBuffer,
           "VkPhysicalDeviceVulkan11Features::variablePointersStorageBuffer")
      FEAT(4442, f.v11.variablePointers, "VkPhysicalDeviceVulkan11Features::variablePointers")
      // Float controls: the execution mode names the width, the plugin
      // checks the 32-bit property (Tessera's SPIR-V declares
      // SignedZeroInfNanPreserve 32 for IEEE inf/NaN).
      FEAT(4464, fc.shaderDenormPreserveFloat32,
           "VkPhysicalDeviceFloatControlsProperties::shaderDenormPreserveFloat32")
      FEAT(4465, fc.shaderDenormFlushToZeroFloat32,
           "VkPhysicalDeviceFloatControlsProperties::shaderDenormFlushToZeroFloat32")
      FEAT(4466, fc.shaderSignedZeroInfNanPreserveFloat32,
           "VkPhysicalDeviceFloatControlsProperties::shaderSignedZeroInfNanPreserveFloat32")
      FEAT(4467, fc.shaderRoundingModeRTEFloat32,
           "VkPhysicalDeviceFloatControlsProperties::shaderRoundingModeRTEFloat32")
      FEAT(4468, fc.shaderRoundingModeRTZFloat32,
           "VkPhysicalDeviceFloatControlsProperties::shaderRoundingModeRTZFloat32")
      FEAT(5345, f.v12.vulkanMemoryModel, "VkPhysicalDeviceVulkan12Features::vulkanMemoryModel")
      FEAT(5346, f.v12.vulkanMemoryModelDeviceScope,
           "VkPhysicalDeviceVulkan12Features::vulkanMemoryModelDeviceScope")
      FEAT(5347, f.v12.bufferDeviceAddress,
           "VkPhysicalDeviceVulkan12Features::bufferDeviceAddress")
      // OpAtomicFAddEXT on buffers or shared memory (the capability does not
      // say which: either feature is accepted, the driver checks the rest).
      FEAT(6033, f.atomic_float.shaderBufferFloat32AtomicAdd ||
                     f.atomic_float.shaderSharedFloat32AtomicAdd,
           "VkPhysicalDeviceShaderAtomicFloatFeaturesEXT::shaderBufferFloat32AtomicAdd "
           "(VK_EXT_shader_atomic_float)")
      FEAT(6034, f.atomic_float.shaderBufferFloat64AtomicAdd,
           "VkPhysicalDeviceShaderAtomicFloatFeaturesEXT::shaderBufferFloat64AtomicAdd "
           "(not enabled by Tessera)")
      // OpAtomicFMinEXT / OpAtomicFMaxEXT on f32 (VK_EXT_shader_atomic_float2;
      // buffer or shared, like AtomicFloat32AddEXT).
      FEAT(5612, f.atomic_float2.shaderBufferFloat32AtomicMinMax ||
                     f.atomic_float2.shaderSharedFloat32AtomicMinMax,
           "VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT::shaderBufferFloat32AtomicMinMax or "
           "shaderSharedFloat32AtomicMinMax (VK_EXT_shader_atomic_float2)")
#undef FEAT
      default:
        return errorf(TS_ERROR_UNSUPPORTED,
                      "vulkan: %s declares the SPIR-V capability %s, which the Vulkan plugin "
                      "does not enable on device '%s' (it accepts only the capabilities "
                      "docs/vulkan.md lists)",
                      kernels_of(m, origin).c_str(), spirv::CapabilityName(cap).c_str(),
                      dev->props.deviceName);
    }
    if (!ok)
      return errorf(TS_ERROR_UNSUPPORTED,
                    "vulkan: %s needs the SPIR-V capability %s (%s), which device '%s' does "
                    "not support",
                    kernels_of(m, origin).c_str(), spirv::CapabilityName(cap).c_str(), feature,
                    dev->props.deviceName);
  }
  if (m.subgroup_extended_types && !f.v12.shaderSubgroupExtendedTypes)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: %s uses subgroup operations on 8/16/64-bit values, which need "
                  "VkPhysicalDeviceVulkan12Features::shaderSubgroupExtendedTypes; device '%s' "
                  "does not support it",
                  kernels_of(m, origin).c_str(), dev->props.deviceName);
  uint64_t shared_max = dev->props.limits.maxComputeSharedMemorySize;
  if (m.shared_bytes > shared_max)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: %s needs %s of shared (workgroup) memory per group; device '%s' "
                  "has %s (VkPhysicalDeviceLimits::maxComputeSharedMemorySize)",
                  kernels_of(m, origin).c_str(), human_size(m.shared_bytes).c_str(),
                  dev->props.deviceName, human_size(shared_max).c_str());
  return nullptr;
}

bool uses_subgroup_ops(const spirv::Module& m) {
  // GroupNonUniform* are capabilities 61..68.
  return std::any_of(m.capabilities.begin(), m.capabilities.end(),
                     [](uint32_t c) { return c >= 61 && c <= 68; });
}

}  // namespace

namespace {

// What one executable may hold at most: a hostile path (/dev/zero, a sparse
// file) must not make the plugin read without end.
constexpr size_t kMaxExecutableBytes = size_t{256} << 20;

// Checks one SPIR-V module and creates its VkShaderModule.
TsError* load_image(TsDevice* dev, const std::string& bytes, std::string origin, ShaderImage* out) {
  if (bytes.empty() || bytes.size() % 4 != 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: %s is %zu bytes, not a whole number of 32-bit SPIR-V words",
                  origin.c_str(), bytes.size());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  spirv::Module m;
  std::string why;
  if (!spirv::Reflect(words.data(), words.size(), &m, &why))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: %s: %s", origin.c_str(), why.c_str());
  if (std::none_of(m.entries.begin(), m.entries.end(),
                   [](const spirv::EntryPoint& e) { return e.model == 5; }))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: %s has no GLCompute entry point (a compute shader is needed)",
                  origin.c_str());
  for (const spirv::Binding& b : m.bindings)
    if (b.set != 0)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "vulkan: %s binds a buffer at descriptor set %u; Tessera passes buffer "
                    "arguments in set 0",
                    origin.c_str(), b.set);
  TS_VK_RETURN_IF_ERROR(check_capabilities(dev, m, origin));
  out->origin = std::move(origin);
  out->words = std::move(words);
  VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  ci.codeSize = out->words.size() * 4;
  ci.pCode = out->words.data();
  VkResult r = dev->fn.vkCreateShaderModule(dev->device, &ci, nullptr, &out->module);
  if (r != VK_SUCCESS) return vk_error(r, "vkCreateShaderModule(" + out->origin + ")");
  return nullptr;
}

void destroy_images(TsDevice* dev, TsExecutable* exe) {
  for (ShaderImage& image : exe->images)
    if (image.module) dev->fn.vkDestroyShaderModule(dev->device, image.module, nullptr);
  exe->images.clear();
}

}  // namespace

TS_VK_ENTRY(Executable_Load, TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->device, "Executable_Load", "device");
  TsDevice* dev = args->device;
  if (!args->format)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: Executable_Load: format is NULL; this plugin loads \"spirv\" and "
                  "\"archive:spirv\"");
  const bool archive = std::strcmp(args->format, "archive:spirv") == 0;
  if (!archive && std::strcmp(args->format, "spirv") != 0)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: Executable_Load: format '%s' is not supported; this plugin "
                  "loads \"spirv\" and \"archive:spirv\"",
                  args->format);
  std::string origin;
  std::string bytes;
  if (args->data) {
    origin = std::string(archive ? "SPIR-V archive" : "SPIR-V module") + " (in memory)";
    if (args->size > kMaxExecutableBytes)
      return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Executable_Load: %s is %s, more than the %s an "
                    "executable may be", origin.c_str(), human_size(args->size).c_str(),
                    human_size(kMaxExecutableBytes).c_str());
    bytes.assign(static_cast<const char*>(args->data), args->size);
  } else {
    if (!args->path)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "vulkan: Executable_Load: neither data nor path is set");
    origin = std::string(archive ? "SPIR-V archive " : "SPIR-V module ") + args->path;
    // Regular files only, at most the limit: a FIFO, /dev/zero or a folder
    // is an error naming the file, not a hang or a 17 GB allocation.
    plugin_support::FileReadResult r = plugin_support::ReadBoundedFile(args->path, kMaxExecutableBytes, &bytes);
    if (!r.ok())
      return errorf(r.status == plugin_support::FileReadStatus::kCannotOpen ? TS_ERROR_NOT_FOUND
                                                                            : TS_ERROR_INVALID_ARGUMENT,
                    "vulkan: Executable_Load: %s", r.message.c_str());
  }
  auto exe = std::make_unique<TsExecutable>();
  exe->device = dev;
  exe->origin = origin;
  auto fail = [&](TsError* e) {
    destroy_images(dev, exe.get());
    return e;
  };
  if (archive) {
    std::vector<ArchiveEntry> entries;
    std::string why = ReadKernelArchive(bytes.data(), bytes.size(), &entries);
    if (!why.empty())
      return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: %s: %s", origin.c_str(), why.c_str());
    if (entries.empty())
      return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: %s holds no kernel", origin.c_str());
    for (const ArchiveEntry& e : entries) {
      exe->images.emplace_back();
      if (TsError* err = load_image(dev, e.data, origin + " entry '" + e.name + "'", &exe->images.back()))
        return fail(err);
    }
  } else {
    exe->images.emplace_back();
    if (TsError* err = load_image(dev, bytes, origin, &exe->images.back())) return fail(err);
  }
  std::lock_guard<std::mutex> lk(dev->mu);
  dev->live.executables.insert(exe.get());
  args->executable = exe.release();
  return nullptr;
}

namespace {

void destroy_kernel(TsDevice* dev, TsKernel* k) {
  const DeviceFns& f = dev->fn;
  if (k->pipeline) f.vkDestroyPipeline(dev->device, k->pipeline, nullptr);
  if (k->layout) f.vkDestroyPipelineLayout(dev->device, k->layout, nullptr);
  if (k->set_layout) f.vkDestroyDescriptorSetLayout(dev->device, k->set_layout, nullptr);
  k->magic = kMagicDead;
}

TsError* build_kernel(TsExecutable* exe, const std::string& name, TsKernel* k) {
  TsDevice* dev = exe->device;
  const DeviceFns& f = dev->fn;
  // The image whose module has a compute entry point of that name.
  spirv::Module m;
  const spirv::EntryPoint* e = nullptr;
  const ShaderImage* image = nullptr;
  std::string names;
  for (const ShaderImage& candidate : exe->images) {
    spirv::Module cm;
    std::string why;
    if (!spirv::Reflect(candidate.words.data(), candidate.words.size(), &cm, &why))
      return errorf(TS_ERROR_INTERNAL, "vulkan: %s", why.c_str());
    bool found = false;
    for (const spirv::EntryPoint& x : cm.entries) {
      if (x.model != 5) continue;
      names += (names.empty() ? "" : ", ") + x.name;
      found |= x.name == name;
    }
    if (found && !image) {
      m = std::move(cm);
      image = &candidate;
      for (const spirv::EntryPoint& x : m.entries)
        if (x.model == 5 && x.name == name) e = &x;
    }
  }
  if (!e)
    return errorf(TS_ERROR_NOT_FOUND,
                  "vulkan: %s has no compute entry point named '%s' (it has: %s)",
                  exe->origin.c_str(), name.c_str(), names.c_str());
  const uint32_t* local = m.has_workgroup_size_constant ? m.workgroup_size : e->local;
  if (!m.has_workgroup_size_constant && !e->has_local)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: entry point '%s' of %s declares no LocalSize", name.c_str(),
                  exe->origin.c_str());
  const VkPhysicalDeviceLimits& lim = dev->props.limits;
  uint64_t invocations = uint64_t{local[0]} * local[1] * local[2];
  for (int d = 0; d < 3; ++d)
    if (local[d] > lim.maxComputeWorkGroupSize[d] ||
        invocations > lim.maxComputeWorkGroupInvocations)
      return errorf(TS_ERROR_UNSUPPORTED,
                    "vulkan: kernel '%s' has group size (%u,%u,%u); %s allows at most "
                    "(%u,%u,%u) and %u invocations per group",
                    name.c_str(), local[0], local[1], local[2], dev->props.deviceName,
                    lim.maxComputeWorkGroupSize[0], lim.maxComputeWorkGroupSize[1],
                    lim.maxComputeWorkGroupSize[2], lim.maxComputeWorkGroupInvocations);
  bool filter = m.version >= 0x00010400;
  k->executable = exe;
  k->name = name;
  std::copy(local, local + 3, k->local);
  k->shared_bytes = m.shared_bytes;
  if (filter) {  // SPIR-V 1.4+: only the Workgroup variables this entry uses
    k->shared_bytes = 0;
    for (const auto& [id, bytes] : m.shared_variables)
      if (std::find(e->interface.begin(), e->interface.end(), id) != e->interface.end())
        k->shared_bytes += bytes;
  }
  // Which bindings belong to this entry point: SPIR-V 1.4+ lists every global
  // an entry point uses; before that, every binding of the module counts.
  std::vector<VkDescriptorSetLayoutBinding> lb;
  for (const spirv::Binding& b : m.bindings) {
    if (filter && std::find(e->interface.begin(), e->interface.end(), b.variable) ==
                      e->interface.end())
      continue;
    VkDescriptorType type =
        b.uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    k->bindings.push_back({b.binding, type});
    lb.push_back({b.binding, type, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  }
  if (m.push_variable && (!filter || std::find(e->interface.begin(), e->interface.end(),
                                               m.push_variable) != e->interface.end())) {
    k->push_members = m.push_members;
    k->push_size = (m.push_size + 3) / 4 * 4;
    if (k->push_size > lim.maxPushConstantsSize || k->push_size > 4096)
      return errorf(TS_ERROR_UNSUPPORTED,
                    "vulkan: kernel '%s' has %u bytes of scalar arguments (push constants); "
                    "%s allows %u (maxPushConstantsSize)",
                    name.c_str(), k->push_size, dev->props.deviceName,
                    lim.maxPushConstantsSize);
  }
  VkDescriptorSetLayoutCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dci.bindingCount = static_cast<uint32_t>(lb.size());
  dci.pBindings = lb.data();
  TS_VK_CALL(f.vkCreateDescriptorSetLayout(dev->device, &dci, nullptr, &k->set_layout),
             "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_size};
  VkPipelineLayoutCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pci.setLayoutCount = 1;
  pci.pSetLayouts = &k->set_layout;
  pci.pushConstantRangeCount = k->push_size ? 1 : 0;
  pci.pPushConstantRanges = &range;
  TS_VK_CALL(f.vkCreatePipelineLayout(dev->device, &pci, nullptr, &k->layout),
             "vkCreatePipelineLayout");
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = image->module;
  cpi.stage.pName = k->name.c_str();
  // Subgroup code (shuffles, reductions) assumes full subgroups of
  // consecutive lanes; without this flag a driver may run partial ones.
  // Vulkan allows the flag only when X is a multiple of maxSubgroupSize
  // (VUID-VkPipelineShaderStageCreateInfo-flags-02759); other group sizes
  // keep the driver's default and docs/spirv-lowering.md says so.
  if (uses_subgroup_ops(m) && dev->features.full_subgroups &&
      dev->features.max_subgroup_size && local[0] % dev->features.max_subgroup_size == 0) {
    cpi.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    k->full_subgroups = true;
  }
  cpi.layout = k->layout;
  TS_VK_CALL(f.vkCreateComputePipelines(dev->device, dev->pipeline_cache, 1, &cpi, nullptr,
                                        &k->pipeline),
             "vkCreateComputePipelines('" + name + "')");
  dev->pipelines_built.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace

TsError* destroy_executable(TsExecutable* exe) {
  TsDevice* dev = exe->device;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->live.executables.erase(exe);
  }
  TsError* e = synchronize_device(dev);  // never unload under running work
  for (auto& [name, k] : exe->kernels) destroy_kernel(dev, k.get());
  destroy_images(dev, exe);
  exe->magic = kMagicDead;
  delete exe;
  return e;
}

TS_VK_ENTRY(Executable_Destroy, TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->executable, "Executable_Destroy", "executable");
  return destroy_executable(args->executable);
}

namespace {

// The out-fields appended after `kernel`, each written only when the caller's
// struct_size covers it (an older core passes a shorter struct).
void report_kernel(TsExecutable_GetKernel_Args* args, const TsKernel* k) {
  args->kernel = const_cast<TsKernel*>(k);
  using A = TsExecutable_GetKernel_Args;
  if (TS_FIELD_PRESENT(args, A, required_group_size))
    args->required_group_size = TsDim3{k->local[0], k->local[1], k->local[2]};
  if (TS_FIELD_PRESENT(args, A, num_buffer_args))
    args->num_buffer_args = static_cast<uint32_t>(k->bindings.size());
  if (TS_FIELD_PRESENT(args, A, scalar_arg_bytes)) args->scalar_arg_bytes = k->push_size;
  if (TS_FIELD_PRESENT(args, A, static_shared_memory_bytes))
    args->static_shared_memory_bytes = static_cast<uint32_t>(k->shared_bytes);
  if (TS_FIELD_PRESENT(args, A, args_known)) args->args_known = 1;
}

}  // namespace

// The minimum is the MINOR-0 layout (up to `kernel`): the reflection fields
// after it are optional outputs.
TS_VK_ENTRY(Executable_GetKernel, TS_STRUCT_SIZE(TsExecutable_GetKernel_Args, kernel)) {
  TS_VK_CHECK_HANDLE(args->executable, "Executable_GetKernel", "executable");
  if (!args->name)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Executable_GetKernel: name is NULL");
  TsExecutable* exe = args->executable;
  std::lock_guard<std::mutex> lk(exe->mu);
  auto it = exe->kernels.find(args->name);
  if (it != exe->kernels.end()) {
    report_kernel(args, it->second.get());
    return nullptr;
  }
  auto k = std::make_unique<TsKernel>();
  if (TsError* e = build_kernel(exe, args->name, k.get())) {
    destroy_kernel(exe->device, k.get());
    return e;
  }
  report_kernel(args, k.get());
  exe->kernels.emplace(args->name, std::move(k));
  return nullptr;
}

TS_VK_ENTRY(Kernel_Launch, TS_KERNEL_LAUNCH_ARGS_MIN_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->kernel, "Kernel_Launch", "kernel");
  TS_VK_CHECK_HANDLE(args->stream, "Kernel_Launch", "stream");
  TsKernel* k = args->kernel;
  TsDevice* dev = k->executable->device;
  const char* kn = k->name.c_str();
  if (args->stream->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: launch of '%s': the stream is on another device than the kernel",
                  kn);
  const TsDim3 gs = args->group_size, grid = args->grid;
  if (gs.x != k->local[0] || gs.y != k->local[1] || gs.z != k->local[2])
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: launch of '%s' with group size (%u,%u,%u), but the SPIR-V was "
                  "compiled for (%u,%u,%u) (its LocalSize); Vulkan fixes the group size in "
                  "the shader",
                  kn, gs.x, gs.y, gs.z, k->local[0], k->local[1], k->local[2]);
  const VkPhysicalDeviceLimits& lim = dev->props.limits;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: launch of '%s': empty grid", kn);
  if (grid.x > lim.maxComputeWorkGroupCount[0] || grid.y > lim.maxComputeWorkGroupCount[1] ||
      grid.z > lim.maxComputeWorkGroupCount[2])
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: launch of '%s': grid (%u,%u,%u) exceeds the device's "
                  "maxComputeWorkGroupCount (%u,%u,%u)",
                  kn, grid.x, grid.y, grid.z, lim.maxComputeWorkGroupCount[0],
                  lim.maxComputeWorkGroupCount[1], lim.maxComputeWorkGroupCount[2]);
  if (args->shared_memory_bytes > lim.maxComputeSharedMemorySize)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: launch of '%s' asks for %s of shared memory per group; %s has %s "
                  "(maxComputeSharedMemorySize)",
                  kn, human_size(args->shared_memory_bytes).c_str(), dev->props.deviceName,
                  human_size(lim.maxComputeSharedMemorySize).c_str());
  if (args->shared_memory_bytes > k->shared_bytes)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: launch of '%s' asks for %llu bytes of dynamic shared memory; "
                  "Vulkan has none: declare the shared array in the shader (it declares "
                  "%llu bytes)",
                  kn, static_cast<unsigned long long>(args->shared_memory_bytes),
                  static_cast<unsigned long long>(k->shared_bytes));
  if (args->num_args && !args->args)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: launch of '%s': args is NULL", kn);

  // Sort the arguments into descriptors and push-constant bytes.
  // Per-thread scratch, reused launch after launch: no allocation per launch
  // once warm (the call never re-enters itself on one thread).
  thread_local std::vector<VkDescriptorBufferInfo> infos;
  thread_local std::vector<VkWriteDescriptorSet> writes;
  infos.clear();
  // Only the block's bytes are cleared (gaps between members are pushed too).
  uint8_t push[4096];  // > any maxPushConstantsSize in use (checked in build_kernel)
  std::memset(push, 0, std::min<size_t>(k->push_size, sizeof push));
  size_t nbuf = 0, nscalar = 0;
  for (size_t i = 0; i < args->num_args; ++i) {
    const TsKernelArg& a = args->args[i];
    // The kind is checked as an integer before it is read as the enum.
    if (const int64_t kind = plugin_support::raw_enum(a.kind);
        kind != TS_KERNEL_ARG_SCALAR && kind != TS_KERNEL_ARG_BUFFER)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "vulkan: Kernel_Launch: argument %zu has kind %lld, not a TsKernelArgKind",
                    i, static_cast<long long>(kind));
    if (a.kind == TS_KERNEL_ARG_BUFFER) {
      TS_VK_CHECK_HANDLE(a.buffer, "Kernel_Launch", "buffer argument");
      if (a.buffer->device != dev)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "vulkan: launch of '%s': argument %zu is a buffer on another device",
                      kn, i);
      if (nbuf >= k->bindings.size())
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "vulkan: launch of '%s': more buffer arguments than the %zu buffers "
                      "the shader binds in set 0",
                      kn, k->bindings.size());
      bool uniform = k->bindings[nbuf].second == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
      uint64_t align = uniform ? lim.minUniformBufferOffsetAlignment
                               : lim.minStorageBufferOffsetAlignment;
      if (a.offset >= a.buffer->size)
        return errorf(TS_ERROR_OUT_OF_RANGE,
                      "vulkan: launch of '%s': buffer argument %zu has offset %llu, past the "
                      "end of its buffer of %llu bytes",
                      kn, i, static_cast<unsigned long long>(a.offset),
                      static_cast<unsigned long long>(a.buffer->size));
      if (align && a.offset % align)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "vulkan: launch of '%s': buffer argument %zu has offset %llu; it must "
                      "lie inside the buffer and be a multiple of %llu (min%sBufferOffset"
                      "Alignment)",
                      kn, i, static_cast<unsigned long long>(a.offset),
                      static_cast<unsigned long long>(align), uniform ? "Uniform" : "Storage");
      // The binding covers the rest of the buffer: the shader may index all
      // of it, and the ABI does not say how much it reads.  Vulkan bounds a
      // binding by max{Storage,Uniform}BufferRange; a shorter binding would
      // silently cut the kernel's view of its argument, so refuse.
      uint64_t range = a.buffer->size - a.offset;
      uint64_t max_range = uniform ? lim.maxUniformBufferRange : lim.maxStorageBufferRange;
      if (range > max_range)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "vulkan: launch of '%s': buffer argument %zu (binding %u, a %s "
                      "buffer) spans %llu bytes (%s) from offset %llu of a buffer of %llu "
                      "bytes; device '%s' can bind at most %llu bytes (%s) to one %s "
                      "buffer (%s): split the data over several buffers or arguments at "
                      "offsets",
                      kn, i, k->bindings[nbuf].first, uniform ? "uniform" : "storage",
                      static_cast<unsigned long long>(range), human_size(range).c_str(),
                      static_cast<unsigned long long>(a.offset),
                      static_cast<unsigned long long>(a.buffer->size), dev->props.deviceName,
                      static_cast<unsigned long long>(max_range),
                      human_size(max_range).c_str(), uniform ? "uniform" : "storage",
                      uniform ? "VkPhysicalDeviceLimits::maxUniformBufferRange"
                              : "VkPhysicalDeviceLimits::maxStorageBufferRange, "
                                "TsDeviceProperties.max_buffer_arg_bytes");
      infos.push_back({a.buffer->alloc.buffer, a.offset, range});
      ++nbuf;
    } else if (a.kind == TS_KERNEL_ARG_SCALAR) {
      if (nscalar >= k->push_members.size())
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "vulkan: launch of '%s': scalar argument %zu has no push-constant "
                      "member to go to (the shader declares %zu)",
                      kn, i, k->push_members.size());
      auto [off, sz] = k->push_members[nscalar];
      if (a.size != sz || !a.data || off + sz > sizeof push)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "vulkan: launch of '%s': scalar argument %zu is %zu bytes; push-"
                      "constant member %zu is %u bytes",
                      kn, i, a.size, nscalar, sz);
      std::memcpy(push + off, a.data, sz);
      ++nscalar;
    } else {
      return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: launch of '%s': argument %zu has "
                    "unknown kind %d", kn, i, static_cast<int>(a.kind));
    }
  }
  if (nbuf != k->bindings.size() || nscalar != k->push_members.size())
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "vulkan: launch of '%s' with %zu buffer and %zu scalar arguments; the "
                  "shader takes %zu buffers (set 0) and %zu push-constant members",
                  kn, nbuf, nscalar, k->bindings.size(), k->push_members.size());

  uint64_t* completion_ns =
      TS_FIELD_PRESENT(args, TsKernel_Launch_Args, completion_ns) ? args->completion_ns : nullptr;
  if (completion_ns) TS_VK_RETURN_IF_ERROR(ensure_stamp_clock(dev));
  StreamState& s = *args->stream->state;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (completion_ns && s.capture)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: launch of '%s' with completion_ns on %s, which is capturing a graph: "
                  "a graph replayed later has nowhere to write the time",
                  kn, s.label.c_str());
  CommandList* cl = nullptr;
  TS_VK_RETURN_IF_ERROR(begin_op_locked(s, &cl));
  if (s.capture) {  // what the graph's replays will need
    capture_note_locked(s, k->executable->life,
                        strprintf("the executable of kernel '%s' (%s)", kn,
                                  k->executable->origin.c_str()));
    for (size_t i = 0, b = 0; i < args->num_args; ++i)
      if (args->args[i].kind == TS_KERNEL_ARG_BUFFER)
        capture_note_locked(s, args->args[i].buffer->life,
                            strprintf("buffer argument %zu (%s) of the launch of kernel '%s'",
                                      b++, describe_buffer(args->args[i].buffer).c_str(), kn));
  }
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (!k->bindings.empty()) {
    TS_VK_RETURN_IF_ERROR(allocate_descriptor_set(dev, *cl, k->set_layout, &set));
    writes.resize(infos.size());
    for (size_t i = 0; i < infos.size(); ++i) {
      VkWriteDescriptorSet& w = writes[i];
      w = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = set;
      w.dstBinding = k->bindings[i].first;
      w.descriptorCount = 1;
      w.descriptorType = k->bindings[i].second;
      w.pBufferInfo = &infos[i];
    }
    dev->fn.vkUpdateDescriptorSets(dev->device, static_cast<uint32_t>(writes.size()),
                                   writes.data(), 0, nullptr);
  }
  VkCommandBuffer cb = cl->cb;
  dev->fn.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  if (set)
    dev->fn.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set,
                                    0, nullptr);
  if (k->push_size)
    dev->fn.vkCmdPushConstants(cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_size,
                               push);
  dev->fn.vkCmdDispatch(cb, grid.x, grid.y, grid.z);
  TS_VK_RETURN_IF_ERROR(end_op_locked(s));
  // The kernel is queued; a failure here loses only its time.
  return completion_ns ? record_stamp_locked(s, completion_ns) : nullptr;
}

}  // namespace tessera::vk
