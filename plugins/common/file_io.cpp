#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "plugin_support.hpp"

namespace tessera::plugin_support {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

FileReadResult Fail(FileReadStatus status, std::string message) {
  return FileReadResult{status, std::move(message)};
}

// write() until done, retrying EINTR and short writes.
bool WriteAll(int fd, const char* p, size_t left) {
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

template <class Bytes>
FileReadResult ReadBounded(const std::string& path, uint64_t max_bytes, Bytes* out) {
  out->clear();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return Fail(FileReadStatus::kCannotOpen,
                strprintf("cannot open '%s': %s", path.c_str(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string what = KindOf(st.st_mode);
    ::close(fd);
    return Fail(FileReadStatus::kNotRegular,
                strprintf("'%s' is %s; only regular files are read", path.c_str(), what.c_str()));
  }
  const uint64_t claimed = static_cast<uint64_t>(st.st_size);
  if (claimed > max_bytes) {
    ::close(fd);
    return Fail(FileReadStatus::kTooLarge,
                strprintf("'%s' is %s; at most %s are read", path.c_str(),
                          human_size(claimed).c_str(), human_size(max_bytes).c_str()));
  }
  // Read up to the limit + 1 byte: a file that grew past the limit since
  // fstat is still refused, and the buffer never exceeds the limit + 1.
  out->resize(static_cast<size_t>(claimed));
  size_t got = 0;
  for (;;) {
    if (got == out->size()) {
      if (got > max_bytes) break;
      out->resize(got + static_cast<size_t>(std::min<uint64_t>(max_bytes + 1 - got, 1 << 16)));
    }
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(out->data()) + got, out->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      out->clear();
      return Fail(FileReadStatus::kReadFailed,
                  strprintf("reading '%s' failed: %s", path.c_str(), std::strerror(err)));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out->resize(got);
  if (got > max_bytes) {
    out->clear();
    return Fail(FileReadStatus::kTooLarge,
                strprintf("'%s' holds more than the %s that are read", path.c_str(),
                          human_size(max_bytes).c_str()));
  }
  return {};
}

}  // namespace

FileReadResult ReadBoundedFile(const std::string& path, uint64_t max_bytes, std::string* out) {
  return ReadBounded(path, max_bytes, out);
}

FileReadResult ReadBoundedFile(const std::string& path, uint64_t max_bytes,
                               std::vector<uint8_t>* out) {
  return ReadBounded(path, max_bytes, out);
}

FileReadResult CheckRegularFile(const std::string& path, uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return Fail(FileReadStatus::kCannotOpen,
                strprintf("cannot open '%s': %s", path.c_str(), std::strerror(errno)));
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  ::close(fd);
  if (!stat_ok || !S_ISREG(st.st_mode))
    return Fail(FileReadStatus::kNotRegular,
                strprintf("'%s' is %s; only regular files are read", path.c_str(), KindOf(st.st_mode)));
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return Fail(FileReadStatus::kTooLarge,
                strprintf("'%s' is %s; at most %s are read", path.c_str(),
                          human_size(static_cast<uint64_t>(st.st_size)).c_str(),
                          human_size(max_bytes).c_str()));
  return {};
}

TsError* ReadExecutableFile(const char* plugin, const std::string& path, uint64_t max_bytes,
                            std::vector<uint8_t>* out) {
  FileReadResult r = ReadBoundedFile(path, max_bytes, out);
  if (r.ok()) return nullptr;
  return errorf(r.status == FileReadStatus::kCannotOpen ? TS_ERROR_NOT_FOUND
                : r.status == FileReadStatus::kReadFailed ? TS_ERROR_DATA_LOSS
                                                          : TS_ERROR_INVALID_ARGUMENT,
                "%s: Executable_Load: %s", plugin, r.message.c_str());
}

std::string WriteFileAtomically(const std::string& path, const void* data, size_t size) {
  // In the same folder as the target: rename() is atomic only within one
  // file system.
  std::string tmp = path + ".tmpXXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return strprintf("cannot create a temporary file beside '%s': %s", path.c_str(),
                     std::strerror(errno));
  ::fchmod(fd, 0644);  // mkstemp makes 0600; a cache may be shared by a group
  std::string why;
  if (!WriteAll(fd, static_cast<const char*>(data), size))
    why = strprintf("writing '%s' failed: %s", tmp.c_str(), std::strerror(errno));
  else if (::fsync(fd) != 0)
    why = strprintf("fsync of '%s' failed: %s", tmp.c_str(), std::strerror(errno));
  if (::close(fd) != 0 && why.empty())
    why = strprintf("closing '%s' failed: %s", tmp.c_str(), std::strerror(errno));
  if (why.empty() && std::rename(tmp.c_str(), path.c_str()) != 0)
    why = strprintf("renaming '%s' to '%s' failed: %s", tmp.c_str(), path.c_str(),
                    std::strerror(errno));
  if (!why.empty()) ::unlink(tmp.c_str());
  return why;
}

std::string SyncFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return strprintf("cannot open '%s': %s", path.c_str(), std::strerror(errno));
  std::string why;
  if (::fsync(fd) != 0) why = strprintf("fsync of '%s' failed: %s", path.c_str(), std::strerror(errno));
  ::close(fd);
  return why;
}

}  // namespace tessera::plugin_support
