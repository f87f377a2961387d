// Executables are native shared objects (cpu_kernel.h); kernels run one tile
// group per work item.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "file_io.hpp"
#include "internal.hpp"
#include "launch_args.hpp"

namespace tessera::cpu {
namespace {

constexpr uint32_t kMaxGroupSize = 1024;
// An executable file larger than this is refused (as on the GPU plugins).
constexpr uint64_t kMaxImageBytes = uint64_t{1} << 30;
const char* const kFormats = "elf-native, elf-x86_64";

bool format_ok(const char* f) {
  if (std::strcmp(f, "elf-native") == 0) return true;
#if defined(__x86_64__)
  if (std::strcmp(f, "elf-x86_64") == 0) return true;
#endif
  return false;
}

class KernelOp final : public Op {
 public:
  uint32_t work_items() const override { return items_; }
  void run(Task&, uint32_t begin, uint32_t end, WorkerContext& w) override {
    TsCpuLaunchContext ctx{};
    ctx.struct_size = sizeof ctx;
    for (int i = 0; i < 3; ++i) {
      ctx.grid[i] = grid_[i];
      ctx.group_size[i] = group_[i];
    }
    ctx.shared_memory = w.shared_memory;
    ctx.shared_memory_size = shared_bytes_;
    ctx.args = args_.data();
    ctx.num_args = static_cast<uint32_t>(args_.size());
    ctx.device_ordinal = ordinal_;
    const uint64_t gxy = static_cast<uint64_t>(grid_[0]) * grid_[1];
    for (uint32_t id = begin; id < end; ++id) {
      ctx.group_id[0] = id % grid_[0];
      ctx.group_id[1] = static_cast<uint32_t>((id / grid_[0]) % grid_[1]);
      ctx.group_id[2] = static_cast<uint32_t>(id / gxy);
      fn_(&ctx);
    }
  }

  TsCpuKernelFn fn_ = nullptr;
  uint32_t grid_[3] = {1, 1, 1};
  uint32_t group_[3] = {1, 1, 1};
  uint64_t shared_bytes_ = 0;
  uint32_t ordinal_ = 0;
  uint32_t items_ = 1;
  LaunchArgs args_;
};

// The launch against the kernel's exported signature: count, kinds, scalar
// sizes, buffer lengths and the grid its buffers are sized for.  Runs before
// anything is queued, so a wrong list is an error here and not a worker
// thread dereferencing a scalar.
TsError* check_signature(const TsKernel& k, const TsKernel_Launch_Args& args) {
  const KernelSignature& sig = k.signature;
  const char* name = k.name.c_str();
  if (args.num_args != sig.args.size())
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: kernel '%s' takes %s; the launch passes %zu", name,
                  DescribeSignature(sig).c_str(), args.num_args);
  for (size_t i = 0; i < args.num_args; ++i) {
    const TsKernelArg& a = args.args[i];
    const KernelSignature::Arg& want = sig.args[i];
    const bool buffer = a.kind == TS_KERNEL_ARG_BUFFER;
    if (a.kind != TS_KERNEL_ARG_BUFFER && a.kind != TS_KERNEL_ARG_SCALAR) continue;  // reported later
    if (buffer != want.buffer)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Kernel_Launch: argument %zu of kernel '%s' is a %s; the launch passes "
                    "a %s",
                    i, name, want.buffer ? "buffer" : "scalar", buffer ? "buffer" : "scalar");
    if (!buffer && a.size != want.bytes)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Kernel_Launch: argument %zu of kernel '%s' is a %llu-byte scalar; the "
                    "launch passes %zu bytes",
                    i, name, static_cast<unsigned long long>(want.bytes), a.size);
    if (buffer && want.bytes > 0 && valid(a.buffer) && a.offset <= a.buffer->size &&
        a.buffer->size - a.offset < want.bytes)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Kernel_Launch: argument %zu of kernel '%s' spans %llu bytes; the "
                    "buffer has %llu bytes from offset %llu",
                    i, name, static_cast<unsigned long long>(want.bytes),
                    static_cast<unsigned long long>(a.buffer->size - a.offset),
                    static_cast<unsigned long long>(a.offset));
  }
  const TsDim3 g = args.grid;
  if (sig.has_grid && (g.x > sig.grid[0] || g.y > sig.grid[1] || g.z > sig.grid[2]))
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: kernel '%s' has buffers sized for grid (%u, %u, %u); a "
                  "launch over grid (%u, %u, %u) would run groups past their ends",
                  name, sig.grid[0], sig.grid[1], sig.grid[2], g.x, g.y, g.z);
  return nullptr;
}

}  // namespace

TS_CPU_ENTRY(Executable_Load, TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->device, "Executable_Load", "device");
  if (args->format == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Executable_Load: format is NULL: pass one of %s", kFormats);
  if (!format_ok(args->format))
    return errorf(TS_ERROR_UNSUPPORTED,
                  "cpu: Executable_Load: format '%s' is not supported by the CPU plugin: it "
                  "accepts %s",
                  args->format, kFormats);
  auto exe = std::make_unique<TsExecutable>();
  exe->device = args->device;
  std::string open_path;
  if (args->data != nullptr) {
    if (args->size == 0)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Executable_Load: data is set but size is 0");
    const int fd = memfd_create("tessera-cpu-executable", MFD_CLOEXEC);
    if (fd < 0)
      return errorf(TS_ERROR_INTERNAL, "cpu: Executable_Load: memfd_create failed: %s",
                    std::strerror(errno));
    const auto* p = static_cast<const uint8_t*>(args->data);
    size_t left = args->size;
    while (left > 0) {
      const ssize_t n = write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = errno;
        close(fd);
        return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                      "cpu: Executable_Load: writing the %s image to a memfd failed: %s",
                      human_size(args->size).c_str(), std::strerror(err));
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    open_path = "/proc/self/fd/" + std::to_string(fd);
    exe->path = strprintf("<in-memory image of %s>", human_size(args->size).c_str());
    exe->handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (exe->handle != nullptr) {
      exe->memfd = fd;
    } else {
      const char* err = dlerror();
      close(fd);
      return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: Executable_Load: dlopen of %s failed: %s",
                    exe->path.c_str(), err ? err : "unknown error");
    }
  } else {
    if (args->path == nullptr)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Executable_Load: both data and path are NULL: pass the image bytes "
                    "or a file path");
    // dlopen would block on a FIFO and map whatever a device gives: only
    // regular files of bounded size (file_io.hpp).
    plugin_support::FileReadResult r = plugin_support::CheckRegularFile(args->path, kMaxImageBytes);
    if (!r.ok())
      return errorf(r.status == plugin_support::FileReadStatus::kCannotOpen ? TS_ERROR_NOT_FOUND
                                                                            : TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Executable_Load: %s", r.message.c_str());
    exe->path = args->path;
    exe->handle = dlopen(args->path, RTLD_NOW | RTLD_LOCAL);
  }
  if (exe->handle == nullptr) {
    const char* err = dlerror();
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Executable_Load: dlopen of %s failed: %s", exe->path.c_str(),
                  err ? err : "unknown error");
  }
  {
    std::lock_guard<std::mutex> lk(exe->device->sched().mutex());
    exe->device->live.executables.insert(exe.get());
  }
  args->executable = exe.release();
  return nullptr;
}

void destroy_executable(TsExecutable* exe) {
  TsDevice* dev = exe->device;
  {
    std::lock_guard<std::mutex> lk(dev->sched().mutex());
    dev->live.executables.erase(exe);
  }
  device_synchronize(dev);  // never unload under running work
  for (auto& [name, k] : exe->kernels) k->magic = kMagicDead;
  dlclose(exe->handle);
  if (exe->memfd >= 0) close(exe->memfd);
  exe->magic = kMagicDead;
  delete exe;
}

TS_CPU_ENTRY(Executable_Destroy, TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->executable, "Executable_Destroy", "executable");
  destroy_executable(args->executable);
  return nullptr;
}

TS_CPU_ENTRY(Executable_GetKernel, TS_EXECUTABLE_GETKERNEL_ARGS_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->executable, "Executable_GetKernel", "executable");
  if (args->name == nullptr || args->name[0] == '\0')
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Executable_GetKernel: name is %s", args->name ? "empty" : "NULL");
  TsExecutable* exe = args->executable;
  std::lock_guard<std::mutex> lk(exe->mu);
  auto it = exe->kernels.find(args->name);
  if (it != exe->kernels.end()) {
    args->kernel = it->second.get();
    return nullptr;
  }
  const std::string sym = std::string(TESSERA_CPU_KERNEL_PREFIX) + args->name;
  dlerror();
  void* fn = dlsym(exe->handle, sym.c_str());
  if (fn == nullptr)
    return errorf(TS_ERROR_NOT_FOUND,
                  "cpu: kernel '%s' not found in %s: no exported symbol %s (define it with "
                  "TESSERA_CPU_KERNEL(%s))",
                  args->name, exe->path.c_str(), sym.c_str(), args->name);
  auto k = std::make_unique<TsKernel>();
  k->executable = exe;
  k->name = args->name;
  k->fn = reinterpret_cast<TsCpuKernelFn>(fn);
  const std::string sig_sym = std::string(TESSERA_CPU_SIGNATURE_PREFIX) + args->name;
  if (const void* text = dlsym(exe->handle, sig_sym.c_str())) {
    const std::string why = ParseKernelSignature(static_cast<const char*>(text), &k->signature);
    if (!why.empty())
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: kernel '%s' in %s has a malformed signature %s: %s", args->name,
                    exe->path.c_str(), sig_sym.c_str(), why.c_str());
    k->has_signature = true;
  }
  args->kernel = k.get();
  exe->kernels.emplace(args->name, std::move(k));
  return nullptr;
}

TS_CPU_ENTRY(Kernel_Launch, TS_KERNEL_LAUNCH_ARGS_MIN_STRUCT_SIZE) {
  TS_CPU_CHECK_HANDLE(args->kernel, "Kernel_Launch", "kernel");
  if (args->stream == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: stream is NULL: pass a stream (use "
                  "Device_GetDefaultStream for the default stream)");
  TS_CPU_CHECK_HANDLE(args->stream, "Kernel_Launch", "stream");
  TsKernel* k = args->kernel;
  TsDevice* dev = k->executable->device;
  if (args->stream->device != dev)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: kernel '%s' was loaded on device %u but the stream "
                  "belongs to device %u",
                  k->name.c_str(), dev->ordinal, args->stream->device->ordinal);
  const TsDim3 g = args->grid, b = args->group_size;
  if (g.x == 0 || g.y == 0 || g.z == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: grid (%u, %u, %u) has a zero dimension: every "
                  "dimension must be >= 1",
                  g.x, g.y, g.z);
  const uint64_t groups = static_cast<uint64_t>(g.x) * g.y * g.z;
  if (groups > 0xffffffffull)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: grid (%u, %u, %u) has %llu tile groups; the CPU plugin "
                  "runs at most 4294967295",
                  g.x, g.y, g.z, static_cast<unsigned long long>(groups));
  const uint64_t lanes = static_cast<uint64_t>(b.x) * b.y * b.z;
  if (lanes == 0 || lanes > kMaxGroupSize)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: group size (%u, %u, %u) = %llu lanes; it must be "
                  "between 1 and max_group_size = %u",
                  b.x, b.y, b.z, static_cast<unsigned long long>(lanes), kMaxGroupSize);
  if (args->shared_memory_bytes > kSharedMemoryPerGroup)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: %llu bytes of shared memory requested per group; the "
                  "limit (shared_memory_per_group) is %llu bytes",
                  static_cast<unsigned long long>(args->shared_memory_bytes),
                  static_cast<unsigned long long>(kSharedMemoryPerGroup));
  if (args->num_args > 0 && args->args == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "cpu: Kernel_Launch: num_args is %zu but args is NULL", args->num_args);

  if (k->has_signature)
    if (TsError* e = check_signature(*k, *args)) return e;

  KernelOp op;
  op.fn_ = k->fn;
  op.grid_[0] = g.x, op.grid_[1] = g.y, op.grid_[2] = g.z;
  op.group_[0] = b.x, op.group_[1] = b.y, op.group_[2] = b.z;
  op.shared_bytes_ = args->shared_memory_bytes;
  op.ordinal_ = dev->ordinal;
  op.items_ = static_cast<uint32_t>(groups);
  size_t words = 0;
  for (size_t i = 0; i < args->num_args; ++i) {
    const TsKernelArg& a = args->args[i];
    // The kind is checked as an integer before it is read as the enum.
    const int64_t kind = plugin_support::raw_enum(a.kind);
    if (kind != TS_KERNEL_ARG_SCALAR && kind != TS_KERNEL_ARG_BUFFER)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Kernel_Launch: argument %zu has kind %lld, not a TsKernelArgKind", i,
                    static_cast<long long>(kind));
    if (a.kind == TS_KERNEL_ARG_SCALAR) {
      if (a.size > 0 && a.data == nullptr)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "cpu: Kernel_Launch: scalar argument %zu has size %zu but data is NULL",
                      i, a.size);
      words += (a.size + 7) / 8 + (a.size == 0 ? 1 : 0);
    }
  }
  op.args_.reset(args->num_args, words);
  size_t w = 0;
  for (size_t i = 0; i < args->num_args; ++i) {
    const TsKernelArg& a = args->args[i];
    if (a.kind == TS_KERNEL_ARG_SCALAR) {
      op.args_.set_scalar(i, w, a.data, a.size);
      w += (a.size + 7) / 8 + (a.size == 0 ? 1 : 0);
      continue;
    }
    TsBuffer* buf = a.buffer;
    if (!valid(buf))
      return errorf(buf ? TS_ERROR_INVALID_HANDLE : TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Kernel_Launch: argument %zu is a buffer argument but its buffer %p "
                    "is %s",
                    i, static_cast<void*>(buf), buf ? "not a live CPU-plugin buffer" : "NULL");
    if (buf->device->client != dev->client)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Kernel_Launch: argument %zu: buffer belongs to another client", i);
    if (a.offset >= buf->size)
      return errorf(TS_ERROR_OUT_OF_RANGE,
                    "cpu: Kernel_Launch: argument %zu: offset %llu is past the end of its "
                    "%llu-byte buffer",
                    i, static_cast<unsigned long long>(a.offset),
                    static_cast<unsigned long long>(buf->size));
    op.args_.set_pointer(i, buf->data + a.offset);
  }
  OpUses uses;
  uses.kernel = k;
  uses.args = args->args;
  uses.num_args = args->num_args;
  uint64_t* completion_ns =
      TS_FIELD_PRESENT(args, TsKernel_Launch_Args, completion_ns) ? args->completion_ns : nullptr;
  return submit_op(args->stream, std::move(op), &uses, completion_ns);
}

}  // namespace tessera::cpu
