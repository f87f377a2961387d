#include "tessera/output_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

// Writes all of `data` to `fd` (short writes and EINTR retried).
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

}  // namespace

Status WriteOutputFile(const std::string& given, std::string_view data) {
  if (given.empty()) return Status(StatusCode::kInvalidArgument, "an output file needs a name");
  std::string path = given;
  // A symbolic link: write what it points at, keep the link.
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      path = real;
      std::free(real);
    } else {  // a link to a file not made yet: make it there
      char target[PATH_MAX];
      const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      if (n > 0) {
        target[n] = 0;
        path = target[0] == '/' || path.find('/') == std::string::npos ? std::string(target)
                                                                       : FolderOf(path) + "/" + target;
      }
    }
  }
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return Status(StatusCode::kInvalidArgument, given + ": is a folder; give the name of a file in it");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or terminal: written in place, never replaced.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Error(given, "cannot open it for writing", errno);
    int err = WriteAll(fd, data);
    if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
    if (err) return Error(given, "writing failed", err);
    return Status::Ok();
  }
  // A regular file or a new one: a temporary file beside it, then rename
  // (atomic within one file system).
  std::string tmp = path + ".tmpXXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return Error(given, "cannot write into the folder " + FolderOf(path) + " (does it exist?)", err);
    return Error(given, "cannot create a file in " + FolderOf(path), err);
  }
  // mkstemp makes 0600: an existing file keeps its mode, a new one gets
  // what the umask allows.
  mode_t mode = st.st_mode & 07777;
  if (!exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
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
