// Executables and kernels: Executable_Load (hipModuleLoadData per code
// object), Executable_GetKernel (hipModuleGetFunction + its attributes),
// Kernel_Launch (hipModuleLaunchKernel with a void* per argument).
//
// Formats: "archive:hsaco" (a kernel archive, tessera/kernel_archive.hpp,
// one code object per kernel named by it) and "hsaco" (one code object
// holding any number of kernels).  Every code object is checked and copied
// first (code_object.cpp): the runtime takes no size.  A code object for
// another GPU fails in hipModuleLoadData; the message names the device's
// gcnArchName and the code object's target.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstring>

#include "file_io.hpp"
#include "internal.hpp"

namespace tessera::hip {

namespace {

constexpr size_t kMaxKernelName = 4096;
constexpr size_t kMaxLaunchArgs = 4096;

// Regular files only, at most kMaxImageBytes (a FIFO or /dev/zero is refused
// with the file's name and the limit, never read without end).
TsError* read_file(const char* path, std::vector<uint8_t>* out) {
  return plugin_support::ReadExecutableFile("hip", path, kMaxImageBytes, out);
}

TsError* load_module(TsDevice* dev, const PreparedImage& img, const std::string& origin,
                     hipModule_t* out) {
  hipError_t r = dev->fn->hipModuleLoadData(out, img.data());
  if (r == hipSuccess) return nullptr;
  std::string call = strprintf("hipModuleLoadData(code object%s%s%s for %s, %s, from %s)",
                               img.name.empty() ? "" : " '", img.name.c_str(),
                               img.name.empty() ? "" : "'",
                               img.target.empty() ? "an unknown target" : img.target.c_str(),
                               human_size(img.size).c_str(), origin.c_str());
  return hip_error(dev->fn, r, call, dev->arch, img.target);
}

}  // namespace

TS_HIP_ENTRY(Executable_Load, TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->device, "Executable_Load", "device");
  TsDevice* dev = args->device;
  if (args->format == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Executable_Load: format is NULL");
  const std::string format = args->format ? std::string(args->format, strnlen(args->format, 64)) : "";
  if (format != "archive:hsaco" && format != "hsaco")
    return errorf(TS_ERROR_UNSUPPORTED,
                  "hip: Executable_Load: format '%s' is not one the hip plugin loads "
                  "(archive:hsaco, hsaco)",
                  format.c_str());
  std::vector<uint8_t> file;
  const void* data = args->data;
  size_t size = args->size;
  std::string origin = "<memory>";
  if (!data) {
    if (!args->path)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "hip: Executable_Load: neither data nor a path was given");
    TS_HIP_RETURN_IF_ERROR(read_file(args->path, &file));
    data = file.data();
    size = file.size();
    origin = args->path;
  }
  if (size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Executable_Load: the %s image from %s is empty",
                  format.c_str(), origin.c_str());
  auto exe = std::make_unique<TsExecutable>();
  std::string why;
  if (format == "archive:hsaco") {
    why = prepare_archive(data, size, &exe->images);
  } else {
    exe->images.emplace_back();
    why = prepare_image(data, size, &exe->images.back());
  }
  if (!why.empty())
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Executable_Load: the %s image from %s: %s",
                  format.c_str(), origin.c_str(), why.c_str());
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  exe->device = dev;
  exe->format = format;
  exe->origin = origin;
  for (size_t i = 0; i < exe->images.size(); ++i) {
    hipModule_t m = nullptr;
    if (TsError* e = load_module(dev, exe->images[i], origin, &m)) {
      for (hipModule_t loaded : exe->modules) (void)dev->fn->hipModuleUnload(loaded);
      return e;
    }
    exe->modules.push_back(m);
    if (!exe->images[i].name.empty()) exe->entry[exe->images[i].name] = i;
  }
  exe->device->live_executables.add(exe.get());
  args->executable = exe.release();
  return nullptr;
}

TS_HIP_ENTRY(Executable_Destroy, TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->executable, "Executable_Destroy", "executable");
  TsExecutable* exe = args->executable;
  TsDevice* dev = exe->device;
  TsError* e = synchronize_device(dev);  // never unload under running kernels
  if (TsError* be = bind(dev)) {
    if (e) destroy_error(e);
    return be;
  }
  for (hipModule_t m : exe->modules) {
    hipError_t r = dev->fn->hipModuleUnload(m);
    if (r != hipSuccess && !e) e = dev_error(dev, r, "hipModuleUnload");
  }
  for (auto& [name, k] : exe->kernels) k->magic = kMagicDead;
  dev->live_executables.remove(exe);
  exe->magic = kMagicDead;
  delete exe;
  return e;
}

TS_HIP_ENTRY(Executable_GetKernel, TS_EXECUTABLE_GETKERNEL_ARGS_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->executable, "Executable_GetKernel", "executable");
  TsExecutable* exe = args->executable;
  TsDevice* dev = exe->device;
  if (!args->name || !*args->name)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: Executable_GetKernel: no kernel name");
  const size_t len = strnlen(args->name, kMaxKernelName + 1);
  if (len > kMaxKernelName)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: Executable_GetKernel: the kernel name is longer than %zu bytes",
                  kMaxKernelName);
  const std::string name(args->name, len);
  std::lock_guard<std::mutex> lk(exe->mu);
  auto it = exe->kernels.find(name);
  if (it == exe->kernels.end()) {
    hipModule_t module = nullptr;
    if (exe->format == "archive:hsaco") {
      auto e = exe->entry.find(name);
      if (e == exe->entry.end()) {
        std::string names;
        for (auto& [n, i] : exe->entry) names += (names.empty() ? "" : ", ") + n;
        return errorf(TS_ERROR_NOT_FOUND,
                      "hip: Executable_GetKernel: no kernel '%s' in the archive from %s (it "
                      "holds %s)",
                      name.c_str(), exe->origin.c_str(), names.c_str());
      }
      module = exe->modules[e->second];
    } else {
      module = exe->modules.front();
    }
    TS_HIP_RETURN_IF_ERROR(bind(dev));
    auto k = std::make_unique<TsKernel>();
    k->executable = exe;
    k->name = name;
    hipError_t r = dev->fn->hipModuleGetFunction(&k->function, module, name.c_str());
    if (r == hipErrorNotFound)
      return errorf(TS_ERROR_NOT_FOUND,
                    "hip: Executable_GetKernel: no kernel '%s' in the %s executable from %s "
                    "(hipModuleGetFunction: hipErrorNotFound; is it extern \"C\"?)",
                    name.c_str(), exe->format.c_str(), exe->origin.c_str());
    if (r != hipSuccess)
      return dev_error(dev, r, strprintf("hipModuleGetFunction('%s')", name.c_str()));
    int v = 0;
    k->max_threads = dev->fn->hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                                  k->function) == hipSuccess && v > 0
                         ? v
                         : dev->max_threads_per_block;
    v = 0;
    if (dev->fn->hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->function) ==
            hipSuccess &&
        v > 0)
      k->static_shared = static_cast<uint64_t>(v);
    // The arguments the code object records for it (the image it came from).
    for (const tessera::hip::PreparedImage& img : exe->images)
      if (exe->format != "archive:hsaco" || img.name == name)
        for (const tessera::hip::KernelMetadata& m : img.kernels)
          if (m.name == name) k->meta = &m;
    it = exe->kernels.emplace(name, std::move(k)).first;
  }
  TsKernel* k = it->second.get();
  args->kernel = k;
  args->required_group_size = TsDim3{0, 0, 0};
  args->num_buffer_args = 0;
  args->scalar_arg_bytes = 0;
  args->static_shared_memory_bytes = static_cast<uint32_t>(k->static_shared);
  args->args_known = 0;
  if (k->meta) {  // the code object's metadata: exact counts
    uint64_t scalars = 0;
    uint32_t buffers = 0;
    for (const tessera::hip::KernelArgMetadata& a : k->meta->args)
      a.is_buffer() ? (void)++buffers : (void)(scalars += a.size);
    args->num_buffer_args = buffers;
    args->scalar_arg_bytes = static_cast<uint32_t>(std::min<uint64_t>(scalars, UINT32_MAX));
    args->args_known = 1;
  }
  return nullptr;
}


TS_HIP_ENTRY(Kernel_Launch, TS_KERNEL_LAUNCH_ARGS_MIN_STRUCT_SIZE) {
  TS_HIP_CHECK_HANDLE(args->kernel, "Kernel_Launch", "kernel");
  TS_HIP_CHECK_HANDLE(args->stream, "Kernel_Launch", "stream");
  TsKernel* k = args->kernel;
  TsStream* s = args->stream;
  TsDevice* dev = k->executable->device;
  const char* kn = k->name.c_str();
  if (s->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: launch of '%s': the stream is on device %d, the kernel on device %d", kn,
                  s->device->ordinal, dev->ordinal);
  const TsDim3 g = args->grid, b = args->group_size;
  if (g.x == 0 || g.y == 0 || g.z == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: launch of '%s': empty grid (%u,%u,%u)", kn,
                  g.x, g.y, g.z);
  if (b.x == 0 || b.y == 0 || b.z == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: launch of '%s': empty group size (%u,%u,%u)",
                  kn, b.x, b.y, b.z);
  const uint64_t lanes = uint64_t{b.x} * b.y * b.z;
  if (lanes > static_cast<uint64_t>(dev->max_threads_per_block) ||
      b.x > static_cast<uint32_t>(dev->max_block[0]) ||
      b.y > static_cast<uint32_t>(dev->max_block[1]) ||
      b.z > static_cast<uint32_t>(dev->max_block[2]))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: launch of '%s' with group size (%u,%u,%u): %s (%s) allows at most %d "
                  "lanes per group (max_group_size) and (%d,%d,%d) per dimension",
                  kn, b.x, b.y, b.z, dev->ts.name, dev->arch.c_str(), dev->max_threads_per_block,
                  dev->max_block[0], dev->max_block[1], dev->max_block[2]);
  if (k->max_threads > 0 && lanes > static_cast<uint64_t>(k->max_threads))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: launch of '%s' with %llu lanes per group: the kernel can run at most %d "
                  "(HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its flat work-group size limit)",
                  kn, static_cast<unsigned long long>(lanes), k->max_threads);
  // The AQL dispatch packet counts the grid in lanes, 32 bits per dimension.
  if (g.x > static_cast<uint32_t>(dev->max_grid[0]) ||
      g.y > static_cast<uint32_t>(dev->max_grid[1]) ||
      g.z > static_cast<uint32_t>(dev->max_grid[2]) || uint64_t{g.x} * b.x > UINT32_MAX ||
      uint64_t{g.y} * b.y > UINT32_MAX || uint64_t{g.z} * b.z > UINT32_MAX)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "hip: launch of '%s': grid (%u,%u,%u) of groups (%u,%u,%u) exceeds %s's "
                  "limits: at most (%d,%d,%d) groups and 2^32-1 lanes per dimension",
                  kn, g.x, g.y, g.z, b.x, b.y, b.z, dev->ts.name, dev->max_grid[0],
                  dev->max_grid[1], dev->max_grid[2]);
  const uint64_t dyn = args->shared_memory_bytes;
  if (dyn > dev->shared_per_block || dyn + k->static_shared > dev->shared_per_block)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: launch of '%s' asks for %s of dynamic LDS (shared memory) on top of the "
                  "%s it declares; %s (%s) allows %s per group (shared_memory_per_group, "
                  "hipDeviceAttributeMaxSharedMemoryPerBlock)",
                  kn, human_size(dyn).c_str(), human_size(k->static_shared).c_str(), dev->ts.name,
                  dev->arch.c_str(), human_size(dev->shared_per_block).c_str());
  if (args->num_args && !args->args)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: launch of '%s': args is NULL", kn);
  if (args->num_args > kMaxLaunchArgs)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: launch of '%s': %zu arguments (at most %zu)",
                  kn, args->num_args, kMaxLaunchArgs);
  // Per-thread scratch, reused launch after launch.
  thread_local std::vector<void*> ptrs;
  thread_local std::vector<void*> params;
  ptrs.assign(args->num_args, nullptr);
  params.assign(args->num_args, nullptr);
  uint64_t scalar_bytes = 0;
  for (size_t i = 0; i < args->num_args; ++i) {
    const TsKernelArg& a = args->args[i];
    // The kind is checked as an integer before it is read as the enum.
    if (const int64_t kind = plugin_support::raw_enum(a.kind);
        kind != TS_KERNEL_ARG_SCALAR && kind != TS_KERNEL_ARG_BUFFER)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "hip: Kernel_Launch: argument %zu has kind %lld, not a TsKernelArgKind",
                    i, static_cast<long long>(kind));
    if (a.kind == TS_KERNEL_ARG_BUFFER) {
      TS_HIP_CHECK_HANDLE(a.buffer, "Kernel_Launch", "buffer argument");
      const TsBuffer* buf = a.buffer;
      if (buf->device->client != dev->client)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "hip: launch of '%s': argument %zu is a buffer of another client", kn, i);
      if (buf->device != dev && buf->kind == TS_BUFFER_DEVICE &&
          !dev->peer_access[static_cast<size_t>(buf->device->ordinal)])
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "hip: launch of '%s': argument %zu is a device buffer of device %d, "
                      "which device %d cannot access (no peer access)",
                      kn, i, buf->device->ordinal, dev->ordinal);
      if (a.offset >= buf->size)
        return errorf(TS_ERROR_OUT_OF_RANGE,
                      "hip: launch of '%s': buffer argument %zu has offset %llu past the end of "
                      "%s",
                      kn, i, static_cast<unsigned long long>(a.offset),
                      describe_buffer(buf).c_str());
      ptrs[i] = buf->dptr + a.offset;
      params[i] = &ptrs[i];
    } else if (a.kind == TS_KERNEL_ARG_SCALAR) {
      if (!a.data || a.size == 0)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "hip: launch of '%s': scalar argument %zu has no data", kn, i);
      if (a.size > dev->ts.max_scalar_arg_bytes)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "hip: launch of '%s': scalar argument %zu is %zu bytes", kn, i, a.size);
      scalar_bytes += a.size;
      params[i] = const_cast<void*>(a.data);
    } else {
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "hip: launch of '%s': argument %zu has unknown kind %d", kn, i,
                    static_cast<int>(a.kind));
    }
  }
  if (k->meta) {
    const std::string why = tessera::hip::check_launch_args(*k->meta, args->args, args->num_args);
    if (!why.empty())
      return errorf(TS_ERROR_INVALID_ARGUMENT, "hip: launch of '%s': %s", kn, why.c_str());
  }
  if (scalar_bytes > dev->ts.max_scalar_arg_bytes)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "hip: launch of '%s': %llu bytes of scalar arguments; the device takes at "
                  "most %u bytes of kernel arguments",
                  kn, static_cast<unsigned long long>(scalar_bytes), dev->ts.max_scalar_arg_bytes);
  if (s->is_default)
    TS_HIP_RETURN_IF_ERROR(refuse_sync_while_capturing(dev, "a launch on the default stream"));
  uint64_t* completion_ns =
      TS_FIELD_PRESENT(args, TsKernel_Launch_Args, completion_ns) ? args->completion_ns : nullptr;
  if (completion_ns)
    TS_HIP_RETURN_IF_ERROR(refuse_timestamp(s, "Kernel_Launch with completion_ns"));
  TS_HIP_RETURN_IF_ERROR(bind(dev));
  TS_HIP_CALL(dev,
              dev->fn->hipModuleLaunchKernel(k->function, g.x, g.y, g.z, b.x, b.y, b.z,
                                             static_cast<unsigned int>(dyn), s->stream,
                                             params.empty() ? nullptr : params.data(), nullptr),
              strprintf("hipModuleLaunchKernel('%s', grid (%u,%u,%u), group (%u,%u,%u), %s LDS)",
                        kn, g.x, g.y, g.z, b.x, b.y, b.z, human_size(dyn).c_str()));
  if (completion_ns) {
    if (TsError* e = record_timestamp(s, completion_ns)) {
      // The kernel is queued and will run; only its time is lost.
      e->message = std::string("hip: launch of '") + kn +
                   "' was queued, but recording its completion time failed: " + e->message;
      return e;
    }
  }
  if (dev->client->active_captures.load(std::memory_order_acquire) != 0) {
    capture_note(s, k->executable->life, [&] {
      return "the executable (from " + k->executable->origin + ") of kernel '" + k->name + "'";
    });
    for (size_t i = 0; i < args->num_args; ++i)
      if (args->args[i].kind == TS_KERNEL_ARG_BUFFER)
        capture_note(s, args->args[i].buffer->life, [&] {
          return "buffer argument " + std::to_string(i) + " of kernel '" + k->name + "', " +
                 describe_buffer(args->args[i].buffer);
        });
  }
  return nullptr;
}

}  // namespace tessera::hip
