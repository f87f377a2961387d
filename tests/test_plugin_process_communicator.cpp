// Communicators whose ranks span processes, made by the plugin itself
// (ABI 1.4: Runtime::create_collective_id + create_communicator with an
// id; the cpu plugin's shared-memory groups, plugins/cpu/shm_group.hpp).
// Two Runtimes of one process stand for two processes: each has its own
// cpu client, and they meet only through the id, as processes do.  The
// same code under mpirun: tests/mpi (collectives_plugin).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <future>
#include <thread>

#include "tessera/process_group.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuOptions;
using testing::Download;
using testing::Upload;

Runtime MakeCpu(int devices, double timeout_s = 60) {
  RuntimeOptions options = CpuOptions();
  options.plugin_options["cpu"] = {OptionValue::Int("devices", devices),
                                   OptionValue::Float("process_timeout_s", timeout_s)};
  auto rt = Runtime::Create(options);
  EXPECT_TRUE(rt.ok()) << rt.status().ToString();
  return *rt;
}

// Both "processes" join at once (each join waits for the other).
std::pair<StatusOr<Communicator>, StatusOr<Communicator>> JoinBoth(const Runtime& a, std::vector<uint32_t> ra,
                                                                   const Runtime& b, std::vector<uint32_t> rb,
                                                                   uint32_t total, const Runtime::CollectiveId& id) {
  auto fb = std::async(std::launch::async, [&] { return b.create_communicator(b.devices(), total, rb, id); });
  StatusOr<Communicator> ca = a.create_communicator(a.devices(), total, ra, id);
  return {std::move(ca), fb.get()};
}

// The value rank r holds at element i: small integers, exact in every
// association order.
float Value(uint32_t r, uint64_t i) { return static_cast<float>((r + 1) * (i % 5 + 1)); }

struct Side {
  Communicator comm;
  std::vector<uint32_t> ranks;
  std::vector<Buffer> send, recv;
  std::vector<Stream> streams;
};

void Prepare(Side& s, uint64_t send_elems, uint64_t recv_elems, uint64_t count) {
  s.send.clear();
  s.recv.clear();
  s.streams.clear();
  for (size_t k = 0; k < s.comm.devices().size(); ++k) {
    const Device& d = s.comm.devices()[k];
    s.send.push_back(*d.allocate(send_elems * 4));
    s.recv.push_back(*d.allocate(recv_elems * 4));
    s.streams.push_back(d.default_stream());
    std::vector<float> v(send_elems);
    for (uint64_t i = 0; i < send_elems; ++i) v[i] = Value(s.ranks[k], i % count + i / count * 1000);
    Upload(s.send.back(), v);
  }
}

// After a reduce_scatter sum of Prepare's values: rank g holds segment g
// summed over the 4 ranks (every `step`-th element checked).
void ExpectReduceScatterSums(const Side& s, uint64_t count, uint64_t step) {
  for (size_t k = 0; k < s.recv.size(); ++k) {
    const uint32_t g = s.ranks[k];
    auto got = Download<float>(s.recv[k], count);
    for (uint64_t i = 0; i < count; i += step) {
      float want = 0;
      for (uint32_t q = 0; q < 4; ++q) want += Value(q, i + g * 1000);
      ASSERT_EQ(got[i], want) << "rank " << g << " element " << i;
    }
  }
}

class PluginProcessCommunicator : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = MakeCpu(2);
    b_ = MakeCpu(2);
    ASSERT_TRUE(PluginSpansProcesses(a_));
    TS_ASSERT_OK_AND_ASSIGN(auto id, a_.create_collective_id());
    auto [ca, cb] = JoinBoth(a_, {0, 1}, b_, {2, 3}, 4, id);
    TS_ASSERT_OK(ca.status());
    TS_ASSERT_OK(cb.status());
    A.comm = *ca;
    B.comm = *cb;
    A.ranks = {0, 1};
    B.ranks = {2, 3};
  }
  // Runs `op` on both sides at once; returns both statuses.
  template <class F>
  std::pair<Status, Status> Both(F op) {
    auto fb = std::async(std::launch::async, [&] { return op(B); });
    Status sa = op(A);
    return {sa, fb.get()};
  }
  Runtime a_, b_;
  Side A, B;
};

TEST_F(PluginProcessCommunicator, SizesCountEveryProcess) {
  EXPECT_EQ(A.comm.size(), 4u);
  EXPECT_EQ(A.comm.devices().size(), 2u);
  EXPECT_EQ(A.comm.provider(), "");
}

TEST_F(PluginProcessCommunicator, AllReduceDeterministicAndNot) {
  const uint64_t count = 1000003;  // several slots' worth: chunked
  for (bool det : {true, false}) {
    for (Side* s : {&A, &B}) Prepare(*s, count, count, count);
    auto [sa, sb] = Both([&](Side& s) {
      return s.comm.all_reduce(s.send, s.recv, count, TS_DTYPE_F32, TS_REDUCE_SUM, s.streams, det);
    });
    TS_ASSERT_OK(sa);
    TS_ASSERT_OK(sb);
    for (Side* s : {&A, &B})
      for (const Buffer& r : s->recv) {
        auto got = Download<float>(r, count);
        for (uint64_t i = 0; i < count; i += 997)
          ASSERT_EQ(got[i], Value(0, i) + Value(1, i) + Value(2, i) + Value(3, i)) << i;
        ASSERT_EQ(got[count - 1], Value(0, count - 1) * 10);
      }
  }
}

TEST_F(PluginProcessCommunicator, AllGatherBroadcastReduceScatter) {
  const uint64_t count = 777;
  // all_gather: recv holds 4 segments in rank order.
  for (Side* s : {&A, &B}) Prepare(*s, count, 4 * count, count);
  auto [ga, gb] = Both([&](Side& s) { return s.comm.all_gather(s.send, s.recv, count, TS_DTYPE_F32, s.streams); });
  TS_ASSERT_OK(ga);
  TS_ASSERT_OK(gb);
  for (Side* s : {&A, &B})
    for (const Buffer& r : s->recv) {
      auto got = Download<float>(r, 4 * count);
      for (uint32_t q = 0; q < 4; ++q)
        for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(got[q * count + i], Value(q, i)) << q << " " << i;
    }
  // broadcast from rank 3 (the second process's second device).
  for (Side* s : {&A, &B}) Prepare(*s, count, count, count);
  auto [ba, bb] = Both([&](Side& s) { return s.comm.broadcast(s.send, s.recv, count, TS_DTYPE_F32, 3, s.streams); });
  TS_ASSERT_OK(ba);
  TS_ASSERT_OK(bb);
  for (Side* s : {&A, &B})
    for (const Buffer& r : s->recv) {
      auto got = Download<float>(r, count);
      for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(got[i], Value(3, i));
    }
  // reduce_scatter: send holds 4 segments; rank g gets the sum of segment g.
  for (Side* s : {&A, &B}) Prepare(*s, 4 * count, count, count);
  auto [ra, rb] = Both([&](Side& s) {
    return s.comm.reduce_scatter(s.send, s.recv, count, TS_DTYPE_F32, TS_REDUCE_SUM, s.streams, true);
  });
  TS_ASSERT_OK(ra);
  TS_ASSERT_OK(rb);
  ExpectReduceScatterSums(A, count, 1);
  ExpectReduceScatterSums(B, count, 1);
}

TEST_F(PluginProcessCommunicator, ReduceScatterInSeveralRounds) {
  const uint64_t count = 300007;  // more than a slot's share per segment: several rounds
  for (Side* s : {&A, &B}) Prepare(*s, 4 * count, count, count);
  auto [ra, rb] = Both([&](Side& s) {
    return s.comm.reduce_scatter(s.send, s.recv, count, TS_DTYPE_F32, TS_REDUCE_SUM, s.streams, false);
  });
  TS_ASSERT_OK(ra);
  TS_ASSERT_OK(rb);
  ExpectReduceScatterSums(A, count, 101);
  ExpectReduceScatterSums(B, count, 101);
}

TEST_F(PluginProcessCommunicator, DisagreementNamesTheRanksAndLeavesTheCommunicatorUsable) {
  const uint64_t count = 64;
  for (Side* s : {&A, &B}) Prepare(*s, count + 1, count + 1, count);
  auto [sa, sb] = Both([&](Side& s) {
    const uint64_t n = &s == &B ? count + 1 : count;
    return s.comm.all_reduce(s.send, s.recv, n, TS_DTYPE_F32, TS_REDUCE_SUM, s.streams, true);
  });
  for (const Status& st : {sa, sb}) {
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
    EXPECT_NE(st.message().find("disagree on the call"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("all_reduce sum of 65 F32 elements per rank"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("all_reduce sum of 64 F32 elements per rank"), std::string::npos) << st.ToString();
  }
  // Still usable.
  auto [ok_a, ok_b] = Both([&](Side& s) {
    return s.comm.all_reduce(s.send, s.recv, count, TS_DTYPE_F32, TS_REDUCE_MAX, s.streams, true);
  });
  TS_EXPECT_OK(ok_a);
  TS_EXPECT_OK(ok_b);
}

TEST(PluginProcessCommunicatorJoin, ARankThatNeverJoinsTimesOutNamingIt) {
  Runtime a = MakeCpu(1, /*timeout_s=*/0.5);
  TS_ASSERT_OK_AND_ASSIGN(auto id, a.create_collective_id());
  auto c = a.create_communicator(a.devices(), 2, {0}, id);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kDeadlineExceeded) << c.status().ToString();
  EXPECT_NE(c.status().message().find("ranks 1 never did"), std::string::npos) << c.status().ToString();
}

TEST(PluginProcessCommunicatorJoin, ACallThatAPeerNeverMakesTimesOut) {
  Runtime a = MakeCpu(1, 0.5), b = MakeCpu(1, 0.5);
  TS_ASSERT_OK_AND_ASSIGN(auto id, a.create_collective_id());
  auto [ca, cb] = JoinBoth(a, {0}, b, {1}, 2, id);
  TS_ASSERT_OK(ca.status());
  TS_ASSERT_OK(cb.status());
  TS_ASSERT_OK_AND_ASSIGN(Buffer buf, a.devices()[0].allocate(64));
  Status st = ca->all_reduce({buf}, {buf}, 16, TS_DTYPE_F32, TS_REDUCE_SUM, {a.devices()[0].default_stream()}, true);
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.ToString();
  // Broken for good: the ranks are out of step.
  Status again = ca->all_reduce({buf}, {buf}, 16, TS_DTYPE_F32, TS_REDUCE_SUM, {a.devices()[0].default_stream()}, true);
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition) << again.ToString();
  EXPECT_NE(again.message().find("create another"), std::string::npos) << again.ToString();
  // The other side sees the first side's failure at once.
  TS_ASSERT_OK_AND_ASSIGN(Buffer bb, b.devices()[0].allocate(64));
  Status other = cb->all_reduce({bb}, {bb}, 16, TS_DTYPE_F32, TS_REDUCE_SUM, {b.devices()[0].default_stream()}, true);
  EXPECT_EQ(other.code(), StatusCode::kAborted) << other.ToString();
  EXPECT_NE(other.message().find("another process failed"), std::string::npos) << other.ToString();
}

TEST(PluginProcessCommunicatorJoin, BadIdsAndRanksAreRefused) {
  Runtime a = MakeCpu(2, 0.5);
  TS_ASSERT_OK_AND_ASSIGN(auto id, a.create_collective_id());
  auto expect = [&](StatusOr<Communicator> c, StatusCode code, const char* text) {
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), code) << c.status().ToString();
    EXPECT_NE(c.status().message().find(text), std::string::npos) << c.status().ToString();
  };
  Runtime::CollectiveId garbage(TS_UNIQUE_ID_BYTES, 'x');
  expect(a.create_communicator(a.devices(), 4, {0, 1}, garbage), StatusCode::kInvalidArgument, "not NUL-terminated");
  Runtime::CollectiveId foreign(TS_UNIQUE_ID_BYTES, 0);
  const std::string other = "tessera-cpu-shm/1 some-other-host 00112233445566778899aabbccddeeff";
  std::copy(other.begin(), other.end(), foreign.begin());
  expect(a.create_communicator(a.devices(), 4, {0, 1}, foreign), StatusCode::kUnsupported, "span the processes of one host");
  Runtime::CollectiveId nccl(TS_UNIQUE_ID_BYTES, 0);
  nccl[0] = 2;  // what an NCCL id starts with
  expect(a.create_communicator(a.devices(), 4, {0, 1}, nccl), StatusCode::kInvalidArgument, "not made by the cpu plugin");
  expect(a.create_communicator(a.devices(), 4, {0, 0}, id), StatusCode::kInvalidArgument, "rank 0 is given to");
  expect(a.create_communicator(a.devices(), 4, {0, 4}, id), StatusCode::kInvalidArgument, "ranks[1] is 4");
  expect(a.create_communicator(a.devices(), 1, {0, 1}, id), StatusCode::kInvalidArgument, "num_ranks is 1");
  expect(a.create_communicator(a.devices(), 4, {0}, id), StatusCode::kInvalidArgument, "give each device its rank");
  expect(a.create_communicator(a.devices(), 4, {0, 1}, Runtime::CollectiveId(5)), StatusCode::kInvalidArgument,
         "the id has 5 bytes");
}

// A segment a process left when it was killed or interrupted while joining
// (/dev/shm/tessera-cpu-<nonce>, 12 MiB each, kept for good) is removed by
// the next join once its processes are all gone; one whose process lives,
// or one too young to judge, stays.
namespace {
std::string MakeSegment(const char* nonce, int32_t pid, time_t age_s) {
  const std::string name = std::string("/tessera-cpu-") + nonce;
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  EXPECT_GE(fd, 0) << std::strerror(errno);
  if (fd < 0) return name;
  EXPECT_EQ(::ftruncate(fd, 8192), 0);
  const uint32_t ranks = 2;
  EXPECT_EQ(::pwrite(fd, &ranks, sizeof ranks, 0), static_cast<ssize_t>(sizeof ranks));  // header: num_ranks
  EXPECT_EQ(::pwrite(fd, &pid, sizeof pid, 4096), static_cast<ssize_t>(sizeof pid));     // rank 0's pid
  const timespec old[2] = {{::time(nullptr) - age_s, 0}, {::time(nullptr) - age_s, 0}};
  EXPECT_EQ(::futimens(fd, old), 0);
  ::close(fd);
  return name;
}
bool SegmentExists(const std::string& name) { return ::access(("/dev/shm" + name).c_str(), F_OK) == 0; }
}  // namespace

TEST(PluginProcessCommunicatorJoin, SegmentsOfProcessesThatDiedWhileJoiningAreRemoved) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // a pid that no longer runs
  const std::string dead = MakeSegment("0123456789abcdef0123456789abcd01", child, 3600);
  const std::string alive = MakeSegment("0123456789abcdef0123456789abcd02", ::getpid(), 3600);
  const std::string young = MakeSegment("0123456789abcdef0123456789abcd03", child, 0);
  Runtime a = MakeCpu(1), b = MakeCpu(1);
  TS_ASSERT_OK_AND_ASSIGN(auto id, a.create_collective_id());
  auto [ca, cb] = JoinBoth(a, {0}, b, {1}, 2, id);
  TS_ASSERT_OK(ca.status());
  TS_ASSERT_OK(cb.status());
  EXPECT_FALSE(SegmentExists(dead)) << "the segment of a process that died while joining was kept";
  EXPECT_TRUE(SegmentExists(alive)) << "a segment whose process runs was removed";
  EXPECT_TRUE(SegmentExists(young)) << "a segment too young to judge was removed";
  for (const std::string& n : {dead, alive, young}) ::shm_unlink(n.c_str());
}

TEST(PluginProcessCommunicatorJoin, ProcessesThatDisagreeOnTheSizeFail) {
  Runtime a = MakeCpu(1, 2), b = MakeCpu(1, 2);
  TS_ASSERT_OK_AND_ASSIGN(auto id, a.create_collective_id());
  auto fb = std::async(std::launch::async, [&] { return b.create_communicator(b.devices(), 3, {1}, id); });
  auto ca = a.create_communicator(a.devices(), 2, {0}, id);
  auto cb = fb.get();
  // Whichever came second names the disagreement; the first then fails too.
  ASSERT_FALSE(ca.ok());
  ASSERT_FALSE(cb.ok());
  const std::string both = ca.status().message() + " | " + cb.status().message();
  EXPECT_NE(both.find("disagree on the communicator's size"), std::string::npos) << both;
}

TEST(PluginProcessCommunicatorPolicy, TheEnvironmentChoosesAndCpuDefaultsToTheProvider) {
  Runtime a = MakeCpu(1);
  unsetenv("TESSERA_PROCESS_COLLECTIVES");
  TS_ASSERT_OK_AND_ASSIGN(bool use, UsePluginCollectives(a.devices()));
  EXPECT_FALSE(use) << "cpu buffers are used in place by MPI: the provider is the default";
  setenv("TESSERA_PROCESS_COLLECTIVES", "plugin", 1);
  TS_ASSERT_OK_AND_ASSIGN(use, UsePluginCollectives(a.devices()));
  EXPECT_TRUE(use);
  setenv("TESSERA_PROCESS_COLLECTIVES", "provider", 1);
  TS_ASSERT_OK_AND_ASSIGN(use, UsePluginCollectives(a.devices()));
  EXPECT_FALSE(use);
  setenv("TESSERA_PROCESS_COLLECTIVES", "nccl", 1);
  auto bad = UsePluginCollectives(a.devices());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'auto', 'plugin' or 'provider'"), std::string::npos);
  unsetenv("TESSERA_PROCESS_COLLECTIVES");
}

}  // namespace
}  // namespace tessera
