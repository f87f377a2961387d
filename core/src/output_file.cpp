#include "tessera/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace tessera {
namespace {

StatusCode CodeOf(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return StatusCode::kResourceExhausted;
    case EACCES:
    case EPERM:
    case EROFS:
      return StatusCode::kPermissionDenied;
    case ENOENT:
    case ENOTDIR:
      return StatusCode::kNotFound;
    default:
      return StatusCode::kInternal;
  }
}

Status Error(const std::string& path, const std::string& what, int err) {
  return Status(CodeOf(err), path + ": " + what + ": " + std::strerror(err));
}

// Writes all of `data` to `fd` (short writes and EINTR retried); 0 or errno.
int WriteAll(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// The folder a path is in ("." for a bare name), for the messages.
std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// The target of the link `path` (as lstat sized it), or "" when it is none.
std::string ReadLink(const std::string& path, const struct stat& st) {
  std::vector<char> target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1);
  const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
  if (n <= 0 || static_cast<size_t>(n) >= target.size()) return "";  // changed meanwhile
  const std::string t(target.data(), static_cast<size_t>(n));
  return t[0] == '/' || path.find('/') == std::string::npos ? t : FolderOf(path) + "/" + t;
}

// Opens `path` for writing in place (a device, or a file whose folder
// takes no new file); 0 or errno.
int WriteInPlace(const std::string& path, std::string_view data, int flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags);
  if (fd < 0) return errno;
  int err = WriteAll(fd, data);
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  return err;
}

// A new file beside `path`, created with mode 0666 less the umask (the
// kernel applies it: no umask() call, which would change it for every
// thread); -1 with errno.
int CreateTemporary(const std::string& path, std::string* tmp) {
  static std::atomic<uint64_t> counter{0};
  static thread_local std::mt19937_64 random(
      std::random_device{}() ^ static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[64];
    std::snprintf(suffix, sizeof suffix, ".tmp%d.%llu.%llx", static_cast<int>(::getpid()),
                  static_cast<unsigned long long>(counter.fetch_add(1)),
                  static_cast<unsigned long long>(random() & 0xffffffu));
    *tmp = path + suffix;
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

Status WriteOutputFile(const std::string& given, std::string_view data) {
  if (given.empty()) return Status(StatusCode::kInvalidArgument, "an output file needs a name");
  std::string path = given;
  // Symbolic links (a chain of them too): write what they point at, keep
  // the links.  A link to a file not made yet makes it there.
  struct stat st{};
  for (int hops = 0; hops < 40 && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode); ++hops) {
    const std::string next = ReadLink(path, st);
    if (next.empty()) break;
    path = next;
  }
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return Status(StatusCode::kInvalidArgument, given + ": is a folder; give the name of a file in it");
  if (exists && S_ISFIFO(st.st_mode)) {
    // Opened without blocking: with no process reading it, a blocking open
    // would wait for one for ever (the program would hang at the write).
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENXIO)
      return Status(StatusCode::kFailedPrecondition,
                    given + ": is a FIFO that no process is reading; start the reader first "
                            "(for example `cat " + given + " > copy &`), or write to a file");
    if (fd < 0) return Error(given, "cannot open the FIFO", errno);
    // A reader is there: the writes may wait for it, as a pipe's do.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int err = WriteAll(fd, data);
    if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
    if (err) return Error(given, "writing failed", err);
    return Status::Ok();
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or terminal: written in place, never replaced.
    if (const int err = WriteInPlace(path, data, 0)) return Error(given, "writing failed", err);
    return Status::Ok();
  }
  // An existing file the user may not write (chmod 444) stays as it is,
  // as opening it for writing would have refused.
  if (exists && ::access(path.c_str(), W_OK) != 0) return Error(given, "cannot write it", errno);
  // A regular file or a new one: a temporary file beside it, then rename
  // (atomic within one file system).
  std::string tmp;
  const int fd = CreateTemporary(path, &tmp);
  if (fd < 0) {
    const int err = errno;
    // A writable file in a folder that takes no new file (a shared results
    // folder): written in place, as before, not refused.
    if (exists && (err == EACCES || err == EPERM || err == EROFS)) {
      if (const int e = WriteInPlace(path, data, O_TRUNC)) return Error(given, "writing failed", e);
      return Status::Ok();
    }
    if (err == ENOENT || err == ENOTDIR)
      return Error(given, "cannot write into the folder " + FolderOf(path) + " (does it exist?)", err);
    return Error(given, "cannot create a file in " + FolderOf(path), err);
  }
  // An existing file keeps its permissions.
  if (exists) ::fchmod(fd, st.st_mode & 07777);
  int err = WriteAll(fd, data);
  const char* step = "writing failed";
  if (err == 0 && ::fsync(fd) != 0) err = errno, step = "flushing to the disk failed";
  if (::close(fd) != 0 && err == 0) err = errno, step = "writing failed";
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno, step = "replacing it failed";
  if (err) {
    ::unlink(tmp.c_str());
    return Error(given, step, err);
  }
  return Status::Ok();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace tessera
