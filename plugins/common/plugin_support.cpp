#include "plugin_support.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace tessera::plugin_support {

namespace {
// Returned when even the error cannot be allocated; never freed.
TsError g_out_of_memory{TS_ERROR_RESOURCE_EXHAUSTED,
                        "out of host memory while reporting an error"};
}  // namespace

TsError* make_error(TsErrorCode code, std::string message) noexcept {
  try {
    return new TsError{code, std::move(message)};
  } catch (...) {
    return &g_out_of_memory;
  }
}

std::string vformat(const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char buf[512];
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  std::string out;
  if (n < 0) {
    out = fmt;
  } else if (static_cast<size_t>(n) < sizeof buf) {
    out.assign(buf, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), fmt, ap2);
    out.resize(static_cast<size_t>(n));
  }
  va_end(ap2);
  return out;
}

std::string strprintf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

TsError* check_timestamp_slot(const char* plugin, const char* entry, const uint64_t* slot) noexcept {
  if (slot) return nullptr;
  return errorf(TS_ERROR_INVALID_ARGUMENT,
                "%s: %s: timestamp_ns is NULL: pass the address of a uint64_t set to 0, valid until written",
                plugin, entry);
}

TsError* check_import(const char* plugin, const TsBuffer_Import_Args* args, uint32_t kinds) noexcept {
  if (args->address == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: Buffer_Import: address is 0: pass the memory's device address",
                  plugin);
  if (args->size == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: Buffer_Import: size is 0: import at least one byte", plugin);
  if (args->address + args->size < args->address)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: Buffer_Import: address + size (%s) wraps past 2^64", plugin,
                  human_size(args->size).c_str());
  // The caller's bits, read without assuming they are a TsBufferKind.
  const int64_t kind = raw_enum(args->kind);
  if (kind != TS_BUFFER_DEVICE && kind != TS_BUFFER_HOST_PINNED && kind != TS_BUFFER_MANAGED)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "%s: Buffer_Import: kind %lld is not a TsBufferKind (0 device, 1 pinned, 2 managed)", plugin,
                  static_cast<long long>(kind));
  if (!(kinds & (1u << kind)))
    return errorf(TS_ERROR_UNSUPPORTED, "%s: Buffer_Import: the device has no memory of kind %lld", plugin,
                  static_cast<long long>(kind));
  return nullptr;
}

void set_compile_arch(char (&dst)[TS_NAME_MAX], const std::string& arch, const char* archs) noexcept {
  dst[0] = '\0';
  if (arch.empty() || arch.size() >= TS_NAME_MAX || !archs) return;
  const std::string list = std::string(",") + archs + ",";
  if (list.find("," + arch + ",") == std::string::npos) return;
  std::memcpy(dst, arch.c_str(), arch.size() + 1);
}

TsError* out_of_host_memory(const char* plugin, const char* entry) noexcept try {
  // The heap just said no: anything here may throw again, and the catch
  // below then gives the plain message.  /proc/self/statm is one short
  // line (sizes in pages).
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::string detail;
  if (FILE* f = std::fopen("/proc/self/statm", "re")) {
    unsigned long long size_pages = 0, resident_pages = 0;
    if (std::fscanf(f, "%llu %llu", &size_pages, &resident_pages) == 2)
      detail = "this process holds " + human_size(resident_pages * page) + " resident";
    std::fclose(f);
  }
  if (const long pages = sysconf(_SC_PHYS_PAGES); pages > 0)
    detail += (detail.empty() ? "the machine has " : " of the machine's ") +
              human_size(static_cast<uint64_t>(pages) * page);
  struct rlimit as {};
  const bool limited = getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
  if (limited)
    detail += (detail.empty() ? "" : ", ") + std::string("under an address-space limit (ulimit -v) of ") +
              human_size(static_cast<uint64_t>(as.rlim_cur));
  return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "%s: %s: out of host memory%s%s%s: free buffers or other host memory%s and retry",
                plugin, entry, detail.empty() ? "" : " (", detail.c_str(), detail.empty() ? "" : ")",
                limited ? ", or raise the limit," : "");
} catch (...) {
  return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "%s: %s: out of host memory: free buffers or other host memory and retry",
                plugin, entry);
}

TsError* errorf(TsErrorCode code, const char* fmt, ...) noexcept {
  try {
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    return make_error(code, std::move(s));
  } catch (...) {
    return &g_out_of_memory;
  }
}

std::string human_size(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return strprintf("%llu B", static_cast<unsigned long long>(bytes));
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  return strprintf("%.1f %s", v, kUnits[u]);
}

TsError* Error_Destroy(TsError_Destroy_Args* args) noexcept {
  if (args == nullptr) return nullptr;
  if (args->error != &g_out_of_memory) delete args->error;  // NULL is fine
  return nullptr;
}

TsError* Error_Message(TsError_Message_Args* args) noexcept {
  if (args == nullptr || args->error == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "Error_Message: args or args->error is NULL");
  if (args->struct_size < TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "Error_Message: TsError_Message_Args.struct_size is %zu, smaller than the %zu "
                  "bytes of ABI 1.0",
                  args->struct_size, static_cast<size_t>(TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE));
  args->message = args->error->message.c_str();
  args->message_size = args->error->message.size();
  return nullptr;
}

TsError* Error_GetCode(TsError_GetCode_Args* args) noexcept {
  if (args == nullptr || args->error == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "Error_GetCode: args or args->error is NULL");
  if (args->struct_size < TS_ERROR_GETCODE_ARGS_STRUCT_SIZE)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "Error_GetCode: TsError_GetCode_Args.struct_size is %zu, smaller than the %zu "
                  "bytes of ABI 1.0",
                  args->struct_size, static_cast<size_t>(TS_ERROR_GETCODE_ARGS_STRUCT_SIZE));
  args->code = args->error->code;
  return nullptr;
}

TsError* check_process_spanning_create(const char* plugin, const TsCommunicator_Create_Args* args,
                                       bool supported, bool* across) noexcept {
  *across = TS_FIELD_PRESENT(args, TsCommunicator_Create_Args, num_ranks) && args->unique_id != nullptr;
  if (!*across) return nullptr;
  if (!supported)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "%s: Communicator_Create: this plugin's communicators cannot span processes (it "
                  "does not report TS_COLLECTIVE_CAP_MULTI_PROCESS); leave unique_id NULL and move "
                  "the data between processes another way (a process group's provider, e.g. MPI)",
                  plugin);
  if (args->ranks == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "%s: Communicator_Create: unique_id is set but ranks is NULL: pass the rank of each "
                  "of this process's devices",
                  plugin);
  if (args->num_ranks == 0 || args->num_devices > args->num_ranks)
    return errorf(TS_ERROR_INVALID_ARGUMENT,
                  "%s: Communicator_Create: num_ranks is %u but this process passes %zu devices: "
                  "num_ranks counts the ranks of every process",
                  plugin, args->num_ranks, args->num_devices);
  for (size_t i = 0; i < args->num_devices; ++i) {
    if (args->ranks[i] >= args->num_ranks)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "%s: Communicator_Create: ranks[%zu] is %u, not a rank of a communicator of %u",
                    plugin, i, args->ranks[i], args->num_ranks);
    for (size_t j = 0; j < i; ++j)
      if (args->ranks[j] == args->ranks[i])
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "%s: Communicator_Create: rank %u is given to devices[%zu] and devices[%zu]",
                      plugin, args->ranks[i], j, i);
  }
  return nullptr;
}

}  // namespace tessera::plugin_support
