// What every plugin needs at the ABI boundary, written once: the opaque
// error object, printf-style error builders, the guard that turns C++
// exceptions into errors, the entry-point macro that checks Args structs, and
// the three Error_* entry points.
//
// Each plugin links this static library (hidden visibility, so two plugins
// loaded into one process keep separate copies) and defines its entries with
//   TS_PLUGIN_ENTRY("cpu", Buffer_Allocate, TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE) {...}
//
// Thread-safety: everything here is stateless or immutable.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>

#include "tessera/plugin.h"

// The opaque error handed across the ABI; owned by the caller.
struct TsError {
  TsErrorCode code;
  std::string message;
};

namespace tessera::plugin_support {

// Host CLOCK_MONOTONIC in nanoseconds (std::chrono::steady_clock on Linux):
// the clock of Stream_WriteTimestamp and completion_ns.
inline uint64_t steady_clock_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Builds an error; never throws (falls back to a static out-of-memory error
// that Error_Destroy knows not to free).
TsError* make_error(TsErrorCode code, std::string message) noexcept;
TsError* errorf(TsErrorCode code, const char* fmt, ...) noexcept
    __attribute__((format(printf, 2, 3)));
std::string vformat(const char* fmt, va_list ap);
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "1.0 TiB", "23.4 GiB", "512 B".
std::string human_size(uint64_t bytes);
// Stream_WriteTimestamp's and completion_ns's destination (ABI 1.3): NULL
// is INVALID_ARGUMENT saying what to pass; else no error.
TsError* check_timestamp_slot(const char* plugin, const char* entry, const uint64_t* slot) noexcept;

// Buffer_Import's request (ABI 1.6): address 0, size 0, an unknown kind or
// a kind the device lacks (`kinds`, TsBufferKindMask) is INVALID_ARGUMENT /
// UNSUPPORTED saying which; else no error.
TsError* check_import(const char* plugin, const TsBuffer_Import_Args* args, uint32_t kinds) noexcept;

// TsDeviceProperties.compile_arch (ABI 1.5): `arch` when the comma list
// `archs` (a TsCompilerTarget's) has it, else "" (the caller then takes the
// target's default); at most TS_NAME_MAX - 1 characters.
void set_compile_arch(char (&dst)[TS_NAME_MAX], const std::string& arch, const char* archs) noexcept;

// RESOURCE_EXHAUSTED for an entry that ran out of host memory, with what
// the user weighs: the memory this process holds, the machine's, the
// address-space limit when there is one, and what to do.
TsError* out_of_host_memory(const char* plugin, const char* entry) noexcept;

// Runs f, turning every C++ exception into a TsError: nothing crosses the ABI.
template <class F>
TsError* guard(const char* plugin, const char* entry, F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return out_of_host_memory(plugin, entry);
  } catch (const std::system_error& e) {
    // A thread or memory the system would not give (EAGAIN, ENOMEM) is
    // exhaustion, not a defect of the plugin.
    const int err = e.code().value();
    if (err == EAGAIN || err == ENOMEM)
      return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                    "%s: %s: out of a system resource (%s): too many threads or processes, or too little "
                    "memory; free some and retry",
                    plugin, entry, e.what());
    return errorf(TS_ERROR_INTERNAL, "%s: %s: internal error: %s", plugin, entry, e.what());
  } catch (const std::exception& e) {
    return errorf(TS_ERROR_INTERNAL, "%s: %s: internal error: %s", plugin, entry, e.what());
  } catch (...) {
    return errorf(TS_ERROR_INTERNAL, "%s: %s: internal error (unknown exception)", plugin,
                  entry);
  }
}

// Checks a handle whose object starts with `uint32_t magic` equal to
// T::kMagic (objects overwrite it when destroyed): NULL -> INVALID_ARGUMENT,
// a destroyed or foreign handle -> INVALID_HANDLE, instead of a crash.
template <class T>
TsError* check_handle(const char* plugin, const T* p, const char* entry, const char* what) {
  if (p == nullptr)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: %s: %s is NULL", plugin, entry, what);
  if (p->magic != T::kMagic)
    return errorf(TS_ERROR_INVALID_HANDLE,
                  "%s: %s: %s %p is not a live %s-plugin handle (destroyed, or "
                  "created by another plugin)",
                  plugin, entry, what, static_cast<const void*>(p), plugin);
  return nullptr;
}

// The integer a caller stored in an enum field of an argument struct. A C
// caller may store any int there, and in C++ loading a value outside the
// enumerators' range through the enum type is undefined (UBSan: "load of
// value 77, which is not a valid value for type 'TsValueType'"), so a field
// is read this way until it is known to hold one of the enumerators.
template <class E>
int64_t raw_enum(const E& field) noexcept {
  static_assert(std::is_enum_v<E>, "raw_enum reads enum fields");
  std::underlying_type_t<E> v;
  std::memcpy(&v, &field, sizeof v);
  return static_cast<int64_t>(v);
}

// Communicator_Create's MINOR-4 fields.  *across is whether the caller asked
// for a communicator across processes (a unique_id).  If so: a plugin that
// cannot (`supported` false) gets UNSUPPORTED saying what to use instead;
// else num_ranks and ranks are checked (at least num_devices ranks, each
// rank below num_ranks and given once).
TsError* check_process_spanning_create(const char* plugin, const TsCommunicator_Create_Args* args,
                                       bool supported, bool* across) noexcept;

// The Error_* entry points, shared by every plugin's table.
TsError* Error_Destroy(TsError_Destroy_Args* args) noexcept;
TsError* Error_Message(TsError_Message_Args* args) noexcept;
TsError* Error_GetCode(TsError_GetCode_Args* args) noexcept;

}  // namespace tessera::plugin_support

// Defines entry point Name: checks `args` and its struct_size (a larger size
// from a newer caller is accepted, a smaller one than ABI x.0 rejected), then
// runs Name_impl inside guard().  PLUGIN is the plugin's name for messages.
#define TS_PLUGIN_ENTRY(PLUGIN, Name, SIZE)                                        \
  static TsError* Name##_impl(Ts##Name##_Args* args);                              \
  TsError* Name(Ts##Name##_Args* args) noexcept {                                  \
    if (args == nullptr)                                                           \
      return ::tessera::plugin_support::errorf(                                    \
          TS_ERROR_INVALID_ARGUMENT,                                               \
          PLUGIN ": " #Name ": args is NULL: pass a Ts" #Name                      \
                 "_Args with struct_size = " #SIZE);                               \
    if (args->struct_size < (SIZE))                                                \
      return ::tessera::plugin_support::errorf(                                    \
          TS_ERROR_INVALID_ARGUMENT,                                               \
          PLUGIN ": " #Name ": Ts" #Name "_Args.struct_size is %zu, smaller than "  \
                 "the %zu bytes of ABI %d.0: set it to " #SIZE,                    \
          args->struct_size, static_cast<size_t>(SIZE), TESSERA_ABI_VERSION_MAJOR); \
    return ::tessera::plugin_support::guard(PLUGIN, #Name,                         \
                                            [&] { return Name##_impl(args); });   \
  }                                                                                \
  static TsError* Name##_impl(Ts##Name##_Args* args)

// Every entry point an in-tree plugin implements itself (Error_* are shared),
// in table order: X(Name) per entry (plugin.h keeps the list).  Optional
// entries of later MINORs (Stream_WriteTimestamp) are set by the plugins
// that have them, after TS_PLUGIN_FILL_TABLE.
#define TS_PLUGIN_FOR_EACH_VENDOR_ENTRY(X) TS_PLUGIN_API_ENTRIES_1_2(X)

// Declares every vendor entry point in the current namespace.
#define TS_PLUGIN_DECLARE_ENTRY_(Name) TsError* Name(Ts##Name##_Args* args) noexcept;
#define TS_PLUGIN_DECLARE_ENTRIES() TS_PLUGIN_FOR_EACH_VENDOR_ENTRY(TS_PLUGIN_DECLARE_ENTRY_)

// Fills the TsPluginApi named `api` from functions named after the entries,
// found in the current namespace (Error_* come from plugin_support).
#define TS_PLUGIN_FILL_TABLE()                                                   \
  do {                                                                              \
    api.struct_size = TS_PLUGIN_API_STRUCT_SIZE;                                  \
    api.extension_start = nullptr;                                                \
    api.abi_version =                                                             \
        TsAbiVersion{TESSERA_ABI_VERSION_MAJOR, TESSERA_ABI_VERSION_MINOR};         \
    api.Error_Destroy = &::tessera::plugin_support::Error_Destroy;                \
    api.Error_Message = &::tessera::plugin_support::Error_Message;                \
    api.Error_GetCode = &::tessera::plugin_support::Error_GetCode;                \
    TS_PLUGIN_FOR_EACH_VENDOR_ENTRY(TS_PLUGIN_SET_ENTRY_)                           \
  } while (0)
#define TS_PLUGIN_SET_ENTRY_(Name) api.Name = &Name;
