// Collectives across the CPU plugin's devices (TESSERA_CPU_DEVICES=4):
// all_reduce (sum/max/min on f32/f64/i32), broadcast, all_gather,
// reduce_scatter, deterministic mode and bad sizes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;
using testing::Upload;

constexpr int kRanks = 4;

class CollectiveTest : public CpuTest {
 protected:
  int NumDevices() const override { return kRanks; }
  void SetUp() override {
    CpuTest::SetUp();
    if (HasFatalFailure()) return;
    auto comm = runtime_.create_communicator(runtime_.devices());
    ASSERT_TRUE(comm.ok()) << comm.status().ToString();
    comm_ = std::move(comm).value();
    for (int r = 0; r < kRanks; ++r) streams_.push_back(NewStream({}, r));
  }
  std::vector<Buffer> AllocAll(uint64_t bytes) {
    std::vector<Buffer> out;
    for (int r = 0; r < kRanks; ++r) out.push_back(Alloc(bytes, TS_BUFFER_DEVICE, r));
    return out;
  }
  void SyncAll() {
    for (const Stream& s : streams_) TS_EXPECT_OK(s.synchronize());
  }
  // Value of element i on rank r, of type T.
  template <typename T>
  static T Value(int r, size_t i) {
    return static_cast<T>((r + 1) * 3 + static_cast<int>(i % 17) - 20);
  }
  template <typename T>
  void AllReduceCase(TsDataType dtype, TsReduceOp op) {
    constexpr size_t n = 333;
    auto send = AllocAll(n * sizeof(T)), recv = AllocAll(n * sizeof(T));
    for (int r = 0; r < kRanks; ++r) {
      std::vector<T> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = Value<T>(r, i);
      Upload(send[r], v);
    }
    TS_ASSERT_OK(comm_.all_reduce(send, recv, n, dtype, op, streams_));
    SyncAll();
    for (int r = 0; r < kRanks; ++r) {
      auto got = Download<T>(recv[r], n);
      for (size_t i = 0; i < n; ++i) {
        T expected = Value<T>(0, i);
        for (int q = 1; q < kRanks; ++q) {
          T v = Value<T>(q, i);
          if (op == TS_REDUCE_SUM) expected += v;
          if (op == TS_REDUCE_MAX) expected = std::max(expected, v);
          if (op == TS_REDUCE_MIN) expected = std::min(expected, v);
        }
        ASSERT_EQ(got[i], expected) << "rank " << r << " element " << i;
      }
    }
  }

  Communicator comm_;
  std::vector<Stream> streams_;
};

TEST_F(CollectiveTest, CommunicatorSpansAllDevices) {
  EXPECT_EQ(comm_.size(), static_cast<size_t>(kRanks));
  ASSERT_EQ(comm_.devices().size(), static_cast<size_t>(kRanks));
  const uint32_t caps = device().info().collectives;
  EXPECT_TRUE(caps & TS_COLLECTIVE_CAP_ALL_REDUCE);
  EXPECT_TRUE(caps & TS_COLLECTIVE_CAP_BROADCAST);
  EXPECT_TRUE(caps & TS_COLLECTIVE_CAP_ALL_GATHER);
  EXPECT_TRUE(caps & TS_COLLECTIVE_CAP_REDUCE_SCATTER);
  EXPECT_TRUE(caps & TS_COLLECTIVE_CAP_DETERMINISTIC);
}

TEST_F(CollectiveTest, AllReduceSumF32) { AllReduceCase<float>(TS_DTYPE_F32, TS_REDUCE_SUM); }
TEST_F(CollectiveTest, AllReduceMaxF32) { AllReduceCase<float>(TS_DTYPE_F32, TS_REDUCE_MAX); }
TEST_F(CollectiveTest, AllReduceMinF32) { AllReduceCase<float>(TS_DTYPE_F32, TS_REDUCE_MIN); }
TEST_F(CollectiveTest, AllReduceSumF64) { AllReduceCase<double>(TS_DTYPE_F64, TS_REDUCE_SUM); }
TEST_F(CollectiveTest, AllReduceMaxF64) { AllReduceCase<double>(TS_DTYPE_F64, TS_REDUCE_MAX); }
TEST_F(CollectiveTest, AllReduceMinF64) { AllReduceCase<double>(TS_DTYPE_F64, TS_REDUCE_MIN); }
TEST_F(CollectiveTest, AllReduceSumI32) { AllReduceCase<int32_t>(TS_DTYPE_I32, TS_REDUCE_SUM); }
TEST_F(CollectiveTest, AllReduceMaxI32) { AllReduceCase<int32_t>(TS_DTYPE_I32, TS_REDUCE_MAX); }
TEST_F(CollectiveTest, AllReduceMinI32) { AllReduceCase<int32_t>(TS_DTYPE_I32, TS_REDUCE_MIN); }

TEST_F(CollectiveTest, AllReduceInPlace) {
  constexpr size_t n = 100;
  auto bufs = AllocAll(n * 4);
  for (int r = 0; r < kRanks; ++r) Upload(bufs[r], std::vector<int32_t>(n, r + 1));
  TS_ASSERT_OK(comm_.all_reduce(bufs, bufs, n, TS_DTYPE_I32, TS_REDUCE_SUM, streams_));
  SyncAll();
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(Download<int32_t>(bufs[r], n), std::vector<int32_t>(n, 10));
}

TEST_F(CollectiveTest, Broadcast) {
  constexpr size_t n = 257;
  const uint32_t root = 2;
  auto send = AllocAll(n * 4), recv = AllocAll(n * 4);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = float(r * 1000 + i);
    Upload(send[r], v);
  }
  TS_ASSERT_OK(comm_.broadcast(send, recv, n, TS_DTYPE_F32, root, streams_));
  SyncAll();
  for (int r = 0; r < kRanks; ++r) {
    auto got = Download<float>(recv[r], n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], float(root * 1000 + i)) << "rank " << r;
  }
}

TEST_F(CollectiveTest, BroadcastBadRootIsAnError) {
  auto send = AllocAll(64), recv = AllocAll(64);
  EXPECT_FALSE(comm_.broadcast(send, recv, 16, TS_DTYPE_F32, kRanks, streams_).ok());
}

TEST_F(CollectiveTest, AllGather) {
  constexpr size_t n = 50;
  auto send = AllocAll(n * 4), recv = AllocAll(n * kRanks * 4);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<int32_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = r * 100 + int(i);
    Upload(send[r], v);
  }
  TS_ASSERT_OK(comm_.all_gather(send, recv, n, TS_DTYPE_I32, streams_));
  SyncAll();
  for (int r = 0; r < kRanks; ++r) {
    auto got = Download<int32_t>(recv[r], n * kRanks);
    for (int q = 0; q < kRanks; ++q)
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(got[q * n + i], q * 100 + int(i)) << "rank " << r;
  }
}

TEST_F(CollectiveTest, ReduceScatter) {
  constexpr size_t n = 40;  // per rank in recv
  auto send = AllocAll(n * kRanks * 8), recv = AllocAll(n * 8);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<double> v(n * kRanks);
    for (size_t i = 0; i < v.size(); ++i) v[i] = double(r + 1) * double(i);
    Upload(send[r], v);
  }
  TS_ASSERT_OK(comm_.reduce_scatter(send, recv, n, TS_DTYPE_F64, TS_REDUCE_SUM,
                                    streams_));
  SyncAll();
  // sum over ranks of (r+1)*i = 10 * i, rank r gets block r.
  for (int r = 0; r < kRanks; ++r) {
    auto got = Download<double>(recv[r], n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], 10.0 * double(r * n + i)) << "rank " << r;
  }
}

TEST_F(CollectiveTest, DeterministicAllReduceIsBitwiseIdentical) {
  // Values of very different magnitudes: the sum depends on association, so
  // only a fixed reduction tree gives the same bits every time.
  constexpr size_t n = 4096;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  auto send = AllocAll(n * 4), recv = AllocAll(n * 4);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<float> v(n);
    for (float& x : v) x = std::ldexp(mantissa(rng), exponent(rng));
    Upload(send[r], v);
  }
  std::vector<std::vector<float>> first;
  for (int run = 0; run < 10; ++run) {
    TS_ASSERT_OK(comm_.all_reduce(send, recv, n, TS_DTYPE_F32, TS_REDUCE_SUM,
                                  streams_, /*deterministic=*/true));
    SyncAll();
    std::vector<std::vector<float>> results;
    for (int r = 0; r < kRanks; ++r) results.push_back(Download<float>(recv[r], n));
    // Every rank has the same bits.
    for (int r = 1; r < kRanks; ++r)
      ASSERT_EQ(std::memcmp(results[0].data(), results[r].data(), n * 4), 0)
          << "rank " << r << " differs from rank 0 in run " << run;
    if (run == 0)
      first = results;
    else
      ASSERT_EQ(std::memcmp(first[0].data(), results[0].data(), n * 4), 0)
          << "run " << run << " differs from run 0";
  }
}

TEST_F(CollectiveTest, DeterministicReduceScatterIsBitwiseIdentical) {
  constexpr size_t n = 512;
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> d(-1e10, 1e10);
  auto send = AllocAll(n * kRanks * 8), recv = AllocAll(n * 8);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<double> v(n * kRanks);
    for (double& x : v) x = d(rng) * std::ldexp(1.0, int(rng() % 40) - 20);
    Upload(send[r], v);
  }
  std::vector<double> first;
  for (int run = 0; run < 10; ++run) {
    TS_ASSERT_OK(comm_.reduce_scatter(send, recv, n, TS_DTYPE_F64,
                                      TS_REDUCE_SUM, streams_, true));
    SyncAll();
    auto got = Download<double>(recv[1], n);
    if (run == 0)
      first = got;
    else
      ASSERT_EQ(std::memcmp(first.data(), got.data(), n * 8), 0) << run;
  }
}

TEST_F(CollectiveTest, CountLargerThanBuffersIsAnError) {
  auto send = AllocAll(64), recv = AllocAll(64);  // 16 floats
  EXPECT_FALSE(comm_.all_reduce(send, recv, 17, TS_DTYPE_F32, TS_REDUCE_SUM,
                                streams_).ok());
  // all_gather needs count * ranks in recv.
  EXPECT_FALSE(comm_.all_gather(send, recv, 16, TS_DTYPE_F32, streams_).ok());
  // reduce_scatter needs count * ranks in send.
  EXPECT_FALSE(comm_.reduce_scatter(send, recv, 16, TS_DTYPE_F32,
                                    TS_REDUCE_SUM, streams_).ok());
}

// Parts of buffers (MemoryRefs at offsets): what an overlapped program's
// row blocks are.  Only [offset, offset + count) moves; the rest of each
// buffer is untouched.
TEST_F(CollectiveTest, PartsOfBuffersAtOffsets) {
  constexpr size_t n = 64, part = 16, at = 32;  // floats
  auto send = AllocAll(n * 4), recv = AllocAll(n * 4);
  for (int r = 0; r < kRanks; ++r) {
    Upload(send[r], std::vector<float>(n, static_cast<float>(r + 1)));
    Upload(recv[r], std::vector<float>(n, -1.0f));
  }
  std::vector<MemoryRef> s, d;
  for (int r = 0; r < kRanks; ++r) {
    s.emplace_back(send[r], at * 4);
    d.emplace_back(recv[r], (at - 8) * 4);
  }
  TS_ASSERT_OK(comm_.all_reduce(s, d, part, TS_DTYPE_F32, TS_REDUCE_SUM, streams_, true));
  SyncAll();
  for (int r = 0; r < kRanks; ++r) {
    auto got = Download<float>(recv[r], n);
    for (size_t i = 0; i < n; ++i) {
      const bool inside = i >= at - 8 && i < at - 8 + part;
      EXPECT_EQ(got[i], inside ? 10.0f : -1.0f) << "rank " << r << " element " << i;
    }
  }
  // all_gather into the second half of recv.
  std::vector<MemoryRef> small, half;
  for (int r = 0; r < kRanks; ++r) {
    small.emplace_back(send[r], 0);
    half.emplace_back(recv[r], (n - kRanks * 4) * 4);
  }
  TS_ASSERT_OK(comm_.all_gather(small, half, 4, TS_DTYPE_F32, streams_));
  SyncAll();
  auto got = Download<float>(recv[2], n);
  for (int q = 0; q < kRanks; ++q)
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(got[n - kRanks * 4 + q * 4 + i], static_cast<float>(q + 1));
}

TEST_F(CollectiveTest, BadPartsAreErrors) {
  auto send = AllocAll(64), recv = AllocAll(64);  // 16 floats
  std::vector<MemoryRef> s, past, host;
  std::vector<float> h(16);
  for (int r = 0; r < kRanks; ++r) {
    s.emplace_back(send[r], 0);
    past.emplace_back(recv[r], 8);  // 14 floats left
    host.emplace_back(h.data());
  }
  Status st = comm_.all_reduce(s, past, 16, TS_DTYPE_F32, TS_REDUCE_SUM, streams_);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("after offset 8"), std::string::npos) << st.ToString();
  past[1].offset = UINT64_MAX;  // no overflow into a small size
  EXPECT_EQ(comm_.all_reduce(s, past, 1, TS_DTYPE_F32, TS_REDUCE_SUM, streams_).code(), StatusCode::kOutOfRange);
  st = comm_.all_reduce(s, host, 16, TS_DTYPE_F32, TS_REDUCE_SUM, streams_);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("host pointer"), std::string::npos) << st.ToString();
}

TEST_F(CollectiveTest, CountZeroIsAnError) {
  auto send = AllocAll(64), recv = AllocAll(64);
  EXPECT_FALSE(comm_.all_reduce(send, recv, 0, TS_DTYPE_F32, TS_REDUCE_SUM,
                                streams_).ok());
}

TEST_F(CollectiveTest, WrongNumberOfBuffersOrStreamsIsAnError) {
  auto send = AllocAll(64), recv = AllocAll(64);
  std::vector<Buffer> short_send(send.begin(), send.begin() + 3);
  EXPECT_FALSE(comm_.all_reduce(short_send, recv, 16, TS_DTYPE_F32,
                                TS_REDUCE_SUM, streams_).ok());
  std::vector<Stream> short_streams(streams_.begin(), streams_.begin() + 2);
  EXPECT_FALSE(comm_.all_reduce(send, recv, 16, TS_DTYPE_F32, TS_REDUCE_SUM,
                                short_streams).ok());
}

TEST_F(CollectiveTest, BufferOnTheWrongDeviceIsAnError) {
  auto send = AllocAll(64), recv = AllocAll(64);
  std::swap(send[0], send[1]);  // rank 0 gets device 1's buffer
  EXPECT_FALSE(comm_.all_reduce(send, recv, 16, TS_DTYPE_F32, TS_REDUCE_SUM,
                                streams_).ok());
}

TEST_F(CollectiveTest, SubsetCommunicator) {
  std::vector<Device> two = {device(1), device(3)};
  TS_ASSERT_OK_AND_ASSIGN(Communicator comm, runtime_.create_communicator(two));
  EXPECT_EQ(comm.size(), 2u);
  std::vector<Buffer> bufs = {Alloc(16, TS_BUFFER_DEVICE, 1),
                              Alloc(16, TS_BUFFER_DEVICE, 3)};
  Upload(bufs[0], std::vector<int32_t>{1, 2, 3, 4});
  Upload(bufs[1], std::vector<int32_t>{10, 20, 30, 40});
  std::vector<Stream> streams = {streams_[1], streams_[3]};
  TS_ASSERT_OK(comm.all_reduce(bufs, bufs, 4, TS_DTYPE_I32, TS_REDUCE_MAX, streams));
  for (const Stream& s : streams) TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<int32_t>(bufs[0], 4), (std::vector<int32_t>{10, 20, 30, 40}));
  EXPECT_EQ(Download<int32_t>(bufs[1], 4), (std::vector<int32_t>{10, 20, 30, 40}));
}

}  // namespace
}  // namespace tessera
