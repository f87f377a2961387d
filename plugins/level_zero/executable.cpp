// Executables and kernels: Executable_Load (zeModuleCreate with
// ZE_MODULE_FORMAT_IL_SPIRV per module, the driver's build log from
// zeModuleBuildLogGetString in the message on failure), Executable_GetKernel
// (zeKernelCreate + zeKernelGetProperties), Kernel_Launch
// (zeKernelSetGroupSize + zeKernelSetArgumentValue per argument +
// zeCommandListAppendLaunchKernel, under the device's lock: a kernel's
// arguments are state the next append captures).
//
// Formats: "spirv-kernel" (one module, any number of Kernel entry points) and
// "archive:spirv-kernel" (a kernel archive, tessera/kernel_archive.hpp, one SPIR-V
// module per kernel, named by it).  Every module is checked first
// (spirv.cpp): header, word counts, a Kernel entry point.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "file_io.hpp"
#include "internal.hpp"
#include "tessera/kernel_archive.hpp"

namespace tessera::level_zero {

namespace {

constexpr size_t kMaxKernelName = 4096;
constexpr size_t kMaxLaunchArgs = 4096;

// Regular files only, at most kMaxImageBytes (a FIFO or /dev/zero is refused
// with the file's name and the limit, never read without end).
TsError* read_file(const char* path, std::vector<uint8_t>* out) {
  return plugin_support::ReadExecutableFile("level_zero", path, spirv::kMaxImageBytes, out);
}

// One SPIR-V module for the device; the build log joins the error.
TsError* create_module(TsDevice* dev, const std::string& bytes, const std::string& what,
                       ze_module_handle_t* out) {
  const ZeFns& fn = *dev->fn;
  ze_module_desc_t md{};
  md.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  md.format = ZE_MODULE_FORMAT_IL_SPIRV;
  md.inputSize = bytes.size();
  md.pInputModule = reinterpret_cast<const uint8_t*>(bytes.data());
  md.pBuildFlags = "";
  ze_module_build_log_handle_t log = nullptr;
  ze_result_t r = fn.zeModuleCreate(dev->client->context, dev->ze, &md, out, &log);
  std::string text;
  if (r != ZE_RESULT_SUCCESS && log) {
    size_t n = 0;
    if (fn.zeModuleBuildLogGetString(log, &n, nullptr) == ZE_RESULT_SUCCESS && n > 0 &&
        n <= kMaxBuildLogBytes) {
      std::vector<char> buf(n + 1, '\0');
      if (fn.zeModuleBuildLogGetString(log, &n, buf.data()) == ZE_RESULT_SUCCESS) {
        buf[std::min(n, buf.size() - 1)] = '\0';
        text.assign(buf.data(), strnlen(buf.data(), buf.size()));
      }
    } else if (n > kMaxBuildLogBytes) {
      text = "(a build log of " + std::to_string(n) + " bytes, not read)";
    }
  }
  if (log) fn.zeModuleBuildLogDestroy(log);
  if (r == ZE_RESULT_SUCCESS) return nullptr;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\0'))
    text.pop_back();
  TsError* e = dev_error(dev, r, "zeModuleCreate(" + what + ")");
  if (!text.empty()) e->message += "\nbuild log:\n" + text;
  *out = nullptr;
  return e;
}

}  // namespace

TS_ZE_ENTRY(Executable_Load, TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->device, "Executable_Load", "device");
  TsDevice* dev = args->device;
  if (args->format == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Executable_Load: format is NULL");
  const std::string format = args->format ? std::string(args->format, strnlen(args->format, 64)) : "";
  if (format != "archive:spirv-kernel" && format != "spirv-kernel")
    return errorf(TS_ERROR_UNSUPPORTED,
                  "level_zero: Executable_Load: format '%s' is not one the level_zero plugin "
                  "loads (archive:spirv-kernel, spirv-kernel)",
                  format.c_str());
  std::vector<uint8_t> file;
  const void* data = args->data;
  size_t size = args->size;
  std::string origin = "<memory>";
  if (!data) {
    if (!args->path)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: Executable_Load: neither data nor a path was given");
    TS_ZE_RETURN_IF_ERROR(read_file(args->path, &file));
    data = file.data();
    size = file.size();
    origin = args->path;
  }
  if (size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Executable_Load: the %s image from %s is empty", format.c_str(),
                  origin.c_str());
  if (size > spirv::kMaxImageBytes)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Executable_Load: the %s image from %s is %s; at most %s are "
                  "accepted",
                  format.c_str(), origin.c_str(), human_size(size).c_str(),
                  human_size(spirv::kMaxImageBytes).c_str());
  std::vector<ArchiveEntry> entries;
  if (format == "archive:spirv-kernel") {
    std::string why = ReadKernelArchive(data, size, &entries);
    if (why.empty() && entries.empty()) why = "the kernel archive has no entries";
    if (!why.empty())
      return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Executable_Load: %s from %s: %s",
                    format.c_str(), origin.c_str(), why.c_str());
  } else {
    entries.push_back(ArchiveEntry{"", std::string(static_cast<const char*>(data), size)});
  }
  auto exe = std::make_unique<TsExecutable>();
  exe->device = dev;
  exe->format = format;
  exe->origin = origin;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ArchiveEntry& e = entries[i];
    spirv::Module info;
    std::string why = spirv::CheckModule(e.data.data(), e.data.size(), &info);
    TsErrorCode code = TS_ERROR_INVALID_ARGUMENT;
    if (why.empty()) {
      why = spirv::CheckVersion(info.version, dev->module.spirvVersionSupported);
      if (!why.empty()) code = TS_ERROR_UNSUPPORTED;  // a valid module this device does not take
    }
    if (why.empty() && !e.name.empty()) {
      bool has = false;
      for (const spirv::Kernel& k : info.kernels) has = has || k.name == e.name;
      if (!has) why = "its module has no Kernel entry point named '" + e.name + "'";
      if (exe->entry.count(e.name)) why = "a second entry named '" + e.name + "'";
    }
    if (!why.empty()) {
      for (ze_module_handle_t m : exe->modules) dev->fn->zeModuleDestroy(m);
      return errorf(code, "level_zero: Executable_Load: %s%s%s from %s: %s", format.c_str(),
                    e.name.empty() ? "" : " entry '", e.name.c_str(), origin.c_str(), why.c_str());
    }
    ze_module_handle_t m = nullptr;
    const std::string what = strprintf("SPIR-V %s%s%s, %s, from %s",
                                       e.name.empty() ? "" : "'", e.name.c_str(),
                                       e.name.empty() ? "module" : "'",
                                       human_size(e.data.size()).c_str(), origin.c_str());
    if (TsError* err = create_module(dev, e.data, what, &m)) {
      for (ze_module_handle_t loaded : exe->modules) dev->fn->zeModuleDestroy(loaded);
      return err;
    }
    exe->modules.push_back(m);
    exe->infos.push_back(std::move(info));
    if (!e.name.empty()) exe->entry[e.name] = i;
  }
  dev->live_executables.add(exe.get());
  args->executable = exe.release();
  return nullptr;
}

TS_ZE_ENTRY(Executable_Destroy, TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->executable, "Executable_Destroy", "executable");
  TsExecutable* exe = args->executable;
  TsDevice* dev = exe->device;
  TsError* e = synchronize_device(dev);  // never destroy under running kernels
  for (auto& [name, k] : exe->kernels) {
    ze_result_t r = dev->fn->zeKernelDestroy(k->kernel);
    if (r != ZE_RESULT_SUCCESS && !e) e = dev_error(dev, r, "zeKernelDestroy('" + name + "')");
    k->magic = kMagicDead;
  }
  for (ze_module_handle_t m : exe->modules) {
    ze_result_t r = dev->fn->zeModuleDestroy(m);
    if (r != ZE_RESULT_SUCCESS && !e) e = dev_error(dev, r, "zeModuleDestroy");
  }
  dev->live_executables.remove(exe);
  exe->magic = kMagicDead;
  delete exe;
  return e;
}

TS_ZE_ENTRY(Executable_GetKernel, TS_EXECUTABLE_GETKERNEL_ARGS_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->executable, "Executable_GetKernel", "executable");
  TsExecutable* exe = args->executable;
  TsDevice* dev = exe->device;
  if (!args->name || !*args->name)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: Executable_GetKernel: no kernel name");
  const size_t len = strnlen(args->name, kMaxKernelName + 1);
  if (len > kMaxKernelName)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: Executable_GetKernel: the kernel name is longer than %zu bytes",
                  kMaxKernelName);
  const std::string name(args->name, len);
  std::lock_guard<std::mutex> lk(exe->mu);
  auto it = exe->kernels.find(name);
  if (it == exe->kernels.end()) {
    size_t index = 0;
    if (exe->format == "archive:spirv-kernel") {
      auto e = exe->entry.find(name);
      if (e == exe->entry.end()) {
        std::string names;
        for (auto& [n, i] : exe->entry) names += (names.empty() ? "" : ", ") + n;
        return errorf(TS_ERROR_NOT_FOUND,
                      "level_zero: Executable_GetKernel: no kernel '%s' in the archive from %s "
                      "(it holds %s)",
                      name.c_str(), exe->origin.c_str(), names.c_str());
      }
      index = e->second;
    }
    const spirv::Kernel* info = nullptr;
    for (const spirv::Kernel& k : exe->infos[index].kernels)
      if (k.name == name) info = &k;
    if (!info) {
      std::string names;
      for (const spirv::Kernel& k : exe->infos[index].kernels)
        names += (names.empty() ? "" : ", ") + k.name;
      return errorf(TS_ERROR_NOT_FOUND,
                    "level_zero: Executable_GetKernel: no Kernel entry point '%s' in the %s "
                    "executable from %s (it has %s)",
                    name.c_str(), exe->format.c_str(), exe->origin.c_str(), names.c_str());
    }
    auto k = std::make_unique<TsKernel>();
    k->executable = exe;
    k->name = name;
    k->info = *info;
    ze_kernel_desc_t kd{};
    kd.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    kd.pKernelName = k->name.c_str();
    TS_ZE_CALL(dev, dev->fn->zeKernelCreate(exe->modules[index], &kd, &k->kernel),
               strprintf("zeKernelCreate('%s')", name.c_str()));
    k->props.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    ze_result_t r = dev->fn->zeKernelGetProperties(k->kernel, &k->props);
    if (r != ZE_RESULT_SUCCESS) {
      dev->fn->zeKernelDestroy(k->kernel);
      return dev_error(dev, r, strprintf("zeKernelGetProperties('%s')", name.c_str()));
    }
    if (k->props.numKernelArgs > kMaxLaunchArgs) {
      dev->fn->zeKernelDestroy(k->kernel);
      return errorf(TS_ERROR_INTERNAL, "level_zero: the driver reports %u arguments of '%s'",
                    k->props.numKernelArgs, name.c_str());
    }
    it = exe->kernels.emplace(name, std::move(k)).first;
  }
  TsKernel* k = it->second.get();
  args->kernel = k;
  // The driver's required group size, else the module's LocalSize.
  TsDim3 req{k->props.requiredGroupSizeX, k->props.requiredGroupSizeY, k->props.requiredGroupSizeZ};
  if (req.x == 0) req = TsDim3{k->info.local_size[0], k->info.local_size[1], k->info.local_size[2]};
  args->required_group_size = req;
  uint32_t buffers = 0, scalar_bytes = 0;
  for (const spirv::Param& p : k->info.params) {
    if (p.kind == spirv::Param::kBuffer) ++buffers;
    else scalar_bytes += p.bytes;
  }
  const bool known = k->info.params_known && k->info.params.size() == k->props.numKernelArgs;
  args->num_buffer_args = known ? buffers : 0;
  args->scalar_arg_bytes = known ? scalar_bytes : 0;
  args->static_shared_memory_bytes = k->props.localMemSize;
  args->args_known = known ? 1 : 0;
  return nullptr;
}

TS_ZE_ENTRY(Kernel_Launch, TS_KERNEL_LAUNCH_ARGS_MIN_STRUCT_SIZE) {
  TS_ZE_CHECK_HANDLE(args->kernel, "Kernel_Launch", "kernel");
  TS_ZE_CHECK_HANDLE(args->stream, "Kernel_Launch", "stream");
  TsKernel* k = args->kernel;
  TsStream* s = args->stream;
  TsDevice* dev = k->executable->device;
  const char* kn = k->name.c_str();
  if (s->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: launch of '%s': the stream is on device %u, the kernel on device "
                  "%u",
                  kn, s->device->ordinal, dev->ordinal);
  const TsDim3 g = args->grid, b = args->group_size;
  const ze_device_compute_properties_t& cp = dev->compute;
  if (g.x == 0 || g.y == 0 || g.z == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: launch of '%s': empty grid (%u,%u,%u)",
                  kn, g.x, g.y, g.z);
  if (g.x > cp.maxGroupCountX || g.y > cp.maxGroupCountY || g.z > cp.maxGroupCountZ)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "level_zero: launch of '%s': grid (%u,%u,%u) exceeds %s's maximum group count "
                  "(%u,%u,%u)",
                  kn, g.x, g.y, g.z, dev->ts.name, cp.maxGroupCountX, cp.maxGroupCountY,
                  cp.maxGroupCountZ);
  if (b.x == 0 || b.y == 0 || b.z == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: launch of '%s': empty group size (%u,%u,%u)", kn, b.x, b.y, b.z);
  const uint64_t lanes = uint64_t{b.x} * b.y * b.z;
  if (lanes > cp.maxTotalGroupSize || b.x > cp.maxGroupSizeX || b.y > cp.maxGroupSizeY ||
      b.z > cp.maxGroupSizeZ)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: launch of '%s' with group size (%u,%u,%u): %s allows at most %u "
                  "lanes per group (max_group_size) and (%u,%u,%u) per dimension",
                  kn, b.x, b.y, b.z, dev->ts.name, cp.maxTotalGroupSize, cp.maxGroupSizeX,
                  cp.maxGroupSizeY, cp.maxGroupSizeZ);
  TsDim3 req{k->props.requiredGroupSizeX, k->props.requiredGroupSizeY, k->props.requiredGroupSizeZ};
  if (req.x == 0) req = TsDim3{k->info.local_size[0], k->info.local_size[1], k->info.local_size[2]};
  if (req.x != 0 && (b.x != req.x || b.y != req.y || b.z != req.z))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: launch of '%s' with group size (%u,%u,%u): the kernel requires "
                  "(%u,%u,%u)",
                  kn, b.x, b.y, b.z, req.x, req.y, req.z);
  // SPIR-V has no dynamic shared memory: at most what the kernel declares.
  if (args->shared_memory_bytes > k->props.localMemSize)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: launch of '%s' asks for %s of dynamic shared memory; SPIR-V "
                  "kernels have none beyond the %s they declare (shared_memory_per_group of %s "
                  "is %s)",
                  kn, human_size(args->shared_memory_bytes).c_str(),
                  human_size(k->props.localMemSize).c_str(), dev->ts.name,
                  human_size(dev->ts.shared_memory_per_group).c_str());
  if (args->num_args && !args->args)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "level_zero: launch of '%s': args is NULL", kn);
  if (args->num_args != k->props.numKernelArgs)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: launch of '%s' with %zu arguments; the kernel takes %u", kn,
                  args->num_args, k->props.numKernelArgs);
  const bool known = k->info.params_known && k->info.params.size() == args->num_args;
  uint64_t scalar_bytes = 0;
  for (size_t i = 0; i < args->num_args; ++i) {
    const TsKernelArg& a = args->args[i];
    // The kind is checked as an integer before it is read as the enum.
    if (const int64_t kind = plugin_support::raw_enum(a.kind);
        kind != TS_KERNEL_ARG_SCALAR && kind != TS_KERNEL_ARG_BUFFER)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: Kernel_Launch: argument %zu has kind %lld, not a TsKernelArgKind",
                    i, static_cast<long long>(kind));
    if (a.kind == TS_KERNEL_ARG_BUFFER) {
      TS_ZE_CHECK_HANDLE(a.buffer, "Kernel_Launch", "buffer argument");
      const TsBuffer* buf = a.buffer;
      if (buf->device->client != dev->client)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "level_zero: launch of '%s': argument %zu belongs to another client", kn, i);
      if (buf->device != dev && buf->kind == TS_BUFFER_DEVICE &&
          !(dev->peer_access.size() > buf->device->ordinal && dev->peer_access[buf->device->ordinal]))
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "level_zero: launch of '%s': argument %zu is a device buffer of device %u, "
                      "which device %u cannot access (zeDeviceCanAccessPeer)",
                      kn, i, buf->device->ordinal, dev->ordinal);
      if (a.offset >= buf->size)
        return errorf(TS_ERROR_OUT_OF_RANGE,
                      "level_zero: launch of '%s': buffer argument %zu has offset %llu past the "
                      "end of %s",
                      kn, i, static_cast<unsigned long long>(a.offset),
                      describe_buffer(buf).c_str());
      if (known && k->info.params[i].kind != spirv::Param::kBuffer)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "level_zero: launch of '%s': argument %zu is a buffer; the kernel's "
                      "parameter %zu is a %u-byte value",
                      kn, i, i, k->info.params[i].bytes);
    } else if (a.kind == TS_KERNEL_ARG_SCALAR) {
      if (!a.data || a.size == 0)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "level_zero: launch of '%s': scalar argument %zu has no data", kn, i);
      if (known && (k->info.params[i].kind != spirv::Param::kScalar ||
                    a.size != k->info.params[i].bytes))
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "level_zero: launch of '%s': scalar argument %zu is %zu bytes; the "
                      "kernel's parameter %zu is %s",
                      kn, i, a.size, i,
                      k->info.params[i].kind == spirv::Param::kBuffer
                          ? "a buffer"
                          : strprintf("%u bytes", k->info.params[i].bytes).c_str());
      scalar_bytes += a.size;
    } else {
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: launch of '%s': argument %zu has unknown kind %d", kn, i,
                    static_cast<int>(a.kind));
    }
  }
  if (dev->ts.max_scalar_arg_bytes && scalar_bytes > dev->ts.max_scalar_arg_bytes)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "level_zero: launch of '%s': %llu bytes of scalar arguments; the device takes "
                  "at most %u bytes of kernel arguments (maxArgumentsSize)",
                  kn, static_cast<unsigned long long>(scalar_bytes), dev->ts.max_scalar_arg_bytes);
  const ZeFns& fn = *dev->fn;
  uint64_t* completion_ns =
      TS_FIELD_PRESENT(args, TsKernel_Launch_Args, completion_ns) ? args->completion_ns : nullptr;
  std::lock_guard<std::mutex> lk(dev->mu);
  if (completion_ns)
    TS_ZE_RETURN_IF_ERROR(refuse_in_capture_locked(s, "a launch with completion_ns"));
  if (k->group.x != b.x || k->group.y != b.y || k->group.z != b.z) {
    TS_ZE_CALL(dev, fn.zeKernelSetGroupSize(k->kernel, b.x, b.y, b.z),
               strprintf("zeKernelSetGroupSize('%s', %u, %u, %u)", kn, b.x, b.y, b.z));
    k->group = b;
  }
  for (size_t i = 0; i < args->num_args; ++i) {
    const TsKernelArg& a = args->args[i];
    // The kind is checked as an integer before it is read as the enum.
    if (const int64_t kind = plugin_support::raw_enum(a.kind);
        kind != TS_KERNEL_ARG_SCALAR && kind != TS_KERNEL_ARG_BUFFER)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "level_zero: Kernel_Launch: argument %zu has kind %lld, not a TsKernelArgKind",
                    i, static_cast<long long>(kind));
    const uint32_t idx = static_cast<uint32_t>(i);
    if (a.kind == TS_KERNEL_ARG_BUFFER) {
      void* p = static_cast<uint8_t*>(a.buffer->ptr) + a.offset;
      TS_ZE_CALL(dev, fn.zeKernelSetArgumentValue(k->kernel, idx, sizeof p, &p),
                 strprintf("zeKernelSetArgumentValue('%s', %zu, buffer)", kn, i));
    } else {
      TS_ZE_CALL(dev, fn.zeKernelSetArgumentValue(k->kernel, idx, a.size, a.data),
                 strprintf("zeKernelSetArgumentValue('%s', %zu, %zu bytes)", kn, i, a.size));
    }
  }
  const ze_group_count_t groups{g.x, g.y, g.z};
  if (s->capture) {
    // The argument values and the group size are taken at append, so the
    // recorded launch keeps them whatever later launches set.
    TS_ZE_RETURN_IF_ERROR(capture_append_locked(s, [&](ze_command_list_handle_t list) -> TsError* {
      TS_ZE_CALL(dev, fn.zeCommandListAppendLaunchKernel(list, k->kernel, &groups, nullptr, 0, nullptr),
                 strprintf("zeCommandListAppendLaunchKernel('%s', captured)", kn));
      return nullptr;
    }));
    capture_note_locked(s, k->executable->life,
                        strprintf("the executable of kernel '%s' (%s)", kn,
                                  k->executable->origin.c_str()));
    for (size_t i = 0; i < args->num_args; ++i)
      if (args->args[i].kind == TS_KERNEL_ARG_BUFFER)
        capture_note_locked(s, args->args[i].buffer->life,
                            strprintf("buffer argument %zu of kernel '%s' (%s)", i, kn,
                                      describe_buffer(args->args[i].buffer).c_str()));
    return nullptr;
  }
  TS_ZE_RETURN_IF_ERROR(prepare_op_locked(s));
  MarkerRef m;
  TS_ZE_RETURN_IF_ERROR(op_marker_locked(s, &m));
  TS_ZE_CALL(dev,
             fn.zeCommandListAppendLaunchKernel(s->list, k->kernel, &groups,
                                                m ? m->event() : nullptr, 0, nullptr),
             strprintf("zeCommandListAppendLaunchKernel('%s', groups (%u,%u,%u), group size "
                       "(%u,%u,%u))",
                       kn, g.x, g.y, g.z, b.x, b.y, b.z));
  commit_op_locked(s, std::move(m));
  if (completion_ns) {
    if (TsError* e = record_timestamp_locked(s, completion_ns)) {
      // The kernel is queued and will run; only its time is lost.
      e->message = std::string("level_zero: launch of '") + kn +
                   "' was queued, but recording its completion time failed: " + e->message;
      return e;
    }
  }
  return nullptr;
}

}  // namespace tessera::level_zero
