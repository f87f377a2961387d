// Helpers for ProcessGroup and CollectiveProvider implementations
// (tessera/process_group.hpp): what the MPI and TCP transports share.
#include "tessera/process_group.hpp"

#include <algorithm>
#include <cstdlib>

namespace tessera {

StatusOr<bool> UsePluginCollectives(const std::vector<Device>& local_devices) {
  if (local_devices.empty() || !local_devices[0].valid())
    return Status(StatusCode::kInvalidArgument, "UsePluginCollectives: no devices");
  const Runtime runtime = local_devices[0].runtime();
  const bool spans = PluginSpansProcesses(runtime);
  const char* env = std::getenv("TESSERA_PROCESS_COLLECTIVES");
  const std::string choice = env && *env ? env : "auto";
  if (choice == "provider") return false;
  if (choice == "plugin") {
    if (!spans)
      return Status(StatusCode::kUnsupported,
                    "TESSERA_PROCESS_COLLECTIVES=plugin, but the " + runtime.backend() +
                        " plugin's communicators cannot span processes (no "
                        "TS_COLLECTIVE_CAP_MULTI_PROCESS); unset it to use the process group's provider");
    return true;
  }
  if (choice != "auto")
    return Status(StatusCode::kInvalidArgument, "TESSERA_PROCESS_COLLECTIVES=" + choice +
                                                    " is not 'auto', 'plugin' or 'provider'");
  return spans && ProcessCollectivesFor(runtime.backend()).data_path != "host memory in place";
}

StatusOr<std::vector<int>> CommunicatorProcesses(const std::vector<uint32_t>& rank_process, int group_size,
                                                 int me, size_t local_devices) {
  std::vector<int> procs;
  size_t local = 0;
  for (uint32_t p : rank_process) {
    if (p >= static_cast<uint32_t>(group_size))
      return Status(StatusCode::kInvalidArgument, "CreateCommunicator: process " + std::to_string(p) +
                                                      " is not in a group of " + std::to_string(group_size));
    if (std::find(procs.begin(), procs.end(), static_cast<int>(p)) == procs.end()) procs.push_back(static_cast<int>(p));
    local += p == static_cast<uint32_t>(me);
  }
  std::sort(procs.begin(), procs.end());
  if (local == 0 || local != local_devices)
    return Status(StatusCode::kInvalidArgument,
                  "CreateCommunicator: process " + std::to_string(me) + " holds " + std::to_string(local) +
                      " of the ranks but passes " + std::to_string(local_devices) + " devices");
  return procs;
}

StatusOr<HostViews> HostViews::Take(const CollectiveRequest& q, uint64_t send_bytes, uint64_t recv_bytes,
                                    const std::function<bool(size_t)>& needs_send) {
  const size_t L = q.send->size();
  HostViews v;
  v.send.assign(L, nullptr);
  v.recv.assign(L, nullptr);
  v.staged_send_.resize(L);
  v.staged_recv_.resize(L);
  for (size_t i = 0; i < L; ++i) {
    if (needs_send(i)) {
      const MemoryRef& ref = (*q.send)[i];
      if (void* h = ref.buffer->host_pointer()) {
        v.send[i] = static_cast<const uint8_t*>(h) + ref.offset;
      } else {
        v.staged_send_[i].resize(send_bytes);
        TESSERA_RETURN_IF_ERROR(copy(v.staged_send_[i].data(), ref, send_bytes));
        v.send[i] = v.staged_send_[i].data();
      }
    }
    const MemoryRef& out = (*q.recv)[i];
    if (void* h = out.buffer->host_pointer()) {
      v.recv[i] = static_cast<uint8_t*>(h) + out.offset;
    } else {
      v.staged_recv_[i].resize(recv_bytes);
      v.recv[i] = v.staged_recv_[i].data();
    }
  }
  return v;
}

Status HostViews::WriteBack(const CollectiveRequest& q, uint64_t recv_bytes) const {
  for (size_t i = 0; i < staged_recv_.size(); ++i)
    if (!staged_recv_[i].empty()) TESSERA_RETURN_IF_ERROR(copy((*q.recv)[i], staged_recv_[i].data(), recv_bytes));
  return Status::Ok();
}

}  // namespace tessera
