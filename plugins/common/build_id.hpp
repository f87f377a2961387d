// Which build of a shared object is running: its file's size and
// modification time, read with stat (nothing is loaded).  Caches of compiled
// code key on it, so that a rebuilt compiler never answers from an older
// build's cache under the same version string.  Header-only: used by the
// plugins' compiler parts and by libtessera_compiler alike.
#pragma once

#include <dlfcn.h>
#include <sys/stat.h>

#include <string>

namespace tessera::plugin_support {

// "<size>:<seconds>.<nanoseconds>" of `path`; "" when it cannot be read.
inline std::string FileBuildId(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  return std::to_string(static_cast<long long>(st.st_size)) + ":" +
         std::to_string(static_cast<long long>(st.st_mtim.tv_sec)) + "." +
         std::to_string(static_cast<long long>(st.st_mtim.tv_nsec));
}

// The same for the shared object (or executable) that holds `address`.
inline std::string BuildIdOfObjectHolding(const void* address) {
  Dl_info info{};
  if (!dladdr(address, &info) || !info.dli_fname) return "";
  return FileBuildId(info.dli_fname);
}

}  // namespace tessera::plugin_support
