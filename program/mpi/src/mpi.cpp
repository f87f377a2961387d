// Collectives across processes over MPI (tessera/mpi.hpp).
//
// One collective: (1) the processes exchange what they were asked to do and
// fail together, naming the ranks, when they disagree; (2) each process
// waits for its ranks' streams; (3) buffers the host can address are used
// in place, others are copied to host memory; (4) the data moves:
//   - deterministic reductions (and every reduction of f16/bf16, or with
//     several ranks in one process): each process owns a slice of the
//     elements, receives every rank's part of it (MPI_Alltoallv), combines
//     the ranks in the fixed tree of plugins/common/host_reduce (the cpu
//     plugin's), and the slices are gathered again (MPI_Allgatherv);
//   - other reductions with one rank per process: MPI_Allreduce /
//     MPI_Reduce_scatter_block in place; so are deterministic all_reduce
//     sums and products of f32/f64/i32/i64 over two ranks (one operation
//     per element: any order gives the same bits);
//   - all_gather: MPI_Allgather(v); broadcast: MPI_Bcast;
//   a collective whose calls would move more than MaxMessageBytes (MPI
//   counts are ints) runs as several, each on a piece of the elements;
// (5) staged results are copied back.
#include "tessera/mpi.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "host_reduce.hpp"

namespace tessera::mpi {
namespace {

using plugin_support::dtype_name;
using plugin_support::dtype_size;
using plugin_support::host_reduce;

std::mutex& Mu() {
  static std::mutex m;
  return m;
}
bool g_we_initialized = false;

Status MpiError(const char* call, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Status(StatusCode::kInternal, std::string(call) + " failed: " + std::string(text, static_cast<size_t>(len)));
}
#define TS_MPI(call)                                      \
  do {                                                    \
    int rc_ = (call);                                     \
    if (rc_ != MPI_SUCCESS) return MpiError(#call, rc_);  \
  } while (0)

bool Finalized() {
  int f = 0;
  MPI_Finalized(&f);
  return f != 0;
}
void FreeComm(MPI_Comm* c) {
  if (*c != MPI_COMM_NULL && !Finalized()) MPI_Comm_free(c);
  *c = MPI_COMM_NULL;
}

MPI_Datatype MpiType(TsDataType t) {
  switch (t) {
    case TS_DTYPE_F32: return MPI_FLOAT;
    case TS_DTYPE_F64: return MPI_DOUBLE;
    case TS_DTYPE_I32: return MPI_INT32_T;
    case TS_DTYPE_I64: return MPI_INT64_T;
    case TS_DTYPE_I8: return MPI_INT8_T;
    case TS_DTYPE_U8: return MPI_UINT8_T;
    default: return MPI_DATATYPE_NULL;  // f16, bf16: combined by host_reduce
  }
}
MPI_Op MpiOp(TsReduceOp op) {
  switch (op) {
    case TS_REDUCE_SUM: return MPI_SUM;
    case TS_REDUCE_PROD: return MPI_PROD;
    case TS_REDUCE_MAX: return MPI_MAX;
    case TS_REDUCE_MIN: return MPI_MIN;
  }
  return MPI_OP_NULL;
}

bool Overlap(const void* a, uint64_t an, const void* b, uint64_t bn) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bn && y < x + an;
}

// TESSERA_MPI_TIMEOUT (seconds; unset or 0: none): how long a collective
// across processes may take before this process aborts the job.  Open MPI
// ends the job when a process dies; a process that is alive but never
// reaches the collective (stuck, or waiting on something else) would
// otherwise keep the others waiting for ever.
double TimeoutSeconds() {
  static const double t = [] {
    // Seconds (0 or unset: no limit); anything else is said, not guessed.
    const char* e = std::getenv("TESSERA_MPI_TIMEOUT");
    if (!e || !*e) return 0.0;
    char* end = nullptr;
    const double v = std::strtod(e, &end);
    if (end == e || *end != 0 || !(v >= 0) || v > 7 * 24 * 3600) {
      std::fprintf(stderr,
                   "tessera: TESSERA_MPI_TIMEOUT=%s is not a number of seconds from 0 to 604800; "
                   "no time limit\n",
                   e);
      return 0.0;
    }
    return v;
  }();
  return t;
}

// TESSERA_MPI_MAX_MESSAGE_BYTES (default 1 GiB, at most INT_MAX): the most
// bytes one MPI call of a collective moves.  MPI counts are ints, so a
// collective whose calls would move more is split along its elements into
// pieces, each a collective of its own, one after the other.
uint64_t MaxMessageBytes() {
  static const uint64_t v = [] {
    constexpr uint64_t kDefault = uint64_t{1} << 30;
    const char* e = std::getenv("TESSERA_MPI_MAX_MESSAGE_BYTES");
    if (!e || !*e) return kDefault;
    char* end = nullptr;
    const unsigned long long x = std::strtoull(e, &end, 10);
    if (*end != 0 || x == 0) {
      std::fprintf(stderr,
                   "tessera: TESSERA_MPI_MAX_MESSAGE_BYTES=%s is not a positive number of bytes; "
                   "using %llu\n",
                   e, static_cast<unsigned long long>(kDefault));
      return kDefault;
    }
    return std::min<uint64_t>(x, static_cast<uint64_t>(INT_MAX));
  }();
  return v;
}

// One MPI collective: blocking without a timeout (MPI's own algorithms);
// with one, the nonblocking form polled until the deadline, then
// MPI_Abort naming the call.
template <class Blocking, class NonBlocking>
Status Collective(MPI_Comm comm, const char* name, Blocking blocking, NonBlocking nonblocking) {
  const double limit = TimeoutSeconds();
  if (limit <= 0) {
    int rc = blocking();
    return rc == MPI_SUCCESS ? Status::Ok() : MpiError(name, rc);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = nonblocking(&request);
  if (rc != MPI_SUCCESS) return MpiError(name, rc);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  for (int done = 0;;) {
    rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return MpiError(name, rc);
    if (done) return Status::Ok();
    if (std::chrono::steady_clock::now() > deadline) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::fprintf(stderr,
                   "tessera (rank %d): %s across processes did not complete within %g s (TESSERA_MPI_TIMEOUT): "
                   "a process is stuck or gone; aborting the job\n",
                   rank, name, limit);
      std::fflush(stderr);
      MPI_Abort(comm, 1);
      std::_Exit(1);
    }
    std::this_thread::yield();
  }
}
#define TS_COLL(blocking, nonblocking, ...)                                                      \
  TESSERA_RETURN_IF_ERROR(Collective(                                                            \
      comm_, #blocking, [&] { return blocking(__VA_ARGS__); },                                   \
      [&](MPI_Request* request_) { return nonblocking(__VA_ARGS__, request_); }))

class MpiProvider final : public CollectiveProvider {
 public:
  // `rank_process`: each rank's process as an index of `comm`.
  MpiProvider(MPI_Comm comm, std::vector<uint32_t> rank_process) : comm_(comm), rank_process_(std::move(rank_process)) {
    MPI_Comm_rank(comm_, &me_);
    MPI_Comm_size(comm_, &nproc_);
    proc_ranks_.resize(static_cast<size_t>(nproc_));
    index_in_proc_.resize(rank_process_.size());
    simple_ = rank_process_.size() == static_cast<size_t>(nproc_);
    for (uint32_t r = 0; r < rank_process_.size(); ++r) {
      auto& list = proc_ranks_[rank_process_[r]];
      index_in_proc_[r] = static_cast<uint32_t>(list.size());
      list.push_back(r);
      simple_ = simple_ && rank_process_[r] == r;
    }
  }
  ~MpiProvider() override { FreeComm(&comm_); }
  std::string name() const override { return "mpi"; }
  size_t size() const override { return rank_process_.size(); }
  Status Run(const CollectiveRequest& q) override;

 private:
  std::string RanksOf(int p) const {
    std::string s;
    for (uint32_t r : proc_ranks_[static_cast<size_t>(p)]) s += (s.empty() ? "" : ",") + std::to_string(r);
    return (proc_ranks_[static_cast<size_t>(p)].size() == 1 ? "rank " : "ranks ") + s;
  }
  Status Agree(const CollectiveRequest& q);
  Status Reduce(const CollectiveRequest& q, const std::vector<const uint8_t*>& sp, const std::vector<uint8_t*>& rp);
  Status Gather(const CollectiveRequest& q, const std::vector<const uint8_t*>& sp, const std::vector<uint8_t*>& rp);
  // Bytes [at, at + bytes) of the broadcast, to every local rank.
  Status Broadcast(const CollectiveRequest& q, const std::vector<const uint8_t*>& sp,
                   const std::vector<uint8_t*>& rp, uint64_t at, uint64_t bytes);

  // Scratch memory kept between calls (uninitialized: no zero-fill, no
  // fresh page faults per call).
  uint8_t* Scratch(int which, uint64_t bytes) {
    if (scratch_size_[which] < bytes) {
      scratch_[which].reset(new uint8_t[bytes]);
      scratch_size_[which] = bytes;
    }
    return scratch_[which].get();
  }

  MPI_Comm comm_;
  std::unique_ptr<uint8_t[]> scratch_[2];
  uint64_t scratch_size_[2] = {0, 0};
  int me_ = 0, nproc_ = 1;
  std::vector<uint32_t> rank_process_;
  std::vector<std::vector<uint32_t>> proc_ranks_;  // each process's ranks, ascending
  std::vector<uint32_t> index_in_proc_;            // a rank's place among its process's
  bool simple_ = false;                            // rank r is process r
};

// Every process states the call; all of them fail, with the same message,
// when they differ (shapes, ops, types), instead of exchanging garbage or
// waiting for ever on a message of another size.
Status MpiProvider::Agree(const CollectiveRequest& q) {
  constexpr int kFields = 7;
  const bool reduces = q.op == TS_COLLECTIVE_ALL_REDUCE || q.op == TS_COLLECTIVE_REDUCE_SCATTER;
  int64_t mine[kFields] = {q.op, reduces ? q.reduce : -1, q.dtype, static_cast<int64_t>(q.count),
                           q.op == TS_COLLECTIVE_BROADCAST ? static_cast<int64_t>(q.root) : -1, reduces ? int64_t{q.deterministic} : -1,
                           static_cast<int64_t>(size())};
  std::vector<int64_t> all(static_cast<size_t>(kFields * nproc_));
  TS_COLL(MPI_Allgather, MPI_Iallgather, mine, kFields, MPI_INT64_T, all.data(), kFields, MPI_INT64_T, comm_);
  bool same = true;
  for (int p = 1; p < nproc_; ++p)
    same = same && std::equal(all.begin(), all.begin() + kFields, all.begin() + p * kFields);
  if (same) return Status::Ok();
  auto describe = [&](const int64_t* f) {
    std::string s = CollectiveOpName(static_cast<TsCollectiveOp>(f[0]));
    if (f[1] >= 0) s += std::string(" ") + ReduceOpName(static_cast<TsReduceOp>(f[1]));
    s += " of " + std::to_string(f[3]) + " " + dtype_name(static_cast<TsDataType>(f[2])) + " elements per rank";
    if (f[4] >= 0) s += " from root " + std::to_string(f[4]);
    if (f[5] >= 0) s += f[5] ? " (deterministic)" : " (any order)";
    s += " on a communicator of " + std::to_string(f[6]) + " ranks";
    return s;
  };
  std::string msg = "the ranks disagree on the collective:";
  for (int p = 0; p < nproc_; ++p)
    msg += (p ? "; " : " ") + RanksOf(p) + " (process " + std::to_string(p) + "): " + describe(&all[p * kFields]);
  return Status(StatusCode::kFailedPrecondition, msg);
}

Status MpiProvider::Run(const CollectiveRequest& q) {
  std::lock_guard<std::mutex> lock(Mu());
  TESSERA_RETURN_IF_ERROR(Agree(q));
  const size_t L = q.send->size();
  const size_t N = size();
  const uint64_t esz = dtype_size(q.dtype), bytes = q.count * esz;
  const uint64_t send_bytes = q.op == TS_COLLECTIVE_REDUCE_SCATTER ? bytes * N : bytes;
  const uint64_t recv_bytes = q.op == TS_COLLECTIVE_ALL_GATHER ? bytes * N : bytes;
  for (const Stream& s : *q.streams) TESSERA_RETURN_IF_ERROR(s.synchronize());
  // Host views of this process's buffers: in place when the host can
  // address them, else staged.
  auto views = HostViews::Take(q, send_bytes, recv_bytes, [&](size_t i) {
    return q.op != TS_COLLECTIVE_BROADCAST || proc_ranks_[static_cast<size_t>(me_)][i] == q.root;
  });
  if (!views.ok()) return views.status();
  std::vector<const uint8_t*>& sp = views->send;
  std::vector<uint8_t*>& rp = views->recv;
  // A send that overlaps a receive of this process is copied first (MPI
  // forbids aliasing outside MPI_IN_PLACE).
  std::vector<std::vector<uint8_t>> copies(L);
  for (size_t i = 0; i < L; ++i)
    for (size_t j = 0; sp[i] && j < L; ++j)
      if (Overlap(sp[i], send_bytes, rp[j], recv_bytes) &&
          !(q.op == TS_COLLECTIVE_ALL_REDUCE && simple_ && i == j && sp[i] == rp[j])) {
        copies[i].assign(sp[i], sp[i] + send_bytes);
        sp[i] = copies[i].data();
        break;
      }
  // Pieces of at most `per` elements, so that no MPI call moves more than
  // MaxMessageBytes (the largest: an alltoall of every local rank's part
  // for every rank, N x L x per elements).
  const uint64_t n = q.count;
  const uint64_t per = std::max<uint64_t>(1, MaxMessageBytes() / (N * L * esz));
  const uint64_t pieces = n <= per ? 1 : (n + per - 1) / per;
  Status st;
  if (pieces == 1) {
    switch (q.op) {
      case TS_COLLECTIVE_ALL_REDUCE:
      case TS_COLLECTIVE_REDUCE_SCATTER: st = Reduce(q, sp, rp); break;
      case TS_COLLECTIVE_ALL_GATHER: st = Gather(q, sp, rp); break;
      case TS_COLLECTIVE_BROADCAST: st = Broadcast(q, sp, rp, 0, bytes); break;
    }
  } else {
    // Elements [a, a + c) of every rank's part.  all_reduce and broadcast
    // are elementwise in place; reduce_scatter packs the piece of each of
    // the N segments of a send together, and all_gather receives the N
    // pieces together, then puts each at its place in the result.
    std::vector<uint8_t> packed;
    if (q.op == TS_COLLECTIVE_REDUCE_SCATTER) packed.resize(L * N * per * esz);
    if (q.op == TS_COLLECTIVE_ALL_GATHER) packed.resize(N * per * esz);
    std::vector<const uint8_t*> spo(L);
    std::vector<uint8_t*> rpo(L);
    for (uint64_t i = 0; i < pieces && st.ok(); ++i) {
      const uint64_t a = i * per, c = std::min(per, n - a);
      CollectiveRequest sub = q;
      sub.count = c;
      switch (q.op) {
        case TS_COLLECTIVE_ALL_REDUCE:
          for (size_t k = 0; k < L; ++k) {
            spo[k] = sp[k] + a * esz;
            rpo[k] = rp[k] + a * esz;
          }
          st = Reduce(sub, spo, rpo);
          break;
        case TS_COLLECTIVE_REDUCE_SCATTER:
          for (size_t k = 0; k < L; ++k) {
            uint8_t* to = packed.data() + k * N * c * esz;
            for (size_t r = 0; r < N; ++r) std::memcpy(to + r * c * esz, sp[k] + (r * n + a) * esz, c * esz);
            spo[k] = to;
            rpo[k] = rp[k] + a * esz;
          }
          st = Reduce(sub, spo, rpo);
          break;
        case TS_COLLECTIVE_ALL_GATHER:
          for (size_t k = 0; k < L; ++k) {
            spo[k] = sp[k] + a * esz;
            rpo[k] = packed.data();  // Gather fills rpo[0] only: the same for all
          }
          st = Gather(sub, spo, rpo);
          for (size_t k = 0; st.ok() && k < L; ++k)
            for (size_t r = 0; r < N; ++r)
              std::memcpy(rp[k] + (r * n + a) * esz, packed.data() + r * c * esz, c * esz);
          break;
        case TS_COLLECTIVE_BROADCAST:
          st = Broadcast(q, sp, rp, a * esz, c * esz);
          break;
      }
    }
  }
  if (!st.ok()) return st;
  return views->WriteBack(q, recv_bytes);
}

Status MpiProvider::Gather(const CollectiveRequest& q, const std::vector<const uint8_t*>& sp,
                           const std::vector<uint8_t*>& rp) {
  const size_t L = sp.size(), N = size();
  const uint64_t bytes = q.count * dtype_size(q.dtype);
  if (simple_) {
    TS_COLL(MPI_Allgather, MPI_Iallgather, sp[0], static_cast<int>(bytes), MPI_BYTE, rp[0], static_cast<int>(bytes),
            MPI_BYTE, comm_);
  } else {
    std::vector<uint8_t> mine(L * bytes), all(N * bytes);
    for (size_t i = 0; i < L; ++i) std::memcpy(mine.data() + i * bytes, sp[i], bytes);
    std::vector<int> counts(static_cast<size_t>(nproc_)), displs(static_cast<size_t>(nproc_));
    int at = 0;
    for (int p = 0; p < nproc_; ++p) {
      counts[p] = static_cast<int>(proc_ranks_[p].size() * bytes);
      displs[p] = at;
      at += counts[p];
    }
    TS_COLL(MPI_Allgatherv, MPI_Iallgatherv, mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), counts.data(),
            displs.data(), MPI_BYTE, comm_);
    for (int p = 0; p < nproc_; ++p)
      for (size_t k = 0; k < proc_ranks_[p].size(); ++k)
        std::memcpy(rp[0] + proc_ranks_[p][k] * bytes, all.data() + displs[p] + k * bytes, bytes);
  }
  for (size_t i = 1; i < L; ++i)
    if (rp[i] != rp[0]) std::memcpy(rp[i], rp[0], N * bytes);
  return Status::Ok();
}

Status MpiProvider::Broadcast(const CollectiveRequest& q, const std::vector<const uint8_t*>& sp,
                              const std::vector<uint8_t*>& rp, uint64_t at, uint64_t bytes) {
  const int root_proc = static_cast<int>(rank_process_[q.root]);
  uint8_t* to = rp[0] + at;
  if (root_proc == me_) std::memmove(to, sp[index_in_proc_[q.root]] + at, bytes);
  TS_COLL(MPI_Bcast, MPI_Ibcast, to, static_cast<int>(bytes), MPI_BYTE, root_proc, comm_);
  for (size_t i = 1; i < rp.size(); ++i) std::memcpy(rp[i] + at, to, bytes);
  return Status::Ok();
}

Status MpiProvider::Reduce(const CollectiveRequest& q, const std::vector<const uint8_t*>& sp,
                           const std::vector<uint8_t*>& rp) {
  const size_t L = sp.size(), N = size();
  const uint64_t n = q.count, esz = dtype_size(q.dtype), seg = n * esz;
  const MPI_Datatype type = MpiType(q.dtype);
  const bool all_reduce = q.op == TS_COLLECTIVE_ALL_REDUCE;
  // Two ranks, one per process: each element is one sum (or product) of
  // two operands, and IEEE addition and multiplication (and wrapping
  // integer ones) are commutative, so whatever algorithm MPI picks gives
  // the fixed tree's bits (r0 + r1): deterministic at MPI's own speed. (Of
  // two NaNs either payload may survive; f16/bf16, i8/u8 keep the tree.)
  // (all_reduce only: at two ranks the alltoall path below beat
  // MPI_Reduce_scatter_block, 12.4 against 15.8 ms for 16 MiB.)
  const bool twoOperands =
      all_reduce && simple_ && N == 2 && L == 1 && (q.reduce == TS_REDUCE_SUM || q.reduce == TS_REDUCE_PROD) &&
      (q.dtype == TS_DTYPE_F32 || q.dtype == TS_DTYPE_F64 || q.dtype == TS_DTYPE_I32 || q.dtype == TS_DTYPE_I64);
  // MPI's own algorithm: any association order.
  if ((!q.deterministic || twoOperands) && type != MPI_DATATYPE_NULL && simple_) {
    if (all_reduce)
      TS_COLL(MPI_Allreduce, MPI_Iallreduce, sp[0] == rp[0] ? MPI_IN_PLACE : sp[0], rp[0], static_cast<int>(n), type,
              MpiOp(q.reduce), comm_);
    else
      TS_COLL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, sp[0], rp[0], static_cast<int>(n), type,
              MpiOp(q.reduce), comm_);
    return Status::Ok();
  }
  std::vector<uint32_t> order(N);
  for (uint32_t r = 0; r < N; ++r) order[r] = r;
  std::vector<int> sc(static_cast<size_t>(nproc_)), sd(sc.size()), rc(sc.size()), rd(sc.size());
  std::vector<const void*> parts(N);
  if (all_reduce) {
    // Process p owns elements [lo(p), lo(p + 1)): it receives every rank's
    // part of them (alltoall), combines them in the fixed tree, and the
    // owners' slices are gathered again (the traffic of a ring all_reduce).
    auto lo = [&](int p) { return n * static_cast<uint64_t>(p) / static_cast<uint64_t>(nproc_); };
    const uint64_t mine = lo(me_ + 1) - lo(me_);
    int so = 0, ro = 0;
    for (int p = 0; p < nproc_; ++p) {
      sc[p] = static_cast<int>(L * (lo(p + 1) - lo(p)) * esz);
      sd[p] = so;
      so += sc[p];
      rc[p] = static_cast<int>(proc_ranks_[p].size() * mine * esz);
      rd[p] = ro;
      ro += rc[p];
    }
    const uint8_t* out = sp[0];  // one rank here: its buffer is already in process order
    if (L > 1) {
      uint8_t* packed = Scratch(0, static_cast<uint64_t>(so));
      for (int p = 0; p < nproc_; ++p)
        for (size_t k = 0; k < L; ++k)
          std::memcpy(packed + sd[p] + k * (lo(p + 1) - lo(p)) * esz, sp[k] + lo(p) * esz, (lo(p + 1) - lo(p)) * esz);
      out = packed;
    }
    uint8_t* in = Scratch(1, static_cast<uint64_t>(ro) + 1);
    TS_COLL(MPI_Alltoallv, MPI_Ialltoallv, out, sc.data(), sd.data(), MPI_BYTE, in, rc.data(), rd.data(), MPI_BYTE, comm_);
    for (uint32_t r = 0; r < N; ++r) parts[r] = in + rd[rank_process_[r]] + index_in_proc_[r] * mine * esz;
    // The sends were read: the slice goes straight to its place in the result.
    host_reduce(q.dtype, q.reduce, parts, order, /*deterministic=*/true, mine, rp[0] + lo(me_) * esz);
    for (int p = 0; p < nproc_; ++p) {
      rc[p] = static_cast<int>((lo(p + 1) - lo(p)) * esz);
      rd[p] = static_cast<int>(lo(p) * esz);
    }
    TS_COLL(MPI_Allgatherv, MPI_Iallgatherv, MPI_IN_PLACE, 0, MPI_BYTE, rp[0], rc.data(), rd.data(), MPI_BYTE, comm_);
    for (size_t i = 1; i < L; ++i) std::memcpy(rp[i], rp[0], seg);
    return Status::Ok();
  }
  // reduce_scatter: process p receives, from every rank s, segment r of
  // s's send for each of its ranks r.
  int so = 0, ro = 0;
  for (int p = 0; p < nproc_; ++p) {
    sc[p] = static_cast<int>(L * proc_ranks_[p].size() * seg);
    sd[p] = so;
    so += sc[p];
    rc[p] = static_cast<int>(proc_ranks_[p].size() * L * seg);
    rd[p] = ro;
    ro += rc[p];
  }
  const uint8_t* out = sp[0];  // one rank per process, in order: segments are in place
  if (!simple_) {
    uint8_t* packed = Scratch(0, static_cast<uint64_t>(so));
    for (int p = 0; p < nproc_; ++p)
      for (size_t k = 0; k < L; ++k)
        for (size_t j = 0; j < proc_ranks_[p].size(); ++j)
          std::memcpy(packed + sd[p] + (k * proc_ranks_[p].size() + j) * seg, sp[k] + proc_ranks_[p][j] * seg, seg);
    out = packed;
  }
  uint8_t* in = Scratch(1, static_cast<uint64_t>(ro) + 1);
  TS_COLL(MPI_Alltoallv, MPI_Ialltoallv, out, sc.data(), sd.data(), MPI_BYTE, in, rc.data(), rd.data(), MPI_BYTE, comm_);
  for (size_t j = 0; j < L; ++j) {
    for (uint32_t s = 0; s < N; ++s) parts[s] = in + rd[rank_process_[s]] + (index_in_proc_[s] * L + j) * seg;
    host_reduce(q.dtype, q.reduce, parts, order, /*deterministic=*/true, n, rp[j]);
  }
  return Status::Ok();
}

// The plugin's own communicator across the processes of `comm` (ABI 1.4:
// NCCL on cuda, RCCL on hip, shared memory on cpu) where every process's
// UsePluginCollectives says so; nullopt where none does (the caller makes
// one whose data MPI moves).  Collective over `comm`: the processes first
// agree on the choice (an error on every process when they differ), then
// comm's process 0 makes the id and broadcasts it, and all join.
// `rank_process[r]`: the process (of `comm`) of rank r; this process, `me`,
// holds local_devices in rank order.  Frees *comm_in unless it returns
// nullopt (the caller's provider keeps it then).
StatusOr<std::optional<Communicator>> PluginCommunicator(MPI_Comm* comm_in, const std::vector<Device>& local_devices,
                                                         const std::vector<uint32_t>& rank_process, int me) {
  struct FreeUnlessKept {
    MPI_Comm* comm;
    bool keep = false;
    ~FreeUnlessKept() {
      if (!keep) FreeComm(comm);
    }
  } release{comm_in};
  const MPI_Comm comm = *comm_in;
  const uint32_t total = static_cast<uint32_t>(rank_process.size());
  std::vector<uint32_t> ranks;
  for (uint32_t r = 0; r < total; ++r)
    if (rank_process[r] == static_cast<uint32_t>(me)) ranks.push_back(r);
  StatusOr<bool> want = UsePluginCollectives(local_devices);
  const int code = !want.ok() ? -1 : *want ? 1 : 0;
  int lowest = 0, highest = 0;
  TS_MPI(MPI_Allreduce(&code, &lowest, 1, MPI_INT, MPI_MIN, comm));
  TS_MPI(MPI_Allreduce(&code, &highest, 1, MPI_INT, MPI_MAX, comm));
  if (!want.ok()) return want.status();
  if (lowest < 0)
    return Status(StatusCode::kFailedPrecondition,
                  "another process could not choose how its collectives cross processes (its "
                  "TESSERA_PROCESS_COLLECTIVES is wrong; see its error)");
  if (lowest != highest)
    return Status(StatusCode::kFailedPrecondition,
                  "the processes disagree on how collectives cross processes: some use the plugin's own "
                  "(TESSERA_PROCESS_COLLECTIVES, the plugin), others MPI; set TESSERA_PROCESS_COLLECTIVES "
                  "and the backend alike everywhere");
  if (lowest == 0) {
    release.keep = true;
    return std::optional<Communicator>();
  }
  const Runtime runtime = local_devices[0].runtime();
  std::vector<uint8_t> message(1 + TS_UNIQUE_ID_BYTES, 0);
  Status made = Status::Ok();
  if (me == 0) {
    StatusOr<Runtime::CollectiveId> id = runtime.create_collective_id();
    if (id.ok()) {
      message[0] = 1;
      std::memcpy(message.data() + 1, id->data(), TS_UNIQUE_ID_BYTES);
    } else {
      made = id.status();
    }
  }
  TS_MPI(MPI_Bcast(message.data(), static_cast<int>(message.size()), MPI_BYTE, 0, comm));
  if (message[0] != 1)
    return me == 0 ? made
                   : Status(StatusCode::kUnavailable,
                            "the communicator's first process could not make its collective id (see its error)");
  const Runtime::CollectiveId id(message.begin() + 1, message.end());
  StatusOr<Communicator> c = runtime.create_communicator(local_devices, total, ranks, id);
  if (!c.ok()) return c.status();
  return std::optional<Communicator>(*c);
}

class MpiGroup final : public ProcessGroup {
 public:
  explicit MpiGroup(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiGroup() override { FreeComm(&comm_); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string provider() const override { return "mpi (" + LibraryVersion() + ")"; }
  StatusOr<Communicator> CreateCommunicator(const std::vector<uint32_t>& rank_process,
                                            const std::vector<Device>& local_devices) override;
  StatusOr<std::vector<std::string>> AllGather(const std::string& bytes) override;
  [[noreturn]] void Abort(int code) override {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(comm_, code);
    std::_Exit(code);
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

StatusOr<Communicator> MpiGroup::CreateCommunicator(const std::vector<uint32_t>& rank_process,
                                                    const std::vector<Device>& local_devices) {
  std::lock_guard<std::mutex> lock(Mu());
  auto checked = CommunicatorProcesses(rank_process, size_, rank_, local_devices.size());
  if (!checked.ok()) return checked.status();
  const std::vector<int>& procs = *checked;
  MPI_Group world, sub;
  MPI_Comm comm = MPI_COMM_NULL;
  TS_MPI(MPI_Comm_group(comm_, &world));
  TS_MPI(MPI_Group_incl(world, static_cast<int>(procs.size()), procs.data(), &sub));
  int rc = MPI_Comm_create_group(comm_, sub, /*tag=*/4242, &comm);
  MPI_Group_free(&sub);
  MPI_Group_free(&world);
  if (rc != MPI_SUCCESS) return MpiError("MPI_Comm_create_group", rc);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  // Each rank's process as `comm` numbers them (procs' order).
  std::vector<uint32_t> mapped;
  for (uint32_t p : rank_process)
    mapped.push_back(static_cast<uint32_t>(std::lower_bound(procs.begin(), procs.end(), static_cast<int>(p)) - procs.begin()));
  int sub_me = 0;
  MPI_Comm_rank(comm, &sub_me);
  auto own = PluginCommunicator(&comm, local_devices, mapped, sub_me);
  if (!own.ok()) return own.status();
  if (own->has_value()) return std::move(**own);
  return Communicator::FromProvider(local_devices, std::make_shared<MpiProvider>(comm, std::move(mapped)));
}

StatusOr<std::vector<std::string>> MpiGroup::AllGather(const std::string& bytes) {
  std::lock_guard<std::mutex> lock(Mu());
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return Status(StatusCode::kInvalidArgument, "AllGather: over 2 GiB");
  int mine = static_cast<int>(bytes.size());
  std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
  TS_COLL(MPI_Allgather, MPI_Iallgather, &mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_);
  int64_t total = 0;
  for (int p = 0; p < size_; ++p) {
    displs[p] = static_cast<int>(total);
    total += counts[p];
  }
  if (total > INT_MAX) return Status(StatusCode::kInvalidArgument, "AllGather: over 2 GiB");
  std::string all(static_cast<size_t>(total), '\0');
  TS_COLL(MPI_Allgatherv, MPI_Iallgatherv, bytes.data(), mine, MPI_BYTE, all.data(), counts.data(), displs.data(),
          MPI_BYTE, comm_);
  std::vector<std::string> out;
  for (int p = 0; p < size_; ++p) out.push_back(all.substr(static_cast<size_t>(displs[p]), static_cast<size_t>(counts[p])));
  return out;
}

}  // namespace

std::string LibraryVersion() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<size_t>(len));
  size_t cut = s.find_first_of(",\n");
  return cut == std::string::npos ? s : s.substr(0, cut);
}

StatusOr<std::shared_ptr<ProcessGroup>> World() {
  {
    std::lock_guard<std::mutex> lock(Mu());
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      if (Finalized()) return Status(StatusCode::kFailedPrecondition, "MPI was finalized already");
      int provided = 0;
      TS_MPI(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
      g_we_initialized = true;
    }
  }
  return FromComm(MPI_COMM_WORLD);
}

StatusOr<std::shared_ptr<ProcessGroup>> FromComm(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(Mu());
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized || Finalized())
    return Status(StatusCode::kFailedPrecondition, "tessera::mpi::FromComm: MPI is not initialized (call MPI_Init first)");
  MPI_Comm dup = MPI_COMM_NULL;
  TS_MPI(MPI_Comm_dup(comm, &dup));
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  return std::shared_ptr<ProcessGroup>(std::make_shared<MpiGroup>(dup));
}

StatusOr<Communicator> CreateCommunicator(MPI_Comm comm, const std::vector<Device>& local_devices) {
  if (local_devices.empty())
    return Status(StatusCode::kInvalidArgument, "tessera::mpi::CreateCommunicator: pass at least one device");
  std::lock_guard<std::mutex> lock(Mu());
  MPI_Comm dup = MPI_COMM_NULL;
  TS_MPI(MPI_Comm_dup(comm, &dup));
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int size = 0;
  MPI_Comm_size(dup, &size);
  int mine = static_cast<int>(local_devices.size());
  std::vector<int> counts(static_cast<size_t>(size));
  int rc = MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, dup);
  if (rc != MPI_SUCCESS) {
    FreeComm(&dup);
    return MpiError("MPI_Allgather", rc);
  }
  std::vector<uint32_t> rank_process;
  for (int p = 0; p < size; ++p) rank_process.insert(rank_process.end(), static_cast<size_t>(counts[p]), static_cast<uint32_t>(p));
  int me = 0;
  MPI_Comm_rank(dup, &me);
  auto own = PluginCommunicator(&dup, local_devices, rank_process, me);
  if (!own.ok()) return own.status();
  if (own->has_value()) return std::move(**own);
  return Communicator::FromProvider(local_devices, std::make_shared<MpiProvider>(dup, std::move(rank_process)));
}

void Finalize() {
  std::lock_guard<std::mutex> lock(Mu());
  if (g_we_initialized && !Finalized()) MPI_Finalize();
}

}  // namespace tessera::mpi
