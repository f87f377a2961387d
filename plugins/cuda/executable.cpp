// Executables and kernels: Executable_Load (cuModuleLoadDataEx per image,
// with the JIT's error log in the message), Executable_GetKernel
// (cuModuleGetFunction + its attributes and, from CUDA 12.4, its parameter
// layout), Kernel_Launch (cuLaunchKernel).
//
// Formats: "archive:cubin" (a kernel archive, tessera/kernel_archive.hpp,
// one image per kernel named by it: a cubin, a fatbinary or PTX), "cubin"
// (one ELF or fatbinary holding any number of kernels) and "ptx" (one PTX
// module, JIT-compiled by the driver).  Every image is checked and copied
// first (cubin.cpp): the driver takes no size.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "file_io.hpp"
#include "internal.hpp"

namespace tessera::cuda {

namespace {

constexpr size_t kJitLogBytes = 16 * 1024;
constexpr size_t kMaxKernelName = 4096;
constexpr size_t kMaxLaunchArgs = 4096;

// Regular files only, at most kMaxImageBytes (a FIFO or /dev/zero is refused
// with the file's name and the limit, never read without end).
TsError* read_file(const char* path, std::vector<uint8_t>* out) {
  return plugin_support::ReadExecutableFile("cuda", path, kMaxImageBytes, out);
}

// Loads every function of `module` now.  With lazy loading (the driver's
// default since CUDA 12.2) a kernel is otherwise loaded at its first launch,
// and that load can wait for the kernels already running: a kernel launched
// to release another one (a producer/consumer pair, the conformance gate)
// then deadlocks.  Eager loading at Executable_Load keeps launches free of
// hidden synchronization.  Drivers before 12.4 lack these calls; there,
// CUDA_MODULE_LOADING=EAGER does the same (docs/cuda.md).
TsError* load_functions(TsDevice* dev, CUmodule module, const std::string& origin) {
  const CudaFns& fn = *dev->fn;
  if (!fn.cuModuleGetFunctionCount || !fn.cuModuleEnumerateFunctions || !fn.cuFuncLoad)
    return nullptr;
  unsigned count = 0;
  TS_CU_CALL(dev, fn.cuModuleGetFunctionCount(&count, module),
             strprintf("cuModuleGetFunctionCount(module from %s)", origin.c_str()));
  if (count > 1u << 20)
    return errorf(TS_ERROR_INTERNAL, "cuda: the driver reports %u functions in a module from %s",
                  count, origin.c_str());
  std::vector<CUfunction> functions(count);
  if (count)
    TS_CU_CALL(dev, fn.cuModuleEnumerateFunctions(functions.data(), count, module),
               strprintf("cuModuleEnumerateFunctions(module from %s)", origin.c_str()));
  for (CUfunction f : functions)
    TS_CU_CALL(dev, fn.cuFuncLoad(f), strprintf("cuFuncLoad(a kernel from %s)", origin.c_str()));
  return nullptr;
}

TsError* load_module(TsDevice* dev, const PreparedImage& img, const std::string& origin,
                     CUmodule* out) {
  std::vector<char> log(kJitLogBytes, '\0');
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size() - 1))};
  CUresult r = dev->fn->cuModuleLoadDataEx(out, img.data(), 2, opts, vals);
  if (r == CUDA_SUCCESS) return load_functions(dev, *out, origin);
  // The driver writes back how many bytes it logged: bound it by the buffer.
  size_t n = static_cast<size_t>(reinterpret_cast<uintptr_t>(vals[1]));
  if (n >= log.size()) n = log.size() - 1;
  log[n] = '\0';
  std::string text(log.data(), std::strlen(log.data()));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string call = strprintf("cuModuleLoadDataEx(%s%s%s%s, %s, from %s)",
                               image_kind_name(img.kind), img.name.empty() ? "" : " '",
                               img.name.c_str(), img.name.empty() ? "" : "'",
                               human_size(img.size).c_str(), origin.c_str());
  TsError* e = dev_error(dev, r, call);
  if (!text.empty()) e->message += "\nJIT log:\n" + text;
  return e;
}

}  // namespace

TS_CU_ENTRY(Executable_Load, TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->device, "Executable_Load", "device");
  TsDevice* dev = args->device;
  if (args->format == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Executable_Load: format is NULL");
  const std::string format = args->format ? args->format : "";
  if (format != "archive:cubin" && format != "cubin" && format != "ptx")
    return errorf(TS_ERROR_UNSUPPORTED,
                  "cuda: Executable_Load: format '%s' is not one the cuda plugin loads "
                  "(archive:cubin, cubin, ptx)",
                  format.c_str());
  std::vector<uint8_t> file;
  const void* data = args->data;
  size_t size = args->size;
  std::string origin = "<memory>";
  if (!data) {
    if (!args->path)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cuda: Executable_Load: neither data nor a path was given");
    TS_CU_RETURN_IF_ERROR(read_file(args->path, &file));
    data = file.data();
    size = file.size();
    origin = args->path;
  }
  if (size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Executable_Load: the %s image from %s is empty",
                  format.c_str(), origin.c_str());
  std::vector<PreparedImage> images;
  std::map<std::string, std::vector<TensorMapSpec>> tensor_maps;
  std::string why;
  if (format == "archive:cubin") {
    why = prepare_archive(data, size, &images, &tensor_maps);
  } else {
    images.emplace_back();
    why = prepare_image(data, size, format.c_str(), &images.back());
  }
  if (!why.empty())
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Executable_Load: the %s image from %s: %s",
                  format.c_str(), origin.c_str(), why.c_str());
  TS_CU_RETURN_IF_ERROR(bind(dev));
  auto exe = std::make_unique<TsExecutable>();
  exe->device = dev;
  exe->format = format;
  exe->origin = origin;
  exe->tensor_maps = std::move(tensor_maps);
  for (size_t i = 0; i < images.size(); ++i) {
    CUmodule m = nullptr;
    if (TsError* e = load_module(dev, images[i], origin, &m)) {
      for (CUmodule loaded : exe->modules) dev->fn->cuModuleUnload(loaded);
      return e;
    }
    exe->modules.push_back(m);
    if (!images[i].name.empty()) exe->entry[images[i].name] = i;
  }
  dev->live_executables.add(exe.get());
  args->executable = exe.release();
  return nullptr;
}

TS_CU_ENTRY(Executable_Destroy, TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->executable, "Executable_Destroy", "executable");
  TsExecutable* exe = args->executable;
  TsDevice* dev = exe->device;
  TsError* e = synchronize_device(dev);  // never unload under running kernels
  if (TsError* be = bind(dev)) {
    if (e) destroy_error(e);
    return be;
  }
  for (CUmodule m : exe->modules) {
    CUresult r = dev->fn->cuModuleUnload(m);
    if (r != CUDA_SUCCESS && !e) e = dev_error(dev, r, "cuModuleUnload");
  }
  for (auto& [name, k] : exe->kernels) k->magic = kMagicDead;
  dev->live_executables.remove(exe);
  exe->magic = kMagicDead;
  delete exe;
  return e;
}

TS_CU_ENTRY(Executable_GetKernel, TS_EXECUTABLE_GETKERNEL_ARGS_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->executable, "Executable_GetKernel", "executable");
  TsExecutable* exe = args->executable;
  TsDevice* dev = exe->device;
  if (!args->name || !*args->name)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: Executable_GetKernel: no kernel name");
  const size_t len = strnlen(args->name, kMaxKernelName + 1);
  if (len > kMaxKernelName)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: Executable_GetKernel: the kernel name is longer than %zu bytes",
                  kMaxKernelName);
  const std::string name(args->name, len);
  std::lock_guard<std::mutex> lk(exe->mu);
  auto it = exe->kernels.find(name);
  if (it == exe->kernels.end()) {
    CUmodule module = nullptr;
    if (exe->format == "archive:cubin") {
      auto e = exe->entry.find(name);
      if (e == exe->entry.end()) {
        std::string names;
        for (auto& [n, i] : exe->entry) names += (names.empty() ? "" : ", ") + n;
        return errorf(TS_ERROR_NOT_FOUND,
                      "cuda: Executable_GetKernel: no kernel '%s' in the archive from %s (it "
                      "holds %s)",
                      name.c_str(), exe->origin.c_str(), names.c_str());
      }
      module = exe->modules[e->second];
    } else {
      module = exe->modules.front();
    }
    TS_CU_RETURN_IF_ERROR(bind(dev));
    auto k = std::make_unique<TsKernel>();
    k->executable = exe;
    k->name = name;
    CUresult r = dev->fn->cuModuleGetFunction(&k->function, module, name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND)
      return errorf(TS_ERROR_NOT_FOUND,
                    "cuda: Executable_GetKernel: no kernel '%s' in the %s executable from %s "
                    "(cuModuleGetFunction: CUDA_ERROR_NOT_FOUND; is it extern \"C\"?)",
                    name.c_str(), exe->format.c_str(), exe->origin.c_str());
    if (r != CUDA_SUCCESS)
      return dev_error(dev, r, strprintf("cuModuleGetFunction('%s')", name.c_str()));
    int v = 0;
    k->max_threads = dev->fn->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                                 k->function) == CUDA_SUCCESS
                         ? v
                         : dev->max_threads_per_block;
    v = 0;
    if (dev->fn->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->function) ==
            CUDA_SUCCESS &&
        v > 0)
      k->static_shared = static_cast<uint64_t>(v);
    k->dynamic_allowed =
        dev->shared_per_block > k->static_shared ? dev->shared_per_block - k->static_shared : 0;
    if (dev->fn->cuFuncGetParamInfo) {
      // Parameters until the driver says there are no more (bounded).
      k->params_known = true;
      for (size_t i = 0; i <= kMaxLaunchArgs; ++i) {
        size_t off = 0, sz = 0;
        CUresult pr = dev->fn->cuFuncGetParamInfo(k->function, i, &off, &sz);
        if (pr == CUDA_ERROR_INVALID_VALUE) break;
        if (pr != CUDA_SUCCESS || i == kMaxLaunchArgs || sz > 32768) {
          k->params_known = false;  // not a layout the plugin can check
          k->param_sizes.clear();
          break;
        }
        k->param_sizes.push_back(static_cast<uint32_t>(sz));
      }
    }
    if (auto maps = exe->tensor_maps.find(name); maps != exe->tensor_maps.end()) {
      if (!dev->fn->cuTensorMapEncodeTiled)
        return errorf(TS_ERROR_UNSUPPORTED,
                      "cuda: kernel '%s' copies with TMA (sm_90a) and needs cuTensorMapEncodeTiled, "
                      "which this driver lacks (CUDA 12.0 or later has it); compile for another "
                      "architecture or update the driver",
                      name.c_str());
      k->tensor_maps = maps->second;
      // The launch passes the kernel's own parameters; the maps follow.
      if (k->params_known && k->param_sizes.size() >= k->tensor_maps.size())
        k->param_sizes.resize(k->param_sizes.size() - k->tensor_maps.size());
      else
        k->params_known = false;
    }
    it = exe->kernels.emplace(name, std::move(k)).first;
  }
  TsKernel* k = it->second.get();
  args->kernel = k;
  // A cubin fixes neither the group size nor which parameters are buffers.
  args->required_group_size = TsDim3{0, 0, 0};
  args->num_buffer_args = 0;
  args->scalar_arg_bytes = 0;
  args->static_shared_memory_bytes = static_cast<uint32_t>(k->static_shared);
  args->args_known = 0;
  return nullptr;
}

TS_CU_ENTRY(Kernel_Launch, TS_KERNEL_LAUNCH_ARGS_MIN_STRUCT_SIZE) {
  TS_CU_CHECK_HANDLE(args->kernel, "Kernel_Launch", "kernel");
  TS_CU_CHECK_HANDLE(args->stream, "Kernel_Launch", "stream");
  TsKernel* k = args->kernel;
  TsStream* s = args->stream;
  TsDevice* dev = k->executable->device;
  const char* kn = k->name.c_str();
  if (s->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: launch of '%s': the stream is on device %u, the kernel on device %u",
                  kn, s->device->ordinal, dev->ordinal);
  const TsDim3 g = args->grid, b = args->group_size;
  if (g.x == 0 || g.y == 0 || g.z == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: launch of '%s': empty grid (%u,%u,%u)", kn,
                  g.x, g.y, g.z);
  if (g.x > static_cast<uint32_t>(dev->max_grid[0]) ||
      g.y > static_cast<uint32_t>(dev->max_grid[1]) ||
      g.z > static_cast<uint32_t>(dev->max_grid[2]))
    return errorf(TS_ERROR_UNSUPPORTED,
                  "cuda: launch of '%s': grid (%u,%u,%u) exceeds %s's maximum grid (%d,%d,%d)",
                  kn, g.x, g.y, g.z, dev->ts.name, dev->max_grid[0], dev->max_grid[1],
                  dev->max_grid[2]);
  if (b.x == 0 || b.y == 0 || b.z == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: launch of '%s': empty group size (%u,%u,%u)",
                  kn, b.x, b.y, b.z);
  const uint64_t lanes = uint64_t{b.x} * b.y * b.z;
  if (lanes > static_cast<uint64_t>(dev->max_threads_per_block) ||
      b.x > static_cast<uint32_t>(dev->max_block[0]) ||
      b.y > static_cast<uint32_t>(dev->max_block[1]) ||
      b.z > static_cast<uint32_t>(dev->max_block[2]))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: launch of '%s' with group size (%u,%u,%u): %s allows at most %d lanes "
                  "per group (max_group_size) and (%d,%d,%d) per dimension",
                  kn, b.x, b.y, b.z, dev->ts.name, dev->max_threads_per_block, dev->max_block[0],
                  dev->max_block[1], dev->max_block[2]);
  if (k->max_threads > 0 && lanes > static_cast<uint64_t>(k->max_threads))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: launch of '%s' with %llu lanes per group: the kernel can run at most %d "
                  "(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers per lane limit it)",
                  kn, static_cast<unsigned long long>(lanes), k->max_threads);
  const uint64_t dyn = args->shared_memory_bytes;
  if (dyn > dev->shared_per_block_optin ||
      dyn + k->static_shared > dev->shared_per_block_optin)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: launch of '%s' asks for %s of dynamic shared memory on top of the %s "
                  "it declares; %s allows %s per group (shared_memory_per_group, "
                  "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)",
                  kn, human_size(dyn).c_str(), human_size(k->static_shared).c_str(), dev->ts.name,
                  human_size(dev->shared_per_block_optin).c_str());
  if (args->num_args && !args->args)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: launch of '%s': args is NULL", kn);
  if (args->num_args > kMaxLaunchArgs)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: launch of '%s': %zu arguments (at most %zu)",
                  kn, args->num_args, kMaxLaunchArgs);
  if (k->params_known && args->num_args != k->param_sizes.size())
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: launch of '%s' with %zu arguments; the kernel takes %zu parameters",
                  kn, args->num_args, k->param_sizes.size());
  // Per-thread scratch, reused launch after launch.
  thread_local std::vector<CUdeviceptr> ptrs;
  thread_local std::vector<void*> params;
  ptrs.assign(args->num_args, 0);
  params.assign(args->num_args, nullptr);
  uint64_t scalar_bytes = 0;
  for (size_t i = 0; i < args->num_args; ++i) {
    const TsKernelArg& a = args->args[i];
    // The kind is checked as an integer before it is read as the enum.
    if (const int64_t kind = plugin_support::raw_enum(a.kind);
        kind != TS_KERNEL_ARG_SCALAR && kind != TS_KERNEL_ARG_BUFFER)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cuda: Kernel_Launch: argument %zu has kind %lld, not a TsKernelArgKind",
                    i, static_cast<long long>(kind));
    if (a.kind == TS_KERNEL_ARG_BUFFER) {
      TS_CU_CHECK_HANDLE(a.buffer, "Kernel_Launch", "buffer argument");
      const TsBuffer* buf = a.buffer;
      if (buf->device != dev && buf->kind == TS_BUFFER_DEVICE &&
          !(buf->device->peer_access.size() > dev->ordinal &&
            dev->peer_access.size() > buf->device->ordinal &&
            dev->peer_access[buf->device->ordinal]))
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "cuda: launch of '%s': argument %zu is a device buffer of device %u, "
                      "which device %u cannot access (no peer access)",
                      kn, i, buf->device->ordinal, dev->ordinal);
      if (a.offset >= buf->size)
        return errorf(TS_ERROR_OUT_OF_RANGE,
                      "cuda: launch of '%s': buffer argument %zu has offset %llu past the end of "
                      "%s",
                      kn, i, static_cast<unsigned long long>(a.offset),
                      describe_buffer(buf).c_str());
      if (k->params_known && k->param_sizes[i] != sizeof(CUdeviceptr))
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "cuda: launch of '%s': argument %zu is a buffer (an 8-byte pointer); the "
                      "kernel's parameter %zu is %u bytes",
                      kn, i, i, k->param_sizes[i]);
      ptrs[i] = buf->dptr + a.offset;
      params[i] = &ptrs[i];
    } else if (a.kind == TS_KERNEL_ARG_SCALAR) {
      if (!a.data || a.size == 0)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "cuda: launch of '%s': scalar argument %zu has no data", kn, i);
      if (k->params_known && a.size != k->param_sizes[i])
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "cuda: launch of '%s': scalar argument %zu is %zu bytes; the kernel's "
                      "parameter %zu is %u bytes",
                      kn, i, a.size, i, k->param_sizes[i]);
      scalar_bytes += a.size;
      params[i] = const_cast<void*>(a.data);
    } else {
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cuda: launch of '%s': argument %zu has unknown kind %d", kn, i,
                    static_cast<int>(a.kind));
    }
  }
  // TMA tensor maps, encoded from the buffers this launch passes (the
  // driver copies parameters at the launch: thread-local storage serves).
  thread_local std::vector<CUtensorMap> maps;
  maps.resize(k->tensor_maps.size());
  for (size_t m = 0; m < k->tensor_maps.size(); ++m) {
    const TensorMapSpec& spec = k->tensor_maps[m];
    if (spec.arg >= args->num_args || args->args[spec.arg].kind != TS_KERNEL_ARG_BUFFER)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cuda: launch of '%s': its TMA tensor map %zu reads argument %u, which this "
                    "launch %s",
                    kn, m, spec.arg, spec.arg >= args->num_args ? "does not pass" : "passes as a scalar");
    const TsKernelArg& a = args->args[spec.arg];
    TiledMapArgs t;
    const std::string why = CheckTensorMap(spec, ptrs[spec.arg], a.buffer->size - a.offset, &t);
    if (!why.empty())
      return errorf(TS_ERROR_INVALID_ARGUMENT, "cuda: launch of '%s': TMA tensor map %zu of argument %u (%s): %s",
                    kn, m, spec.arg, describe_buffer(a.buffer).c_str(), why.c_str());
    const CUtensorMapSwizzle swizzle = spec.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : spec.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : spec.swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                            : CU_TENSOR_MAP_SWIZZLE_NONE;
    const CUtensorMapDataType type = spec.element_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                     : spec.element_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                     : spec.element_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                                               : CU_TENSOR_MAP_DATA_TYPE_UINT64;
    TS_CU_CALL(dev,
               dev->fn->cuTensorMapEncodeTiled(&maps[m], type, 2, reinterpret_cast<void*>(t.address), t.global_dim,
                                               &t.global_stride, t.box_dim, t.element_strides,
                                               CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                               CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
               strprintf("cuTensorMapEncodeTiled('%s' map %zu: %llu x %llu, box %u x %u)", kn, m,
                         static_cast<unsigned long long>(t.global_dim[1]),
                         static_cast<unsigned long long>(t.global_dim[0]), t.box_dim[1], t.box_dim[0]));
    params.push_back(&maps[m]);
  }
  if (scalar_bytes > dev->ts.max_scalar_arg_bytes)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cuda: launch of '%s': %llu bytes of scalar arguments; the device takes at "
                  "most %u bytes of kernel parameters",
                  kn, static_cast<unsigned long long>(scalar_bytes), dev->ts.max_scalar_arg_bytes);
  if (s->is_default)
    TS_CU_RETURN_IF_ERROR(refuse_sync_while_capturing(dev, "a launch on the default stream"));
  uint64_t* completion_ns =
      TS_FIELD_PRESENT(args, TsKernel_Launch_Args, completion_ns) ? args->completion_ns : nullptr;
  if (completion_ns)
    TS_CU_RETURN_IF_ERROR(refuse_timestamp(s, "Kernel_Launch with completion_ns"));
  TS_CU_RETURN_IF_ERROR(bind(dev));
  if (dyn > 0) {
    // Above the default limit (48 KiB less the static part) the function
    // must opt in first.
    std::lock_guard<std::mutex> lk(k->mu);
    if (dyn > k->dynamic_allowed) {
      TS_CU_CALL(dev,
                 dev->fn->cuFuncSetAttribute(k->function,
                                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             static_cast<int>(dyn)),
                 strprintf("cuFuncSetAttribute('%s', MAX_DYNAMIC_SHARED_SIZE_BYTES, %s)", kn,
                           human_size(dyn).c_str()));
      k->dynamic_allowed = dyn;
    }
  }
  TS_CU_CALL(dev,
             dev->fn->cuLaunchKernel(k->function, g.x, g.y, g.z, b.x, b.y, b.z,
                                     static_cast<unsigned int>(dyn), s->stream,
                                     params.empty() ? nullptr : params.data(), nullptr),
             strprintf("cuLaunchKernel('%s', grid (%u,%u,%u), group (%u,%u,%u), %s shared)", kn,
                       g.x, g.y, g.z, b.x, b.y, b.z, human_size(dyn).c_str()));
  if (completion_ns) {
    if (TsError* e = record_timestamp(s, completion_ns)) {
      // The kernel is queued and will run; only its time is lost.
      e->message = std::string("cuda: launch of '") + kn +
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

}  // namespace tessera::cuda
