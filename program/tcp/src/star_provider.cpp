// Collectives over a star of TCP connections (star.hpp).  Every call:
//   1. each process waits for its ranks' streams and takes host views of
//      their buffers (in place where the host addresses them, else staged);
//   2. agreement: the members send the call (op, reduction, type, count,
//      root, ranks) to the hub, which answers "" or the message naming who
//      differs; every process then fails with the same message;
//   3. the hub gathers every rank's data, combines it in the cpu plugin's
//      fixed tree (host_reduce: bits equal a one-process run), and sends
//      each member a status ("" or the hub's error) and its part.
// A member that disappears fails the hub's call, and the hub passes its
// error on to the others: no process waits for one that is gone.
#include <algorithm>
#include <cstring>

#include "host_reduce.hpp"
#include "star.hpp"

namespace tessera::tcp {
namespace {

using plugin_support::host_reduce;
constexpr size_t kMaxMessage = 1 << 16;  // status and agreement frames
constexpr int kCallFields = 7;

class StarProvider final : public CollectiveProvider {
 public:
  StarProvider(Star star, std::vector<uint32_t> rank_process, std::shared_ptr<void> keep)
      : star_(std::move(star)), rank_process_(std::move(rank_process)), keep_(std::move(keep)) {
    ranks_of_.resize(star_.procs.size());
    for (uint32_t r = 0; r < rank_process_.size(); ++r)
      ranks_of_[Position(static_cast<int>(rank_process_[r]))].push_back(r);
  }
  std::string name() const override { return "tcp"; }
  size_t size() const override { return rank_process_.size(); }
  Status Run(const CollectiveRequest& q) override;

 private:
  size_t Position(int proc) const {
    return static_cast<size_t>(std::lower_bound(star_.procs.begin(), star_.procs.end(), proc) - star_.procs.begin());
  }
  const net::Fd& Link(size_t position) const { return star_.links[star_.hub() ? position - 1 : 0]; }
  std::string Peer(size_t position) const { return Star::Name(star_.procs[position]); }
  std::string RanksOf(size_t position) const {
    const auto& r = ranks_of_[position];
    std::string s = r.size() == 1 ? "rank " : "ranks ";
    for (size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + std::to_string(r[i]);
    return s;
  }
  Status Agree(const CollectiveRequest& q, net::Deadline dl);
  Status Exchange(const CollectiveRequest& q, net::Deadline dl);
  // The hub's failure in the middle of a call: passed on to every member
  // (best effort), then the links are closed, so that a member still
  // sending fails at once instead of waiting out the timeout.  The
  // communicator is broken from then on.
  Status FailMembers(Status st, net::Deadline dl) {
    for (size_t p = 1; p < star_.procs.size(); ++p)
      (void)net::SendFrame(Link(p), st.message(), dl, Peer(p));
    Break(st);
    return st;
  }
  void Break(const Status& st) {
    broken_ = "an earlier collective failed (" + st.message() + "): create a new communicator";
    for (net::Fd& f : star_.links) f.reset();
  }

  Star star_;
  std::vector<uint32_t> rank_process_;
  std::vector<std::vector<uint32_t>> ranks_of_;  // per position in star_.procs
  std::shared_ptr<void> keep_;
  std::mutex mu_;
  std::string broken_;  // why the links are closed; empty while usable
};

std::string Describe(const int64_t* f) {
  std::string s = CollectiveOpName(static_cast<TsCollectiveOp>(f[0]));
  if (f[1] >= 0) s += std::string(" ") + ReduceOpName(static_cast<TsReduceOp>(f[1]));
  s += " of " + std::to_string(f[3]) + " " + DataTypeName(static_cast<TsDataType>(f[2])) + " elements per rank";
  if (f[4] >= 0) s += " from root " + std::to_string(f[4]);
  s += " on a communicator of " + std::to_string(f[6]) + " ranks";
  return s;
}

Status StarProvider::Agree(const CollectiveRequest& q, net::Deadline dl) {
  const bool reduces = q.op == TS_COLLECTIVE_ALL_REDUCE || q.op == TS_COLLECTIVE_REDUCE_SCATTER;
  const int64_t mine[kCallFields] = {q.op, reduces ? q.reduce : -1, q.dtype, static_cast<int64_t>(q.count),
                                     q.op == TS_COLLECTIVE_BROADCAST ? static_cast<int64_t>(q.root) : -1,
                                     reduces ? int64_t{q.deterministic} : -1, static_cast<int64_t>(size())};
  const size_t P = star_.procs.size();
  if (!star_.hub()) {
    TESSERA_RETURN_IF_ERROR(net::SendFrame(Link(1), mine, sizeof mine, dl, Peer(0)));
    auto verdict = net::RecvFrame(Link(1), kMaxMessage, dl, Peer(0));
    if (!verdict.ok()) return verdict.status();
    if (!verdict->empty()) return Status(StatusCode::kFailedPrecondition, *verdict);
    return Status::Ok();
  }
  std::vector<int64_t> all(P * kCallFields);
  std::copy(mine, mine + kCallFields, all.begin());
  for (size_t p = 1; p < P; ++p) {
    Status st = net::RecvFrameInto(Link(p), &all[p * kCallFields], sizeof mine, dl, Peer(p));
    if (!st.ok()) return FailMembers(st, dl);
  }
  bool same = true;
  for (size_t p = 1; p < P; ++p) same = same && std::equal(mine, mine + kCallFields, &all[p * kCallFields]);
  std::string msg;
  if (!same) {
    msg = "the ranks disagree on the collective:";
    for (size_t p = 0; p < P; ++p)
      msg += (p ? "; " : " ") + RanksOf(p) + " (" + Peer(p) + "): " + Describe(&all[p * kCallFields]);
  }
  for (size_t p = 1; p < P; ++p) TESSERA_RETURN_IF_ERROR(net::SendFrame(Link(p), msg, dl, Peer(p)));
  return msg.empty() ? Status::Ok() : Status(StatusCode::kFailedPrecondition, msg);
}

Status StarProvider::Run(const CollectiveRequest& q) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!broken_.empty()) return Status(StatusCode::kFailedPrecondition, broken_);
  const net::Deadline dl = net::After(star_.timeout_s);
  // A failure on a link (a peer gone, a timeout) leaves the peers' byte
  // streams out of step: the communicator is closed for good.
  Status st = Exchange(q, dl);
  if (!st.ok() && st.code() != StatusCode::kFailedPrecondition && broken_.empty()) Break(st);
  return st;
}

Status StarProvider::Exchange(const CollectiveRequest& q, net::Deadline dl) {
  const size_t L = q.send->size(), N = size(), P = star_.procs.size();
  const uint64_t esz = DataTypeSize(q.dtype), bytes = q.count * esz;
  const uint64_t send_bytes = q.op == TS_COLLECTIVE_REDUCE_SCATTER ? bytes * N : bytes;
  const uint64_t recv_bytes = q.op == TS_COLLECTIVE_ALL_GATHER ? bytes * N : bytes;
  const auto& my_ranks = ranks_of_[Position(star_.me)];
  for (const Stream& s : *q.streams) TESSERA_RETURN_IF_ERROR(s.synchronize());
  // Host views: in place when the host addresses the buffer, else staged.
  auto views = HostViews::Take(q, send_bytes, recv_bytes,
                               [&](size_t i) { return q.op != TS_COLLECTIVE_BROADCAST || my_ranks[i] == q.root; });
  if (!views.ok()) return views.status();
  const std::vector<const uint8_t*>& sp = views->send;
  const std::vector<uint8_t*>& rp = views->recv;
  TESSERA_RETURN_IF_ERROR(Agree(q, dl));
  const int root_proc = q.op == TS_COLLECTIVE_BROADCAST ? static_cast<int>(rank_process_[q.root]) : -1;
  // What process `position` sends the hub: its ranks' sends one after the
  // other (a broadcast: the root's only).
  auto sends_of = [&](size_t position) -> uint64_t {
    if (q.op == TS_COLLECTIVE_BROADCAST) return star_.procs[position] == root_proc ? bytes : 0;
    return ranks_of_[position].size() * send_bytes;
  };
  // What it gets back: everyone's result, or (reduce_scatter) its ranks'
  // segments.
  auto result_of = [&](size_t position) -> uint64_t {
    return q.op == TS_COLLECTIVE_REDUCE_SCATTER ? ranks_of_[position].size() * bytes : recv_bytes;
  };
  std::vector<uint8_t> result;  // hub: every rank's result; members: theirs
  if (star_.hub()) {
    std::vector<const uint8_t*> in(N, nullptr);
    for (size_t i = 0; i < L; ++i) in[my_ranks[i]] = sp[i];
    std::vector<std::vector<uint8_t>> got(P);
    for (size_t p = 1; p < P; ++p) {
      if (sends_of(p) == 0) continue;
      got[p].resize(sends_of(p));
      Status st = net::RecvFrameInto(Link(p), got[p].data(), got[p].size(), dl, Peer(p));
      if (!st.ok()) return FailMembers(st, dl);
      if (q.op == TS_COLLECTIVE_BROADCAST) {
        in[q.root] = got[p].data();
      } else {
        for (size_t k = 0; k < ranks_of_[p].size(); ++k) in[ranks_of_[p][k]] = got[p].data() + k * send_bytes;
      }
    }
    std::vector<uint32_t> order(N);
    for (uint32_t r = 0; r < N; ++r) order[r] = r;
    switch (q.op) {
      case TS_COLLECTIVE_ALL_REDUCE:
        result.resize(bytes);
        host_reduce(q.dtype, q.reduce, std::vector<const void*>(in.begin(), in.end()), order, true, q.count,
                    result.data());
        break;
      case TS_COLLECTIVE_REDUCE_SCATTER: {
        result.resize(bytes * N);
        std::vector<const void*> seg(N);
        for (size_t s = 0; s < N; ++s) {
          for (size_t r = 0; r < N; ++r) seg[r] = in[r] + s * bytes;
          host_reduce(q.dtype, q.reduce, seg, order, true, q.count, result.data() + s * bytes);
        }
        break;
      }
      case TS_COLLECTIVE_ALL_GATHER:
        result.resize(bytes * N);
        for (size_t r = 0; r < N; ++r) std::memcpy(result.data() + r * bytes, in[r], bytes);
        break;
      case TS_COLLECTIVE_BROADCAST:
        result.assign(in[q.root], in[q.root] + bytes);
        break;
    }
    for (size_t p = 1; p < P; ++p) {
      TESSERA_RETURN_IF_ERROR(net::SendFrame(Link(p), std::string(), dl, Peer(p)));  // status: ok
      if (q.op == TS_COLLECTIVE_REDUCE_SCATTER) {
        const uint64_t n = result_of(p);
        TESSERA_RETURN_IF_ERROR(net::SendAll(Link(p), &n, sizeof n, dl, Peer(p)));
        for (uint32_t r : ranks_of_[p])
          TESSERA_RETURN_IF_ERROR(net::SendAll(Link(p), result.data() + r * bytes, bytes, dl, Peer(p)));
      } else {
        TESSERA_RETURN_IF_ERROR(net::SendFrame(Link(p), result.data(), result.size(), dl, Peer(p)));
      }
    }
    for (size_t i = 0; i < L; ++i)
      std::memcpy(rp[i], q.op == TS_COLLECTIVE_REDUCE_SCATTER ? result.data() + my_ranks[i] * bytes : result.data(),
                  recv_bytes);
  } else {
    const size_t me = Position(star_.me);
    const uint64_t n = sends_of(me);
    if (n > 0) {
      TESSERA_RETURN_IF_ERROR(net::SendAll(Link(1), &n, sizeof n, dl, Peer(0)));
      for (size_t i = 0; i < L; ++i)
        if (sp[i]) TESSERA_RETURN_IF_ERROR(net::SendAll(Link(1), sp[i], q.op == TS_COLLECTIVE_BROADCAST ? bytes : send_bytes, dl, Peer(0)));
    }
    auto status = net::RecvFrame(Link(1), kMaxMessage, dl, Peer(0));
    if (!status.ok()) return status.status();
    if (!status->empty()) return Status(StatusCode::kAborted, "the collective failed at " + Peer(0) + ": " + *status);
    result.resize(result_of(me));
    TESSERA_RETURN_IF_ERROR(net::RecvFrameInto(Link(1), result.data(), result.size(), dl, Peer(0)));
    for (size_t i = 0; i < L; ++i)
      std::memcpy(rp[i], q.op == TS_COLLECTIVE_REDUCE_SCATTER ? result.data() + i * bytes : result.data(), recv_bytes);
  }
  return views->WriteBack(q, recv_bytes);
}

}  // namespace

std::shared_ptr<CollectiveProvider> MakeStarProvider(Star star, std::vector<uint32_t> rank_process,
                                                     std::shared_ptr<void> keep) {
  return std::make_shared<StarProvider>(std::move(star), std::move(rank_process), std::move(keep));
}

}  // namespace tessera::tcp
