// Process groups over TCP (tessera/tcp.hpp) with threads standing in for
// processes: each "process" is a thread that joins the group with its own
// rank and its own cpu devices.  The collectives must equal the cpu
// plugin's own communicator over the same devices bit for bit (the same
// fixed tree); bad joins, disagreeing calls and a process that leaves are
// errors in bounded time, never hangs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "tessera/tcp.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;
using testing::Upload;

class TcpTest : public CpuTest {
 public:
  // body(p) on `procs` threads at once; returns when all are done.
  static void OnEveryProcess(int procs, const std::function<void(int)>& body) {
    std::vector<std::thread> t;
    for (int p = 0; p < procs; ++p) t.emplace_back(body, p);
    for (auto& th : t) th.join();
  }
  static tcp::JoinOptions Timeout(double s) {
    tcp::JoinOptions o;
    o.timeout_s = s;
    return o;
  }
  static int FreePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
  }

 protected:
  int NumDevices() const override { return 4; }
  void Fill(const Buffer& b, uint64_t floats, int seed) {
    std::vector<float> v(floats);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * static_cast<float>((i * 31 + seed * 7) % 97) - 3.3f;
    Upload(b, v);
  }
};

struct Op {
  TsCollectiveOp op;
  TsReduceOp reduce;
};
constexpr Op kOps[] = {{TS_COLLECTIVE_ALL_REDUCE, TS_REDUCE_SUM},
                       {TS_COLLECTIVE_ALL_REDUCE, TS_REDUCE_MAX},
                       {TS_COLLECTIVE_REDUCE_SCATTER, TS_REDUCE_SUM},
                       {TS_COLLECTIVE_ALL_GATHER, TS_REDUCE_SUM},
                       {TS_COLLECTIVE_BROADCAST, TS_REDUCE_SUM}};

Status Call(const Communicator& c, const Op& o, const MemoryRefs& s, const MemoryRefs& r, uint64_t n,
            const std::vector<Stream>& st) {
  switch (o.op) {
    case TS_COLLECTIVE_ALL_REDUCE: return c.all_reduce(s, r, n, TS_DTYPE_F32, o.reduce, st, true);
    case TS_COLLECTIVE_REDUCE_SCATTER: return c.reduce_scatter(s, r, n, TS_DTYPE_F32, o.reduce, st, true);
    case TS_COLLECTIVE_ALL_GATHER: return c.all_gather(s, r, n, TS_DTYPE_F32, st);
    case TS_COLLECTIVE_BROADCAST: return c.broadcast(s, r, n, TS_DTYPE_F32, 1, st);
  }
  return Status(StatusCode::kInternal, "unknown op");
}

// procs processes holding `per` devices each (devices p*per ..): every
// collective over tcp, then the same over the cpu plugin's communicator of
// all the devices; the results must be the same bytes.
void CompareWithThePlugin(TcpTest* t, Runtime& rt, int procs, int per,
                          const std::function<Device(int)>& device, const std::function<Stream(int)>& stream,
                          const std::function<Buffer(uint64_t, int)>& alloc,
                          const std::function<void(const Buffer&, uint64_t, int)>& fill) {
  const int ranks = procs * per;
  constexpr uint64_t n = 1000;  // per rank
  const size_t nops = sizeof kOps / sizeof kOps[0];
  std::vector<Buffer> send;
  std::vector<std::vector<Buffer>> got(nops), want(nops);
  std::vector<Stream> streams;
  for (int r = 0; r < ranks; ++r) {
    send.push_back(alloc(n * ranks * 4, r));
    fill(send[r], n * ranks, r);
    streams.push_back(stream(r));
    for (size_t k = 0; k < nops; ++k) {
      got[k].push_back(alloc(n * ranks * 4, r));
      want[k].push_back(alloc(n * ranks * 4, r));
    }
  }
  TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId id, tcp::GetUniqueId());
  std::vector<Status> status(procs);
  t->OnEveryProcess(procs, [&](int p) {
    std::vector<Device> mine;
    std::vector<Buffer> s;
    std::vector<Stream> st;
    for (int k = 0; k < per; ++k) {
      mine.push_back(device(p * per + k));
      s.push_back(send[p * per + k]);
      st.push_back(streams[p * per + k]);
    }
    auto comm = tcp::CreateCommunicator(id, procs, p, mine, TcpTest::Timeout(30));
    if (!comm.ok()) {
      status[p] = comm.status();
      return;
    }
    EXPECT_EQ(comm->size(), static_cast<size_t>(ranks));
    EXPECT_EQ(comm->provider(), "tcp");
    for (size_t k = 0; k < nops && status[p].ok(); ++k) {
      std::vector<Buffer> r(got[k].begin() + p * per, got[k].begin() + (p + 1) * per);
      status[p] = Call(*comm, kOps[k], s, r, n, st);
    }
  });
  for (int p = 0; p < procs; ++p) ASSERT_TRUE(status[p].ok()) << "process " << p << ": " << status[p].ToString();
  std::vector<Device> all;
  for (int r = 0; r < ranks; ++r) all.push_back(device(r));
  TS_ASSERT_OK_AND_ASSIGN(Communicator ref, rt.create_communicator(all));
  for (size_t k = 0; k < nops; ++k) {
    TS_ASSERT_OK(Call(ref, kOps[k], send, want[k], n, streams));
    for (const Stream& s : streams) TS_ASSERT_OK(s.synchronize());
    for (int r = 0; r < ranks; ++r) {
      const uint64_t bytes = (kOps[k].op == TS_COLLECTIVE_ALL_GATHER ? n * ranks : n) * 4;
      EXPECT_EQ(Download<uint8_t>(got[k][r], bytes), Download<uint8_t>(want[k][r], bytes))
          << "op " << k << " (" << CollectiveOpName(kOps[k].op) << "), rank " << r;
    }
  }
}

TEST_F(TcpTest, CollectivesEqualTheCpuPluginBitForBit) {
  CompareWithThePlugin(
      this, runtime_, 3, 1, [&](int r) { return device(r); }, [&](int r) { return NewStream({}, r); },
      [&](uint64_t b, int r) { return Alloc(b, TS_BUFFER_DEVICE, r); },
      [&](const Buffer& b, uint64_t f, int seed) { Fill(b, f, seed); });
}

TEST_F(TcpTest, TwoDevicesPerProcess) {
  CompareWithThePlugin(
      this, runtime_, 2, 2, [&](int r) { return device(r); }, [&](int r) { return NewStream({}, r); },
      [&](uint64_t b, int r) { return Alloc(b, TS_BUFFER_DEVICE, r); },
      [&](const Buffer& b, uint64_t f, int seed) { Fill(b, f, seed); });
}

// A coordinator address instead of an id (jax.distributed.initialize's
// way): process 0 listens there when it joins; the others may come first.
TEST_F(TcpTest, CoordinatorAddress) {
  TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId id, tcp::UniqueId::FromAddress("127.0.0.1:" + std::to_string(FreePort())));
  std::vector<StatusOr<std::vector<std::string>>> got(2, Status(StatusCode::kUnknown, "not run"));
  OnEveryProcess(2, [&](int p) {
    if (p == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the other connects first
    auto g = tcp::Join(id, 2, p, Timeout(20));
    if (!g.ok()) {
      got[p] = g.status();
      return;
    }
    EXPECT_EQ((*g)->rank(), p);
    got[p] = (*g)->AllGather("from " + std::to_string(p));
  });
  for (int p = 0; p < 2; ++p) {
    TS_ASSERT_OK(got[p].status());
    EXPECT_EQ(*got[p], (std::vector<std::string>{"from 0", "from 1"}));
  }
}

TEST_F(TcpTest, IdsThatAreNotIds) {
  EXPECT_FALSE(tcp::UniqueId::Parse("127.0.0.1:29500").ok());
  EXPECT_FALSE(tcp::UniqueId::Parse("tessera-tcp:127.0.0.1:0:5").ok());
  EXPECT_FALSE(tcp::UniqueId::FromAddress("localhost").ok());
  EXPECT_FALSE(tcp::UniqueId::FromAddress("127.0.0.1:70000").ok());
  TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId id, tcp::GetUniqueId());
  TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId back, tcp::UniqueId::Parse(id.text()));
  EXPECT_EQ(back.text(), id.text());
  Status st = tcp::Join(id, 2, 2).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  TS_EXPECT_CONTAINS(st.message(), "need 0 <= rank < size");
  // Rank 0 must be the process that made the id (here: an id no one made).
  tcp::UniqueId other = id;
  other.nonce += 2;
  st = tcp::Join(other, 2, 0, Timeout(2)).status();
  TS_EXPECT_CONTAINS(st.message(), "rank 0 must be the process that made the id");
}

// Wrong sizes and ranks: both sides fail, naming the mistake; a process of
// another group (another nonce) is turned away without breaking this one;
// a process that never comes is a timeout that says how many are missing.
TEST_F(TcpTest, BadJoins) {
  {
    TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId id, tcp::GetUniqueId());
    std::vector<Status> st(2);
    OnEveryProcess(2, [&](int p) { st[p] = tcp::Join(id, p == 0 ? 2 : 3, p, Timeout(10)).status(); });
    TS_EXPECT_CONTAINS(st[0].message(), "joins a group of 3 processes; process 0 was given 2");
    TS_EXPECT_CONTAINS(st[1].message(), "process 0 says");
  }
  {
    TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId id, tcp::GetUniqueId());
    tcp::UniqueId stranger = id;
    stranger.nonce ^= 0x10;
    std::vector<Status> st(3);
    OnEveryProcess(3, [&](int p) {
      if (p == 2) {
        st[p] = tcp::Join(stranger, 2, 1, Timeout(10)).status();
        return;
      }
      if (p == 1) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the stranger first
      st[p] = tcp::Join(id, 2, p, Timeout(10)).status();
    });
    TS_EXPECT_OK(st[0]);
    TS_EXPECT_OK(st[1]);
    TS_EXPECT_CONTAINS(st[2].message(), "nonce differs");
  }
  {
    TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId id, tcp::GetUniqueId());
    const auto t0 = std::chrono::steady_clock::now();
    Status st = tcp::Join(id, 3, 0, Timeout(1)).status();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.ToString();
    TS_EXPECT_CONTAINS(st.message(), "2 more of 3 processes");
  }
}

// Processes that call different collectives all fail with one message
// naming each side, and the communicator still works afterwards.
TEST_F(TcpTest, DisagreeingCallsFailEverywhereAndRecover) {
  TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId id, tcp::GetUniqueId());
  std::vector<Buffer> a = {Alloc(64, TS_BUFFER_DEVICE, 0), Alloc(64, TS_BUFFER_DEVICE, 1)};
  std::vector<Stream> s = {NewStream({}, 0), NewStream({}, 1)};
  std::vector<Status> first(2), second(2);
  OnEveryProcess(2, [&](int p) {
    auto comm = tcp::CreateCommunicator(id, 2, p, {device(p)}, Timeout(20));
    if (!comm.ok()) {
      first[p] = comm.status();
      return;
    }
    first[p] = comm->all_reduce({a[p]}, {a[p]}, p == 0 ? 16 : 8, TS_DTYPE_F32, TS_REDUCE_SUM, {s[p]}, true);
    second[p] = comm->all_reduce({a[p]}, {a[p]}, 8, TS_DTYPE_F32, TS_REDUCE_SUM, {s[p]}, true);
  });
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(first[p].code(), StatusCode::kFailedPrecondition) << first[p].ToString();
    TS_EXPECT_CONTAINS(first[p].message(), "the ranks disagree on the collective");
    TS_EXPECT_CONTAINS(first[p].message(), "16 f32 elements per rank");
    TS_EXPECT_OK(second[p]);
  }
}

// A process that leaves (its communicator destroyed, its connections
// closed) fails the other's next collective at once, not at the timeout.
TEST_F(TcpTest, AProcessThatLeavesFailsTheOthersAtOnce) {
  TS_ASSERT_OK_AND_ASSIGN(tcp::UniqueId id, tcp::GetUniqueId());
  Buffer a = Alloc(64, TS_BUFFER_DEVICE, 0);
  Stream s = NewStream({}, 0);
  Status st;
  double seconds = 0;
  OnEveryProcess(2, [&](int p) {
    auto comm = tcp::CreateCommunicator(id, 2, p, {device(p)}, Timeout(60));
    if (!comm.ok()) {
      st = comm.status();
      return;
    }
    if (p == 1) return;  // process 1 leaves: its sockets close
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto t0 = std::chrono::steady_clock::now();
    st = comm->all_reduce({a}, {a}, 16, TS_DTYPE_F32, TS_REDUCE_SUM, {s}, true);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Status again = comm->all_reduce({a}, {a}, 16, TS_DTYPE_F32, TS_REDUCE_SUM, {s}, true);
    TS_EXPECT_CONTAINS(again.message(), "an earlier collective failed");
  });
  EXPECT_FALSE(st.ok());
  TS_EXPECT_CONTAINS(st.message(), "process 1 closed the connection");
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace tessera
