// The connections of one tcp communicator: a star around its lowest
// process (the hub), and the collectives that run over it.
#ifndef TESSERA_TCP_STAR_HPP_
#define TESSERA_TCP_STAR_HPP_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "socket.hpp"
#include "tessera/process_group.hpp"

namespace tessera::tcp {

struct Star {
  int me = 0;               // this process (its rank in the group)
  std::vector<int> procs;   // the communicator's processes, ascending; procs[0] is the hub
  // The hub: one connection per procs[1..]; the others: [0] to the hub.
  std::vector<net::Fd> links;
  double timeout_s = 600;
  bool hub() const { return !procs.empty() && procs[0] == me; }
  static std::string Name(int proc) { return "process " + std::to_string(proc); }
};

// The CollectiveProvider of a tcp communicator.  `rank_process[r]` is the
// group process of rank r; `keep` holds the group alive as long as the
// communicator.
std::shared_ptr<CollectiveProvider> MakeStarProvider(Star star, std::vector<uint32_t> rank_process,
                                                     std::shared_ptr<void> keep);

}  // namespace tessera::tcp

#endif  // TESSERA_TCP_STAR_HPP_
