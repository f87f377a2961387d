#include "socket.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <algorithm>
#include <thread>
#include <unistd.h>

namespace tessera::tcp::net {

namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

int MillisLeft(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

// An IPv4 address, or a host name resolved to its first IPv4 address
// (localhost, node07): TESSERA_COORDINATOR=HOST:PORT names hosts either way.
StatusOr<sockaddr_in> Address(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (port < 0 || port > 65535)
    return Status(StatusCode::kInvalidArgument,
                  "'" + host + ":" + std::to_string(port) + "': the port must be 0..65535");
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) == 1) return a;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = host.empty() ? EAI_NONAME : ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found)
    return Status(StatusCode::kInvalidArgument,
                  "'" + host + ":" + std::to_string(port) + "': " + (rc ? gai_strerror(rc) : "no address") +
                      " (give an IPv4 address or a host name that resolves to one, e.g. 127.0.0.1:29500)");
  a.sin_addr = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
  ::freeaddrinfo(found);
  return a;
}

// Waits until fd is ready for `events` or the deadline passes.
Status WaitReady(int fd, short events, Deadline deadline, const std::string& what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = MillisLeft(deadline);
    if (ms == 0 && Clock::now() >= deadline)
      return Status(StatusCode::kDeadlineExceeded, what + " did not complete in time (TESSERA_TCP_TIMEOUT)");
    int r = ::poll(&p, 1, ms);
    if (r > 0) return Status::Ok();
    if (r < 0 && errno != EINTR) return Status(StatusCode::kInternal, Errno("poll"));
  }
}

}  // namespace

Deadline After(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

StatusOr<Fd> Listen(const std::string& host, int port, int* bound_port) {
  auto addr = Address(host, port);
  if (!addr.ok()) return addr.status();
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status(StatusCode::kInternal, Errno("socket"));
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0)
    return Status(StatusCode::kUnavailable, Errno("listening on " + host + ":" + std::to_string(port)));
  if (::listen(fd.get(), 128) != 0) return Status(StatusCode::kInternal, Errno("listen"));
  sockaddr_in got{};
  socklen_t len = sizeof got;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&got), &len);
  if (bound_port) *bound_port = ntohs(got.sin_port);
  return fd;
}

Status CheckWatched(const std::vector<Watch>& watch) {
  for (const Watch& w : watch) {
    if (!w.fd || !w.fd->valid()) continue;
    pollfd p{w.fd->get(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) continue;
    char c;
    const ssize_t n = ::recv(w.fd->get(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      return Status(StatusCode::kUnavailable, w.name + " closed the connection (it failed or exited)");
  }
  return Status::Ok();
}

StatusOr<Fd> Accept(const Fd& listener, Deadline deadline, const std::string& waiting_for,
                    const std::vector<Watch>& watch) {
  for (;;) {
    // Up to a second at a time, so that a watched process that is gone is
    // noticed while nobody connects.
    // A connection already waiting is taken first: its process may have
    // finished and closed its other connections since it connected.
    const Deadline step = std::min(deadline, Clock::now() + std::chrono::seconds(1));
    Status ready = WaitReady(listener.get(), POLLIN, step, "waiting for " + waiting_for);
    if (!ready.ok()) {
      TESSERA_RETURN_IF_ERROR(CheckWatched(watch));
      if (Clock::now() >= deadline) return ready;
      continue;
    }
    Fd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (fd.valid()) {
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
      return Status(StatusCode::kInternal, Errno("accept"));
  }
}

StatusOr<Fd> Connect(const std::string& host, int port, Deadline deadline, const std::vector<Watch>& watch) {
  auto addr = Address(host, port);
  if (!addr.ok()) return addr.status();
  for (;;) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return Status(StatusCode::kInternal, Errno("socket"));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) == 0) {
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    // Nobody listens yet (process 0 starts later): try again until the
    // deadline.
    if (errno != ECONNREFUSED && errno != EINTR && errno != ETIMEDOUT && errno != EAGAIN)
      return Status(StatusCode::kUnavailable, Errno("connecting to " + host + ":" + std::to_string(port)));
    TESSERA_RETURN_IF_ERROR(CheckWatched(watch));  // the peer is gone: no use waiting
    if (Clock::now() >= deadline)
      return Status(StatusCode::kDeadlineExceeded,
                    "nobody listened on " + host + ":" + std::to_string(port) +
                        " in time: is process 0 running, with this id? (TESSERA_TCP_TIMEOUT)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string LocalAddress(const Fd& fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) return "127.0.0.1";
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return text;
}

Status SendAll(const Fd& fd, const void* data, size_t size, Deadline deadline, const std::string& peer) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd.get(), p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      TESSERA_RETURN_IF_ERROR(WaitReady(fd.get(), POLLOUT, deadline, "sending to " + peer));
      continue;
    }
    return Status(StatusCode::kUnavailable,
                  peer + " closed the connection (it failed or exited): " + std::strerror(errno));
  }
  return Status::Ok();
}

Status RecvAll(const Fd& fd, void* data, size_t size, Deadline deadline, const std::string& peer) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd.get(), p, size, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Status(StatusCode::kUnavailable, peer + " closed the connection (it failed or exited)");
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      TESSERA_RETURN_IF_ERROR(WaitReady(fd.get(), POLLIN, deadline, "receiving from " + peer));
      continue;
    }
    return Status(StatusCode::kUnavailable, peer + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status SendFrame(const Fd& fd, const void* data, size_t size, Deadline deadline, const std::string& peer) {
  const uint64_t n = size;
  TESSERA_RETURN_IF_ERROR(SendAll(fd, &n, sizeof n, deadline, peer));
  return SendAll(fd, data, size, deadline, peer);
}

StatusOr<std::string> RecvFrame(const Fd& fd, size_t max_bytes, Deadline deadline, const std::string& peer) {
  uint64_t n = 0;
  TESSERA_RETURN_IF_ERROR(RecvAll(fd, &n, sizeof n, deadline, peer));
  if (n > max_bytes)
    return Status(StatusCode::kDataLoss, peer + " sent a message of " + std::to_string(n) + " bytes where at most " +
                                             std::to_string(max_bytes) + " fit (not a Tessera process, or another version)");
  std::string s(static_cast<size_t>(n), '\0');
  TESSERA_RETURN_IF_ERROR(RecvAll(fd, s.data(), s.size(), deadline, peer));
  return s;
}

Status RecvFrameInto(const Fd& fd, void* data, size_t size, Deadline deadline, const std::string& peer) {
  uint64_t n = 0;
  TESSERA_RETURN_IF_ERROR(RecvAll(fd, &n, sizeof n, deadline, peer));
  if (n != size)
    return Status(StatusCode::kDataLoss, peer + " sent " + std::to_string(n) + " bytes where " + std::to_string(size) +
                                             " were expected (the processes disagree on the call)");
  return RecvAll(fd, data, size, deadline, peer);
}

}  // namespace tessera::tcp::net
