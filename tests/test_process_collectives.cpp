// Communicators across processes as the core sees them
// (Communicator::FromProvider, tessera/process_group.hpp), with a fake
// provider standing for the other processes: what the core checks before a
// provider runs (sizes against every rank, roots, devices), what it hands
// the provider, and the per-plugin provider tessera-info reports.  Runs in
// every build, with or without MPI (the MPI provider itself: tests/mpi).
#include <cstring>

#include "tessera/process_group.hpp"
#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;

// Pretends to be `ranks` ranks of which the caller holds some; records the
// last request and writes `fill` into every recv.
class FakeProvider : public CollectiveProvider {
 public:
  explicit FakeProvider(size_t ranks) : ranks_(ranks) {}
  std::string name() const override { return "fake"; }
  size_t size() const override { return ranks_; }
  Status Run(const CollectiveRequest& q) override {
    ++calls;
    last_op = q.op;
    last_count = q.count;
    last_root = q.root;
    last_local = q.send->size();
    for (const MemoryRef& r : *q.recv) {
      std::vector<uint8_t> bytes(r.buffer->size() - r.offset, fill);
      TESSERA_RETURN_IF_ERROR(copy(r, bytes.data(), bytes.size()));
    }
    return fail ? Status(StatusCode::kFailedPrecondition, "the ranks disagree") : Status::Ok();
  }
  size_t ranks_;
  int calls = 0;
  TsCollectiveOp last_op = TS_COLLECTIVE_ALL_REDUCE;
  uint64_t last_count = 0;
  uint32_t last_root = 0;
  size_t last_local = 0;
  uint8_t fill = 7;
  bool fail = false;
};

class ProcessCollectivesTest : public CpuTest {
 protected:
  int NumDevices() const override { return 2; }
};

TEST_F(ProcessCollectivesTest, ProviderGetsTheLocalRanksAndTheSizesCountEveryRank) {
  auto fake = std::make_shared<FakeProvider>(6);  // 2 here, 4 elsewhere
  Communicator comm = Communicator::FromProvider(runtime_.devices(), fake);
  ASSERT_TRUE(comm.valid());
  EXPECT_EQ(comm.size(), 6u);
  EXPECT_EQ(comm.devices().size(), 2u);
  EXPECT_EQ(comm.provider(), "fake");
  std::vector<Stream> streams = {device(0).default_stream(), device(1).default_stream()};
  const uint64_t count = 16;
  // all_gather: recv must hold count * 6 (every rank), not count * 2.
  std::vector<Buffer> send = {Alloc(count * 4, TS_BUFFER_DEVICE, 0), Alloc(count * 4, TS_BUFFER_DEVICE, 1)};
  std::vector<Buffer> small = {Alloc(count * 2 * 4, TS_BUFFER_DEVICE, 0), Alloc(count * 2 * 4, TS_BUFFER_DEVICE, 1)};
  Status st = comm.all_gather(send, small, count, TS_DTYPE_F32, streams);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.ToString();
  EXPECT_EQ(fake->calls, 0);
  std::vector<Buffer> big = {Alloc(count * 6 * 4, TS_BUFFER_DEVICE, 0), Alloc(count * 6 * 4, TS_BUFFER_DEVICE, 1)};
  TS_EXPECT_OK(comm.all_gather(send, big, count, TS_DTYPE_F32, streams));
  EXPECT_EQ(fake->calls, 1);
  EXPECT_EQ(fake->last_op, TS_COLLECTIVE_ALL_GATHER);
  EXPECT_EQ(fake->last_local, 2u);
  uint8_t first = 0;
  TS_EXPECT_OK(copy(&first, big[1], 1));
  EXPECT_EQ(first, 7);
  // broadcast: a root on another process is a rank of the communicator.
  TS_EXPECT_OK(comm.broadcast(send, send, count, TS_DTYPE_F32, 5, streams));
  EXPECT_EQ(fake->last_root, 5u);
  st = comm.broadcast(send, send, count, TS_DTYPE_F32, 6, streams);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  // One buffer per LOCAL rank: passing 6 is wrong, and the message says so.
  std::vector<Buffer> six(6, send[0]);
  std::vector<Stream> six_streams(6, streams[0]);
  st = comm.all_reduce(six, six, count, TS_DTYPE_F32, TS_REDUCE_SUM, six_streams);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("2 ranks in this process (6 in all)"), std::string::npos) << st.ToString();
  // A provider's error comes back annotated with the op and the provider.
  fake->fail = true;
  st = comm.all_reduce(send, send, count, TS_DTYPE_F32, TS_REDUCE_SUM, streams, true);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.ToString().find("all_reduce across processes (fake)"), std::string::npos) << st.ToString();
  TS_EXPECT_OK(comm.destroy());
  EXPECT_FALSE(comm.valid());
  st = comm.all_gather(send, big, count, TS_DTYPE_F32, streams);
  EXPECT_EQ(st.code(), StatusCode::kInvalidHandle);
}

TEST(ProcessCollectivesFor, MpiForEveryPluginInPlaceOnlyForCpu) {
  EXPECT_EQ(ProcessCollectivesFor("cpu").provider, "mpi");
  EXPECT_EQ(ProcessCollectivesFor("cpu").data_path, "host memory in place");
  EXPECT_EQ(ProcessCollectivesFor("vulkan").data_path, "staged through host memory");
}

}  // namespace
}  // namespace tessera
