// libtessera_tcp.so (Tessera::tcp): process groups and collectives across
// processes over TCP, bootstrapped from a unique id the caller passes
// around (as ncclGetUniqueId / ncclCommInitRank), or from a coordinator
// address every process knows (as jax.distributed.initialize).  No MPI, no
// launcher: any way of starting N processes works (docs/spmd.md, "Without
// MPI").
//
//   // process 0
//   auto id = tessera::tcp::GetUniqueId();          // listens; id->text to the others
//   // every process p of N (process 0 with its own id)
//   auto id = tessera::tcp::UniqueId::Parse(text);
//   auto comm = tessera::tcp::CreateCommunicator(*id, N, p, {device});
//   comm->all_reduce({send}, {recv}, n, TS_DTYPE_F32, TS_REDUCE_SUM, {stream}, true);
//
//   // or an SPMD program across the processes
//   auto group = tessera::tcp::Join(*id, N, p);
//   auto program = tessera::Program::Create(my_devices, image, *group);
//
// Data moves through the group's lowest process of each communicator (a
// star): every collective is the cpu plugin's fixed reduction tree, so
// results are bit for bit those of one process, and the hub's link carries
// (N - 1) x the data: meant for bootstrapping and moderate sizes; MPI
// (tessera/mpi.hpp) or the vendor libraries are the fast paths.
//
// Failures are errors, never hangs: a process that exits or closes its
// connection fails the others' current call ("process 2 closed the
// connection"), and every wait is bounded (JoinOptions::timeout_s,
// TESSERA_TCP_TIMEOUT).
//
// Thread-safety: a group and each communicator serialize their own calls.
#ifndef TESSERA_TCP_HPP_
#define TESSERA_TCP_HPP_

#include <memory>
#include <string>
#include <vector>

#include "tessera/process_group.hpp"

namespace tessera::tcp {

// Names a rendezvous: "tessera-tcp:<host>:<port>:<nonce>".  Made by
// GetUniqueId in the process that will be process 0 (which keeps the
// listening socket), or from an address all processes know (FromAddress:
// process 0 listens there when it joins; nonce 0).
struct UniqueId {
  std::string host;
  int port = 0;
  uint64_t nonce = 0;
  std::string text() const;
  static StatusOr<UniqueId> Parse(const std::string& text);
  // "HOST:PORT", e.g. "127.0.0.1:29500".
  static StatusOr<UniqueId> FromAddress(const std::string& host_port);
};

// Listens on `host` (an IPv4 address; any free port) and returns the id;
// the listening socket stays with this process until its Join(rank 0).
StatusOr<UniqueId> GetUniqueId(const std::string& host = "127.0.0.1");

struct JoinOptions {
  // Longest wait for any peer (joining, or any one collective);
  // <= 0: TESSERA_TCP_TIMEOUT, else 600 s.
  double timeout_s = 0;
};

// Every process of the group calls it with the same id and size and its own
// rank (0 .. size - 1); process 0 is the one that made the id (or, for an
// id FromAddress, the one that can listen on it).
StatusOr<std::shared_ptr<ProcessGroup>> Join(const UniqueId& id, int size, int rank,
                                             const JoinOptions& options = {});

// Join, then one communicator over every process's `local_devices` (ranks
// process by process, process 0's first).  Collective.
StatusOr<Communicator> CreateCommunicator(const UniqueId& id, int size, int rank,
                                          const std::vector<Device>& local_devices,
                                          const JoinOptions& options = {});

}  // namespace tessera::tcp

#endif  // TESSERA_TCP_HPP_
