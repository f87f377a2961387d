// Blocking TCP with deadlines: what the tcp process group is built on.
// Every wait is bounded by a deadline; every read has a known size (a
// peer's length field is checked against what the caller expects or a
// bound, never trusted for an allocation).
#ifndef TESSERA_TCP_SOCKET_HPP_
#define TESSERA_TCP_SOCKET_HPP_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/status.hpp"

namespace tessera::tcp::net {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
Deadline After(double seconds);

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

// A listening socket on host:port (port 0: any); *bound_port gets the port.
StatusOr<Fd> Listen(const std::string& host, int port, int* bound_port);
// Connections that must stay open while waiting for something else: one
// that closes means its process is gone, and the wait fails at once with
// its name instead of running into the deadline.
struct Watch {
  const Fd* fd;
  std::string name;
};
// An error naming the first watched connection that has closed; Ok when
// all are open (data waiting on one is left unread).
Status CheckWatched(const std::vector<Watch>& watch);
// The next connection on `listener`, or an error at the deadline.
StatusOr<Fd> Accept(const Fd& listener, Deadline deadline, const std::string& waiting_for,
                    const std::vector<Watch>& watch = {});
// Connects, retrying while nobody listens yet (the peer may start later).
StatusOr<Fd> Connect(const std::string& host, int port, Deadline deadline, const std::vector<Watch>& watch = {});
// This end's IPv4 address of a connected socket ("10.0.0.2").
std::string LocalAddress(const Fd& fd);

// `peer` names the other side in messages ("process 2").
Status SendAll(const Fd& fd, const void* data, size_t size, Deadline deadline, const std::string& peer);
Status RecvAll(const Fd& fd, void* data, size_t size, Deadline deadline, const std::string& peer);

// Frames: a u64 length, then the bytes.  RecvFrame refuses a length above
// `max_bytes`; RecvFrameInto wants exactly `size` bytes.
Status SendFrame(const Fd& fd, const void* data, size_t size, Deadline deadline, const std::string& peer);
inline Status SendFrame(const Fd& fd, const std::string& s, Deadline deadline, const std::string& peer) {
  return SendFrame(fd, s.data(), s.size(), deadline, peer);
}
StatusOr<std::string> RecvFrame(const Fd& fd, size_t max_bytes, Deadline deadline, const std::string& peer);
Status RecvFrameInto(const Fd& fd, void* data, size_t size, Deadline deadline, const std::string& peer);

}  // namespace tessera::tcp::net

#endif  // TESSERA_TCP_SOCKET_HPP_
