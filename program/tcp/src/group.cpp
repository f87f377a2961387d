// The tcp process group: the rendezvous (Join), the group's own star
// around process 0 (AllGather), and communicators (stars around their
// lowest process).
//
// Join: every process opens a data listener (any port), connects to the
// id's address and says hello: "TSTCP1 <nonce> <size> <rank> <host>
// <port>".  Process 0 checks each hello (a stranger, a wrong size, a rank
// twice or out of range: an error naming it), and once all size - 1 have
// come, sends every process "OK" and the table of data listeners.
//
// CreateCommunicator: every process of the communicator computes the same
// key (its processes, and how many communicators of those processes were
// made before); the members connect to the hub's data listener and send
// "TSCOMM1 <key> <process>"; the hub keeps connections for keys it is not
// making yet until it does (processes may create communicators at
// different times, in the same order).
#include "tessera/tcp.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <unistd.h>

#include "star.hpp"

namespace tessera::tcp {

namespace {

constexpr size_t kMaxHello = 4096;
constexpr size_t kMaxGather = size_t{1} << 30;

// JoinOptions::timeout_s, else TESSERA_TCP_TIMEOUT (seconds, above 0 and at
// most a week: larger values overflowed the deadline), else 600.  A value
// that is not such a number is said, not silently replaced.
double TimeoutSeconds(const JoinOptions& o) {
  constexpr double kDefault = 600, kMax = 7 * 24 * 3600;
  if (o.timeout_s > 0) return std::min(o.timeout_s, kMax);
  const char* e = std::getenv("TESSERA_TCP_TIMEOUT");
  if (!e || !*e) return kDefault;
  char* end = nullptr;
  const double v = std::strtod(e, &end);
  if (end == e || *end != 0 || !(v > 0) || v > kMax) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr,
                   "tessera: TESSERA_TCP_TIMEOUT=%s is not a number of seconds above 0 and at most %.0f; "
                   "using %.0f\n",
                   e, kMax, kDefault);
    });
    return kDefault;
  }
  return v;
}

// Listeners made by GetUniqueId, until this process joins as process 0.
std::mutex& RegistryMu() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, net::Fd>& Registry() {
  static std::map<std::string, net::Fd> r;
  return r;
}

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

struct Endpoint {
  std::string host;
  int port = 0;
};

class TcpGroup final : public ProcessGroup, public std::enable_shared_from_this<TcpGroup> {
 public:
  TcpGroup(int rank, int size, double timeout_s, net::Fd data_listener, std::vector<Endpoint> table,
           std::vector<net::Fd> links)
      : rank_(rank), size_(size), timeout_s_(timeout_s), listener_(std::move(data_listener)),
        table_(std::move(table)), links_(std::move(links)) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string provider() const override { return "tcp"; }
  StatusOr<Communicator> CreateCommunicator(const std::vector<uint32_t>& rank_process,
                                            const std::vector<Device>& local_devices) override;
  StatusOr<std::vector<std::string>> AllGather(const std::string& bytes) override;
  [[noreturn]] void Abort(int code) override {
    std::fflush(stdout);
    std::fflush(stderr);
    // The others' calls fail as the connections close ("process N closed
    // the connection"); there is no launcher to end them.
    std::_Exit(code);
  }

 private:
  // The next connection from `proc` for communicator `key`.
  StatusOr<net::Fd> AcceptMember(const std::string& key, int proc, net::Deadline dl);
  // The group's own connections (process 0: to every process; the others:
  // to process 0): one that closes while this process waits to make a
  // communicator means that process is gone.  Called under mu_ (nothing
  // else reads them meanwhile).
  std::vector<net::Watch> Watched() const {
    std::vector<net::Watch> w;
    for (size_t i = 0; i < links_.size(); ++i) w.push_back({&links_[i], Star::Name(rank_ == 0 ? static_cast<int>(i) + 1 : 0)});
    return w;
  }

  const int rank_, size_;
  const double timeout_s_;
  net::Fd listener_;
  std::vector<Endpoint> table_;   // every process's data listener
  std::vector<net::Fd> links_;    // process 0: to 1..size-1; others: [0] to process 0
  std::mutex mu_;
  std::map<std::vector<int>, int> made_;                    // communicators per process set
  std::map<std::string, std::map<int, net::Fd>> pending_;  // hub: early connections by key
};

StatusOr<net::Fd> TcpGroup::AcceptMember(const std::string& key, int proc, net::Deadline dl) {
  for (;;) {
    auto& waiting = pending_[key];
    auto it = waiting.find(proc);
    if (it != waiting.end()) {
      net::Fd fd = std::move(it->second);
      waiting.erase(it);
      return fd;
    }
    auto fd = net::Accept(listener_, dl, Star::Name(proc) + " to join a communicator", Watched());
    if (!fd.ok()) return fd.status();
    auto hello = net::RecvFrame(*fd, kMaxHello, dl, "a connecting process");
    if (!hello.ok()) continue;  // not one of ours: drop it
    std::vector<std::string> w = Words(*hello);
    if (w.size() != 3 || w[0] != "TSCOMM1") continue;
    const int from = std::atoi(w[2].c_str());
    if (from <= 0 || from >= size_) continue;
    pending_[w[1]][from] = std::move(*fd);
  }
}

StatusOr<Communicator> TcpGroup::CreateCommunicator(const std::vector<uint32_t>& rank_process,
                                                    const std::vector<Device>& local_devices) {
  std::lock_guard<std::mutex> lock(mu_);
  auto checked = CommunicatorProcesses(rank_process, size_, rank_, local_devices.size());
  if (!checked.ok()) return checked.status();
  const std::vector<int>& procs = *checked;
  std::string key;
  for (int p : procs) key += std::to_string(p) + ",";
  key += "#" + std::to_string(made_[procs]++);
  Star star;
  star.me = rank_;
  star.procs = procs;
  star.timeout_s = timeout_s_;
  const net::Deadline dl = net::After(timeout_s_);
  if (star.hub()) {
    for (size_t i = 1; i < procs.size(); ++i) {
      auto fd = AcceptMember(key, procs[i], dl);
      if (!fd.ok()) return Status(fd.status()).Annotate("creating a communicator of processes " + key);
      star.links.push_back(std::move(*fd));
    }
  } else {
    const Endpoint& hub = table_[procs[0]];
    auto fd = net::Connect(hub.host, hub.port, dl, Watched());
    if (!fd.ok()) return Status(fd.status()).Annotate("connecting to " + Star::Name(procs[0]));
    TESSERA_RETURN_IF_ERROR(
        net::SendFrame(*fd, "TSCOMM1 " + key + " " + std::to_string(rank_), dl, Star::Name(procs[0])));
    star.links.push_back(std::move(*fd));
  }
  return Communicator::FromProvider(local_devices,
                                    MakeStarProvider(std::move(star), rank_process, shared_from_this()));
}

StatusOr<std::vector<std::string>> TcpGroup::AllGather(const std::string& bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes.size() > kMaxGather) return Status(StatusCode::kInvalidArgument, "AllGather: over 1 GiB");
  const net::Deadline dl = net::After(timeout_s_);
  std::vector<std::string> all(static_cast<size_t>(size_));
  if (rank_ == 0) {
    all[0] = bytes;
    for (int p = 1; p < size_; ++p) {
      auto got = net::RecvFrame(links_[p - 1], kMaxGather, dl, Star::Name(p));
      if (!got.ok()) return got.status();
      all[p] = std::move(*got);
    }
    std::string packed;
    for (const std::string& s : all) {
      const uint64_t n = s.size();
      packed.append(reinterpret_cast<const char*>(&n), sizeof n);
      packed += s;
    }
    for (int p = 1; p < size_; ++p) TESSERA_RETURN_IF_ERROR(net::SendFrame(links_[p - 1], packed, dl, Star::Name(p)));
    return all;
  }
  TESSERA_RETURN_IF_ERROR(net::SendFrame(links_[0], bytes, dl, Star::Name(0)));
  auto packed = net::RecvFrame(links_[0], kMaxGather * static_cast<size_t>(size_), dl, Star::Name(0));
  if (!packed.ok()) return packed.status();
  size_t at = 0;
  for (int p = 0; p < size_; ++p) {
    uint64_t n = 0;
    if (packed->size() - at < sizeof n) return Status(StatusCode::kDataLoss, "AllGather: a short answer from process 0");
    std::memcpy(&n, packed->data() + at, sizeof n);
    at += sizeof n;
    if (packed->size() - at < n) return Status(StatusCode::kDataLoss, "AllGather: a short answer from process 0");
    all[p] = packed->substr(at, n);
    at += n;
  }
  return all;
}

// Process 0's side of Join: hellos from every other process, checked, then
// the table to all.
StatusOr<std::vector<net::Fd>> Gather(const net::Fd& listener, const UniqueId& id, int size,
                                      std::vector<Endpoint>* table, net::Deadline dl) {
  std::vector<net::Fd> links(static_cast<size_t>(size - 1));
  int joined = 0;
  auto fail = [&](net::Fd& fd, const std::string& why) {
    (void)net::SendFrame(fd, "ERR " + why, dl, "a joining process");
    return Status(StatusCode::kInvalidArgument, why);
  };
  while (joined < size - 1) {
    auto fd = net::Accept(listener, dl,
                          std::to_string(size - 1 - joined) + " more of " + std::to_string(size) +
                              " processes to join " + id.text());
    if (!fd.ok()) return fd.status();
    // A joining process says hello at once: 10 s at most for it, so that a
    // port scanner or health check that connects and says nothing does not
    // hold the others' joins up.
    const net::Deadline hello_by = std::min(dl, net::Clock::now() + std::chrono::seconds(10));
    auto hello = net::RecvFrame(*fd, kMaxHello, hello_by, "a joining process");
    if (!hello.ok()) continue;  // not one of ours (a port scanner, a health check)
    std::vector<std::string> w = Words(*hello);
    if (w.size() != 6 || w[0] != "TSTCP1") continue;
    if (std::strtoull(w[1].c_str(), nullptr, 10) != id.nonce) {
      (void)fail(*fd, "this id's nonce differs: the process joined another group's id");
      continue;  // a process of another group: not fatal to this one
    }
    const int their_size = std::atoi(w[2].c_str()), rank = std::atoi(w[3].c_str());
    if (their_size != size)
      return fail(*fd, "process " + w[3] + " joins a group of " + w[2] + " processes; process 0 was given " +
                           std::to_string(size) + ": every process must pass the same size");
    if (rank <= 0 || rank >= size)
      return fail(*fd, "a process joins as rank " + w[3] + ", outside 1.." + std::to_string(size - 1) +
                           " (rank 0 is the process that made the id)");
    if (links[rank - 1].valid()) return fail(*fd, "two processes join as rank " + w[3]);
    (*table)[rank] = {w[4], std::atoi(w[5].c_str())};
    // Said at once: the joining process then knows process 0 is there,
    // and waits for the others without mistaking another program on the
    // port for it.
    (void)net::SendFrame(*fd, "HELD", dl, Star::Name(rank));
    links[rank - 1] = std::move(*fd);
    ++joined;
  }
  std::string text = "OK";
  for (const Endpoint& e : *table) text += " " + e.host + " " + std::to_string(e.port);
  for (int p = 1; p < size; ++p) TESSERA_RETURN_IF_ERROR(net::SendFrame(links[p - 1], text, dl, Star::Name(p)));
  return links;
}

}  // namespace

std::string UniqueId::text() const {
  return "tessera-tcp:" + host + ":" + std::to_string(port) + ":" + std::to_string(nonce);
}

StatusOr<UniqueId> UniqueId::Parse(const std::string& text) {
  const std::string prefix = "tessera-tcp:";
  UniqueId id;
  const size_t a = text.find(':', prefix.size()), b = a == std::string::npos ? a : text.find(':', a + 1);
  if (text.compare(0, prefix.size(), prefix) != 0 || b == std::string::npos)
    return Status(StatusCode::kInvalidArgument,
                  "'" + text + "' is not a tessera tcp id (tessera-tcp:<host>:<port>:<nonce>, from GetUniqueId)");
  id.host = text.substr(prefix.size(), a - prefix.size());
  id.port = std::atoi(text.substr(a + 1, b - a - 1).c_str());
  id.nonce = std::strtoull(text.c_str() + b + 1, nullptr, 10);
  if (id.port <= 0 || id.port > 65535)
    return Status(StatusCode::kInvalidArgument, "'" + text + "': the port must be 1..65535");
  return id;
}

StatusOr<UniqueId> UniqueId::FromAddress(const std::string& host_port) {
  const size_t c = host_port.rfind(':');
  UniqueId id;
  if (c == std::string::npos || c == 0)
    return Status(StatusCode::kInvalidArgument, "'" + host_port + "' is not HOST:PORT (e.g. 127.0.0.1:29500)");
  id.host = host_port.substr(0, c);
  id.port = std::atoi(host_port.c_str() + c + 1);
  if (id.port <= 0 || id.port > 65535)
    return Status(StatusCode::kInvalidArgument, "'" + host_port + "': the port must be 1..65535");
  return id;
}

StatusOr<UniqueId> GetUniqueId(const std::string& host) {
  int port = 0;
  auto fd = net::Listen(host, 0, &port);
  if (!fd.ok()) return fd.status();
  UniqueId id;
  id.host = host;
  id.port = port;
  std::random_device rd;
  id.nonce = (uint64_t{rd()} << 32 | rd()) | 1;  // never 0 (FromAddress's)
  std::lock_guard<std::mutex> lock(RegistryMu());
  Registry()[id.text()] = std::move(*fd);
  return id;
}

StatusOr<std::shared_ptr<ProcessGroup>> Join(const UniqueId& id, int size, int rank, const JoinOptions& options) {
  if (size < 1 || rank < 0 || rank >= size)
    return Status(StatusCode::kInvalidArgument, "tcp::Join: rank " + std::to_string(rank) + " of " +
                                                    std::to_string(size) + " processes: need 0 <= rank < size");
  const double timeout = TimeoutSeconds(options);
  const net::Deadline dl = net::After(timeout);
  int data_port = 0;
  auto data = net::Listen("0.0.0.0", 0, &data_port);
  if (!data.ok()) return data.status();
  std::vector<Endpoint> table(static_cast<size_t>(size));
  std::vector<net::Fd> links;
  if (rank == 0) {
    net::Fd listener;
    {
      std::lock_guard<std::mutex> lock(RegistryMu());
      auto it = Registry().find(id.text());
      if (it != Registry().end()) {
        listener = std::move(it->second);
        Registry().erase(it);
      }
    }
    if (!listener.valid()) {
      if (id.nonce != 0)
        return Status(StatusCode::kInvalidArgument,
                      "tcp::Join: rank 0 must be the process that made the id " + id.text() +
                          " with GetUniqueId (it holds the listening socket), once");
      auto l = net::Listen(id.host, id.port, nullptr);
      if (!l.ok()) return Status(l.status()).Annotate("process 0 of a group at " + id.host + ":" + std::to_string(id.port));
      listener = std::move(*l);
    }
    table[0] = {id.host, data_port};
    auto got = Gather(listener, id, size, &table, dl);
    if (!got.ok()) return Status(got.status()).Annotate("tcp::Join (process 0 of " + std::to_string(size) + ")");
    links = std::move(*got);
  } else {
    auto fd = net::Connect(id.host, id.port, dl);
    if (!fd.ok()) return Status(fd.status()).Annotate("tcp::Join (rank " + std::to_string(rank) + ")");
    const std::string hello = "TSTCP1 " + std::to_string(id.nonce) + " " + std::to_string(size) + " " +
                              std::to_string(rank) + " " + net::LocalAddress(*fd) + " " + std::to_string(data_port);
    TESSERA_RETURN_IF_ERROR(net::SendFrame(*fd, hello, dl, Star::Name(0)));
    // Process 0 answers a hello at once ("HELD"), then with the table once
    // every process has come.  No answer within 30 s (or half the
    // timeout): what listens on the port is not a Tessera process 0 (it
    // waited the whole timeout, and the message blamed process 0).
    // Only for an id of TESSERA_COORDINATOR's form (nonce 0: process 0
    // listens only inside Join); an id from GetUniqueId listens from the
    // start, and process 0 may join much later.
    const auto now = net::Clock::now();
    const net::Deadline held_by =
        id.nonce != 0 ? dl : now + std::min<net::Clock::duration>(std::chrono::seconds(30), (dl - now) / 2);
    auto answer = net::RecvFrame(*fd, kMaxHello + 64 * static_cast<size_t>(size), held_by, Star::Name(0));
    if (!answer.ok() && answer.status().code() == StatusCode::kDeadlineExceeded && held_by < dl)
      return Status(StatusCode::kUnavailable,
                    "tcp::Join (rank " + std::to_string(rank) + "): " + id.host + ":" + std::to_string(id.port) +
                        " accepted the connection but did not answer the hello: is another program listening "
                        "on that port? (it must be the port process 0 of this group listens on)");
    if (answer.ok() && *answer == "HELD")
      answer = net::RecvFrame(*fd, kMaxHello + 64 * static_cast<size_t>(size), dl, Star::Name(0));
    if (!answer.ok()) return Status(answer.status()).Annotate("tcp::Join (rank " + std::to_string(rank) + ")");
    if (answer->compare(0, 4, "ERR ") == 0)
      return Status(StatusCode::kInvalidArgument, "tcp::Join (rank " + std::to_string(rank) + "): process 0 says " +
                                                      answer->substr(4));
    std::vector<std::string> w = Words(*answer);
    if (w.size() != 1 + 2 * static_cast<size_t>(size) || w[0] != "OK")
      return Status(StatusCode::kDataLoss, "tcp::Join: an answer from process 0 this version does not read");
    for (int p = 0; p < size; ++p) table[p] = {w[1 + 2 * p], std::atoi(w[2 + 2 * p].c_str())};
    links.push_back(std::move(*fd));
  }
  return std::shared_ptr<ProcessGroup>(
      std::make_shared<TcpGroup>(rank, size, timeout, std::move(*data), std::move(table), std::move(links)));
}

StatusOr<Communicator> CreateCommunicator(const UniqueId& id, int size, int rank,
                                          const std::vector<Device>& local_devices, const JoinOptions& options) {
  auto group = Join(id, size, rank, options);
  if (!group.ok()) return group.status();
  // Ranks process by process: every process's device count first.
  auto counts = (*group)->AllGather(std::to_string(local_devices.size()));
  if (!counts.ok()) return counts.status();
  std::vector<uint32_t> rank_process;
  for (int p = 0; p < size; ++p)
    for (int k = std::atoi((*counts)[p].c_str()); k > 0; --k) rank_process.push_back(static_cast<uint32_t>(p));
  return (*group)->CreateCommunicator(rank_process, local_devices);
}

}  // namespace tessera::tcp
