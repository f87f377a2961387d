#include "shm_group.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "host_reduce.hpp"
#include "plugin_support.hpp"

namespace tessera::cpu {

using plugin_support::dtype_size;
using plugin_support::errorf;
using plugin_support::host_reduce;
using plugin_support::make_error;
using plugin_support::strprintf;

namespace {

constexpr char kIdPrefix[] = "tessera-cpu-shm/1 ";
constexpr size_t kNonceBytes = 16;
constexpr uint32_t kMaxRanks = 4096;
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kRecordBytes = 64;
constexpr uint64_t kSegmentDataBytes = uint64_t{64} << 20;  // all slots together, at most
constexpr uint64_t kMinSlot = uint64_t{64} << 10, kMaxSlot = uint64_t{4} << 20;
constexpr int kCallFields = 6;

static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<int32_t>::is_always_lock_free,
              "the segment's atomics must be address-free (lock-free) to work across processes");

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "localhost";
  std::string h(host, strnlen(host, sizeof host));
  for (char& c : h)
    if (c == ' ') c = '_';
  return h.substr(0, 64);
}

uint64_t RoundUp(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

// The parts of an id, or a message saying what is wrong with it.
struct ParsedId {
  std::string host, nonce;
};
bool ParseId(const uint8_t* id, ParsedId* out, std::string* why) {
  const char* text = reinterpret_cast<const char*>(id);
  const size_t len = strnlen(text, TS_UNIQUE_ID_BYTES);
  if (len == TS_UNIQUE_ID_BYTES) {
    *why = "the unique id is not NUL-terminated within its 128 bytes";
    return false;
  }
  const std::string s(text, len);
  const size_t prefix = sizeof kIdPrefix - 1;
  if (s.compare(0, prefix, kIdPrefix) != 0) {
    *why = "the unique id was not made by the cpu plugin's Communicator_CreateUniqueId";
    return false;
  }
  const size_t space = s.find(' ', prefix);
  if (space == std::string::npos || space == prefix || s.size() - space - 1 != 2 * kNonceBytes) {
    *why = "the unique id is malformed (\"" + s + "\")";
    return false;
  }
  out->host = s.substr(prefix, space - prefix);
  out->nonce = s.substr(space + 1);
  for (char c : out->nonce)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      *why = "the unique id is malformed (\"" + s + "\")";
      return false;
    }
  return true;
}

// "all_reduce sum of 1000 F32 elements per rank (call #3)", from a rank's
// published call (values another process wrote: every field is checked
// before it names anything).
std::string DescribeCall(const int64_t* c) {
  static const char* const kOps[] = {"all_reduce", "broadcast", "all_gather", "reduce_scatter"};
  static const char* const kReduce[] = {"sum", "prod", "max", "min"};
  std::string s = c[0] >= 0 && c[0] < 4 ? kOps[c[0]] : "op " + std::to_string(c[0]);
  if (c[1] >= 0) s += std::string(" ") + (c[1] < 4 ? kReduce[c[1]] : "reduce " + std::to_string(c[1]));
  const char* type = c[2] >= TS_DTYPE_F32 && c[2] <= TS_DTYPE_U8 ? plugin_support::dtype_name(static_cast<TsDataType>(c[2]))
                                                                  : "unknown-type";
  s += strprintf(" of %lld %s elements per rank", static_cast<long long>(c[3]), type);
  if (c[4] >= 0) s += " from root " + std::to_string(c[4]);
  return s + strprintf(" (call #%lld)", static_cast<long long>(c[5]));
}

// The reason a process wrote into the segment, bounded by its field (the
// segment is shared: nothing in it is trusted to be terminated).
template <class HeaderT>
std::string FailureReason(const HeaderT* h) {
  return std::string(h->why, strnlen(h->why, sizeof h->why));
}

bool Alive(int32_t pid) { return pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace

struct ShmGroup::Header {
  std::atomic<uint32_t> num_ranks;  // 0 until the first process sets it
  std::atomic<uint32_t> joined;     // ranks that joined
  std::atomic<uint32_t> failing;    // 1 once a process claimed `why`
  std::atomic<uint32_t> failed;     // 1 once `why` is written
  char why[1024];
  alignas(64) std::atomic<uint64_t> arrived;  // barrier arrivals, over all barriers
};
static_assert(sizeof(ShmGroup::Header) <= kHeaderBytes, "the header fits its page");

struct ShmGroup::RankRecord {
  std::atomic<int32_t> pid;  // the process the rank joined from
  int32_t unused;
  int64_t call[kCallFields];  // its current call (see Exchange)
};
static_assert(sizeof(ShmGroup::RankRecord) <= kRecordBytes, "a rank's record fits its place");

ShmGroup::Header* ShmGroup::header() const { return static_cast<Header*>(base_); }
ShmGroup::RankRecord* ShmGroup::rank_record(uint32_t r) const {
  return reinterpret_cast<RankRecord*>(static_cast<uint8_t*>(base_) + kHeaderBytes + r * kRecordBytes);
}
uint8_t* ShmGroup::slot(uint32_t r) const {
  const uint64_t records = RoundUp(uint64_t{num_ranks_} * kRecordBytes, 4096);
  return static_cast<uint8_t*>(base_) + kHeaderBytes + records + r * slot_bytes_;
}

namespace {

// SEGMENTS LEFT BEHIND.  A segment's name is removed once every rank has
// joined, or when a join fails.  A process that ends while it waits to
// join (Ctrl-C in Python leaves the waiting thread behind and exits;
// SIGTERM, SIGKILL) never gets there, and the segment stayed in /dev/shm
// for good (12 MiB each).  Two remedies:
//  - at a normal exit, the names this process is still joining are removed
//    (an atexit hook; exit() runs it whatever threads still wait);
//  - every join first removes segments whose processes are all gone
//    (RemoveStaleSegments), which covers the signals no handler sees.
constexpr char kSegmentPrefix[] = "tessera-cpu-";
// A segment younger than this may be one whose creator has not written its
// pid yet: never judged stale.
constexpr time_t kStaleAfterSeconds = 30;

// The names being joined, with the process joining each.  Never destroyed
// (a join thread may still run when exit() runs the hook, and would then
// touch a destroyed set); the hook takes the lock only if it is free (a
// fork may have copied it held) and unlinks only this process's names (a
// child must not remove its parent's segment).
class JoiningNames {
 public:
  static JoiningNames& Get() {
    static JoiningNames* names = [] {
      auto* n = new JoiningNames;
      std::atexit([] { Get().UnlinkOwn(); });
      return n;
    }();
    return *names;
  }
  void Add(const std::string& name) {
    std::lock_guard<std::mutex> lk(mu_);
    names_[name] = getpid();
  }
  void Remove(const std::string& name) {
    std::lock_guard<std::mutex> lk(mu_);
    names_.erase(name);
  }

 private:
  void UnlinkOwn() {
    std::unique_lock<std::mutex> lk(mu_, std::try_to_lock);
    if (!lk.owns_lock()) return;
    const pid_t me = getpid();
    for (const auto& [name, pid] : names_)
      if (pid == me) shm_unlink(name.c_str());
  }
  std::mutex mu_;
  std::map<std::string, pid_t> names_;
};

// Whether any rank of the segment at `fd` (of `size` bytes) may still be
// running: a registered pid that exists.  Unreadable or implausible
// content counts as alive (the segment is left alone).
bool AnyRankAlive(int fd, uint64_t size) {
  if (size < kHeaderBytes) return true;
  void* head = mmap(nullptr, kHeaderBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (head == MAP_FAILED) return true;
  const uint32_t n = static_cast<const ShmGroup::Header*>(head)->num_ranks.load(std::memory_order_acquire);
  munmap(head, kHeaderBytes);
  if (n == 0) return false;  // nobody ever set it up
  const uint64_t mapped = kHeaderBytes + RoundUp(uint64_t{n} * kRecordBytes, 4096);
  if (n > kMaxRanks || size < mapped) return true;
  void* base = mmap(nullptr, mapped, PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return true;
  bool alive = false;
  for (uint32_t r = 0; r < n && !alive; ++r) {
    const auto* rec = reinterpret_cast<const ShmGroup::RankRecord*>(static_cast<const uint8_t*>(base) +
                                                                    kHeaderBytes + r * kRecordBytes);
    const int32_t pid = rec->pid.load(std::memory_order_relaxed);
    alive = pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
  }
  munmap(base, mapped);
  return alive;
}

}  // namespace

void RemoveStaleSegments() {
  DIR* dir = opendir("/dev/shm");
  if (!dir) return;
  const time_t now = time(nullptr);
  const size_t prefix = sizeof kSegmentPrefix - 1;
  while (const dirent* e = readdir(dir)) {
    const std::string n = e->d_name;
    if (n.size() != prefix + 2 * kNonceBytes || n.compare(0, prefix, kSegmentPrefix) != 0) continue;
    // Judged before it is opened: /dev/shm is writable by every user, and
    // opening a FIFO named like a segment would wait for a writer for ever.
    struct stat st {};
    if (fstatat(dirfd(dir), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid())
      continue;
    const std::string name = "/" + n;
    const int fd = shm_open(name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0);
    if (fd < 0) continue;
    const bool stale = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
                       now - st.st_mtime >= kStaleAfterSeconds &&
                       !AnyRankAlive(fd, static_cast<uint64_t>(st.st_size));
    close(fd);
    if (stale) shm_unlink(name.c_str());
  }
  closedir(dir);
}

TsError* MakeShmUniqueId(uint8_t out[TS_UNIQUE_ID_BYTES]) noexcept {
  uint8_t nonce[kNonceBytes];
  size_t got = 0;
  while (got < sizeof nonce) {
    const ssize_t n = getrandom(nonce + got, sizeof nonce - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return errorf(TS_ERROR_INTERNAL, "cpu: Communicator_CreateUniqueId: getrandom failed: %s",
                    std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  std::string text = kIdPrefix + HostName() + " ";
  for (uint8_t b : nonce) text += strprintf("%02x", b);
  std::memset(out, 0, TS_UNIQUE_ID_BYTES);
  std::memcpy(out, text.data(), std::min(text.size(), size_t{TS_UNIQUE_ID_BYTES - 1}));
  return nullptr;
}

TsError* ShmGroup::Join(const uint8_t* id, uint32_t num_ranks, std::vector<uint32_t> my_ranks,
                        double timeout_s, std::unique_ptr<ShmGroup>* out) noexcept {
  return plugin_support::guard("cpu", "Communicator_Create", [&]() -> TsError* {
    ParsedId parsed;
    std::string why;
    if (!ParseId(id, &parsed, &why))
      return errorf(TS_ERROR_INVALID_ARGUMENT, "cpu: Communicator_Create: %s", why.c_str());
    const std::string host = HostName();
    if (parsed.host != host)
      return errorf(TS_ERROR_UNSUPPORTED,
                    "cpu: Communicator_Create: the unique id was made on host '%s', this is '%s': the "
                    "cpu plugin's communicators span the processes of one host (set "
                    "TESSERA_PROCESS_COLLECTIVES=provider to move the data with MPI)",
                    parsed.host.c_str(), host.c_str());
    if (num_ranks > kMaxRanks)
      return errorf(TS_ERROR_INVALID_ARGUMENT,
                    "cpu: Communicator_Create: %u ranks; a communicator across processes has at most %u",
                    num_ranks, kMaxRanks);
    std::unique_ptr<ShmGroup> g(new ShmGroup());
    g->num_ranks_ = num_ranks;
    g->my_ranks_ = std::move(my_ranks);
    g->timeout_s_ = timeout_s > 0 ? timeout_s : 600;
    // One slot per rank, and one for the result of an all_reduce's chunk.
    g->slot_bytes_ = std::clamp<uint64_t>(kSegmentDataBytes / (num_ranks + 1) / 4096 * 4096, kMinSlot, kMaxSlot);
    g->bytes_ = kHeaderBytes + RoundUp(uint64_t{num_ranks} * kRecordBytes, 4096) + (num_ranks + 1) * g->slot_bytes_;
    const std::string name = "/" + std::string(kSegmentPrefix) + parsed.nonce;
    RemoveStaleSegments();
    const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0)
      return errorf(TS_ERROR_INTERNAL, "cpu: Communicator_Create: shm_open(%s): %s (is /dev/shm writable?)",
                    name.c_str(), std::strerror(errno));
    struct stat st {};
    int rc = fstat(fd, &st);
    // Never shrink: another process may have mapped a larger segment (and
    // will find the size it expects missing from the header).
    if (rc == 0 && static_cast<uint64_t>(st.st_size) < g->bytes_)
      rc = posix_fallocate(fd, 0, static_cast<off_t>(g->bytes_));
    if (rc != 0) {
      const int err = rc > 0 ? rc : errno;
      close(fd);
      shm_unlink(name.c_str());
      return errorf(err == ENOSPC ? TS_ERROR_RESOURCE_EXHAUSTED : TS_ERROR_INTERNAL,
                    "cpu: Communicator_Create: cannot make %s of shared memory for %u ranks (%s): %s",
                    plugin_support::human_size(g->bytes_).c_str(), num_ranks, name.c_str(),
                    std::strerror(err));
    }
    void* base = mmap(nullptr, g->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int map_errno = errno;
    close(fd);
    if (base == MAP_FAILED) {
      shm_unlink(name.c_str());
      return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "cpu: Communicator_Create: mmap of %s: %s",
                    plugin_support::human_size(g->bytes_).c_str(), std::strerror(map_errno));
    }
    g->base_ = base;
    // From here the name goes once every rank has joined, or on failure,
    // or at this process's exit if it is still waiting then.
    JoiningNames::Get().Add(name);
    struct Unlink {
      std::string name;
      ~Unlink() {
        shm_unlink(name.c_str());
        JoiningNames::Get().Remove(name);
      }
    } unlink_at_end{name};
    Header* h = g->header();
    uint32_t expected = 0;
    if (!h->num_ranks.compare_exchange_strong(expected, num_ranks) && expected != num_ranks)
      return g->Fail(TS_ERROR_INVALID_ARGUMENT,
                     strprintf("the processes disagree on the communicator's size: %u ranks here, %u in "
                               "another process",
                               num_ranks, expected));
    const int32_t me = static_cast<int32_t>(getpid());
    for (uint32_t r : g->my_ranks_) {
      int32_t was = 0;
      if (!g->rank_record(r)->pid.compare_exchange_strong(was, me))
        return g->Fail(TS_ERROR_INVALID_ARGUMENT,
                       strprintf("rank %u joined twice (from process %d and from process %d)", r, was, me));
    }
    h->joined.fetch_add(static_cast<uint32_t>(g->my_ranks_.size()), std::memory_order_acq_rel);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(g->timeout_s_);
    while (h->joined.load(std::memory_order_acquire) < num_ranks) {
      if (h->failed.load(std::memory_order_acquire))
        return g->Fail(TS_ERROR_ABORTED, "another process failed: " + FailureReason(h));
      if (std::chrono::steady_clock::now() > deadline) {
        std::string missing;
        for (uint32_t r = 0; r < num_ranks; ++r)
          if (g->rank_record(r)->pid.load() == 0) missing += (missing.empty() ? "" : ",") + std::to_string(r);
        return g->Fail(TS_ERROR_DEADLINE_EXCEEDED,
                       strprintf("%u of %u ranks joined within %.0f s; ranks %s never did (did every "
                                 "process call Communicator_Create with this id?)",
                                 h->joined.load(), num_ranks, g->timeout_s_, missing.c_str()));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    *out = std::move(g);
    return nullptr;
  });
}

ShmGroup::~ShmGroup() {
  if (base_) munmap(base_, bytes_);
}

TsError* ShmGroup::Fail(TsErrorCode code, const std::string& why) {
  Header* h = header();
  if (h->failing.exchange(1, std::memory_order_acq_rel) == 0) {
    const std::string text = strprintf("process %d: %s", static_cast<int>(getpid()), why.c_str());
    std::memcpy(h->why, text.data(), std::min(text.size(), sizeof h->why - 1));
    h->why[std::min(text.size(), sizeof h->why - 1)] = '\0';
    h->failed.store(1, std::memory_order_release);
  }
  broken_ = "an earlier call failed (" + why + "): destroy this communicator and create another";
  return make_error(code, "cpu: collective across processes: " + why);
}

TsError* ShmGroup::Barrier(const char* where) {
  Header* h = header();
  if (h->failed.load(std::memory_order_acquire))
    return Fail(TS_ERROR_ABORTED, "another process failed: " + FailureReason(h));
  const uint64_t target = (barriers_ + 1) * num_ranks_;
  ++barriers_;
  h->arrived.fetch_add(my_ranks_.size(), std::memory_order_acq_rel);
  const auto start = std::chrono::steady_clock::now();
  auto next_check = start + std::chrono::milliseconds(20);
  for (uint64_t spin = 0; h->arrived.load(std::memory_order_acquire) < target; ++spin) {
    if (h->failed.load(std::memory_order_acquire))
      return Fail(TS_ERROR_ABORTED, "another process failed: " + FailureReason(h));
    if (spin < 64) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(spin < 1024 ? 20 : 200));
    const auto now = std::chrono::steady_clock::now();
    if (now < next_check) continue;
    next_check = now + std::chrono::milliseconds(20);
    for (uint32_t r = 0; r < num_ranks_; ++r) {
      const int32_t pid = rank_record(r)->pid.load(std::memory_order_relaxed);
      if (!Alive(pid))
        return Fail(TS_ERROR_UNAVAILABLE,
                    strprintf("rank %u's process %d exited while the others were %s", r, pid, where));
    }
    if (now - start > std::chrono::duration<double>(timeout_s_))
      return Fail(TS_ERROR_DEADLINE_EXCEEDED,
                  strprintf("waited %.0f s for the other ranks while %s (a process stopped calling, or "
                            "called another collective)",
                            timeout_s_, where));
  }
  return nullptr;
}

TsError* ShmGroup::Run(const ShmCall& call) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (!broken_.empty())
    return errorf(TS_ERROR_FAILED_PRECONDITION, "cpu: collective across processes: %s", broken_.c_str());
  ++calls_;
  return plugin_support::guard("cpu", "Communicator_Collective", [&] { return Exchange(call); });
}

TsError* ShmGroup::Exchange(const ShmCall& call) {
  const uint32_t N = num_ranks_;
  const size_t L = my_ranks_.size();
  const bool reduces = call.op == TS_COLLECTIVE_ALL_REDUCE || call.op == TS_COLLECTIVE_REDUCE_SCATTER;
  // 1. Agreement: every rank publishes its call; all compare.  A second
  // barrier keeps a fast process from overwriting its record (next call)
  // while a slow one still reads this one.
  const int64_t mine[kCallFields] = {call.op,
                                     reduces ? int64_t{call.reduce_op} : -1,
                                     call.dtype,
                                     static_cast<int64_t>(call.count),
                                     call.op == TS_COLLECTIVE_BROADCAST ? int64_t{call.root} : -1,
                                     static_cast<int64_t>(calls_)};
  for (uint32_t r : my_ranks_) std::memcpy(rank_record(r)->call, mine, sizeof mine);
  if (TsError* e = Barrier("agreeing on the call")) return e;
  std::string differ;
  for (uint32_t r = 0; r < N; ++r) {
    const int64_t* c = rank_record(r)->call;
    if (std::memcmp(c, mine, sizeof mine) != 0) differ += "; rank " + std::to_string(r) + ": " + DescribeCall(c);
  }
  if (TsError* e = Barrier("agreeing on the call")) return e;
  if (!differ.empty())
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "cpu: collective across processes: the ranks disagree on the call: rank %u: %s%s", my_ranks_[0],
                  DescribeCall(mine).c_str(), differ.c_str());

  // 2. The data, in slot-sized chunks.
  const size_t esz = dtype_size(call.dtype);
  const uint64_t chunk = slot_bytes_ / esz;
  std::vector<uint32_t> order(N);
  for (uint32_t r = 0; r < N; ++r) order[r] = r;
  auto local_of = [&](uint32_t rank) -> int {
    for (size_t i = 0; i < L; ++i)
      if (my_ranks_[i] == rank) return static_cast<int>(i);
    return -1;
  };
  // Rank-major segments: all_gather's recv and reduce_scatter's send hold
  // one per rank.
  const uint64_t segment = call.count * esz;
  if (call.op == TS_COLLECTIVE_REDUCE_SCATTER) {
    // Each round: every rank puts a piece of each of its N segments in its
    // slot; rank g then reduces the pieces of segment g (each element is
    // reduced once, by its owner).
    const uint64_t piece = std::max<uint64_t>(1, chunk / N);
    std::vector<const void*> in(N);
    for (uint64_t off = 0; off < call.count; off += piece) {
      const uint64_t n = std::min(piece, call.count - off), b = n * esz, at = off * esz;
      for (size_t i = 0; i < L; ++i)
        for (uint32_t s = 0; s < N; ++s) std::memcpy(slot(my_ranks_[i]) + s * b, call.send[i] + s * segment + at, b);
      if (TsError* e = Barrier("exchanging data")) return e;
      for (size_t i = 0; i < L; ++i) {
        for (uint32_t q = 0; q < N; ++q) in[q] = slot(q) + my_ranks_[i] * b;
        host_reduce(call.dtype, call.reduce_op, in, order, true, n, call.recv[i] + at);
      }
      if (TsError* e = Barrier("exchanging data")) return e;
    }
    return nullptr;
  }
  {
    for (uint64_t off = 0; off < call.count; off += chunk) {
      const uint64_t n = std::min(chunk, call.count - off), b = n * esz, at = off * esz;
      switch (call.op) {
        case TS_COLLECTIVE_ALL_REDUCE:
        case TS_COLLECTIVE_ALL_GATHER:
          for (size_t i = 0; i < L; ++i) std::memcpy(slot(my_ranks_[i]), call.send[i] + at, b);
          break;
        case TS_COLLECTIVE_BROADCAST:
          if (int i = local_of(call.root); i >= 0) std::memcpy(slot(call.root), call.send[i] + at, b);
          break;
        case TS_COLLECTIVE_REDUCE_SCATTER:
          break;  // above
      }
      if (TsError* e = Barrier("exchanging data")) return e;
      switch (call.op) {
        case TS_COLLECTIVE_ALL_REDUCE: {
          // Rank g reduces its share of the chunk into the result slot
          // (elementwise, so the bits are those of reducing it whole); all
          // copy the result after the next barrier.
          uint8_t* result = slot(N);
          std::vector<const void*> part(N);
          for (size_t i = 0; i < L; ++i) {
            const uint64_t g = my_ranks_[i], lo = n * g / N, hi = n * (g + 1) / N;
            if (hi == lo) continue;
            for (uint32_t q = 0; q < N; ++q) part[q] = slot(q) + lo * esz;
            host_reduce(call.dtype, call.reduce_op, part, order, true, hi - lo, result + lo * esz);
          }
          break;
        }
        case TS_COLLECTIVE_REDUCE_SCATTER:
          break;  // above
        case TS_COLLECTIVE_ALL_GATHER:
          for (size_t i = 0; i < L; ++i)
            for (uint32_t q = 0; q < N; ++q) std::memcpy(call.recv[i] + q * segment + at, slot(q), b);
          break;
        case TS_COLLECTIVE_BROADCAST:
          for (size_t i = 0; i < L; ++i) std::memcpy(call.recv[i] + at, slot(call.root), b);
          break;
      }
      if (TsError* e = Barrier("exchanging data")) return e;
      if (call.op == TS_COLLECTIVE_ALL_REDUCE)
        for (size_t i = 0; i < L; ++i) std::memcpy(call.recv[i] + at, slot(N), b);
    }
  }
  return nullptr;
}

}  // namespace tessera::cpu
