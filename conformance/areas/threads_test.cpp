// Area "threads": 8 host threads submitting at once, to private streams and
// to one shared stream, with events across threads and objects created and
// destroyed concurrently.  No work is lost or repeated and nothing
// deadlocks (the runner's time limit turns a deadlock into a failure).  Run
// the suite built with TESSERA_SANITIZE=thread to check for data races.
#include <atomic>
#include <thread>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

constexpr int kThreads = 8;

class Threads : public CtsTest {
 protected:
  // Runs body(t) on kThreads threads; failures inside are collected.
  template <typename Body>
  void RunThreads(Body body) {
    std::vector<std::thread> threads;
    std::vector<std::string> errors(kThreads);
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] { errors[t] = body(t); });
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  }
};

#define CTS_THREAD_OK(expr)                                            \
  do {                                                                 \
    ::tessera::Status _st = ::tessera::cts::ToStatus(expr);            \
    if (!_st.ok()) return std::string(#expr) + ": " + _st.ToString(); \
  } while (0)

TEST_F(Threads, PrivateStreams) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, kernel("mul_add_u32"));
  const uint64_t n = 512;
  const uint32_t launches = 200;
  std::vector<Buffer> bufs(kThreads);
  for (Buffer& b : bufs) {
    CTS_ASSERT_OK_AND_ASSIGN(b, device().allocate(n * 4));
    CTS_ASSERT_OK(tessera::memset(b, 0, 0, n * 4));
  }
  RunThreads([&](int t) -> std::string {
    StatusOr<Stream> s = device().create_stream();
    CTS_THREAD_OK(s);
    for (uint32_t i = 0; i < launches; ++i)
      CTS_THREAD_OK(s->launch(k, Dim(GroupsFor(n, GroupFor(k, 64))), Dim(GroupFor(k, 64)),
                              {KernelArg::buffer(bufs[t]), KernelArg::scalar(1u),
                               KernelArg::scalar(uint32_t(t + 1)), KernelArg::scalar(n)}));
    CTS_THREAD_OK(s->synchronize());
    return "";
  });
  for (int t = 0; t < kThreads; ++t) {
    CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(bufs[t], n));
    EXPECT_EQ(v, std::vector<uint32_t>(n, launches * (t + 1))) << "thread " << t << " lost work";
  }
}

TEST_F(Threads, SharedStream) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, kernel("count"));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer counters, device().allocate(kThreads * 4 + 4));
  CTS_ASSERT_OK(tessera::memset(counters, 0, 0, kThreads * 4 + 4));
  CTS_ASSERT_OK_AND_ASSIGN(Stream shared, device().create_stream());
  const uint32_t launches = 300;
  RunThreads([&](int t) -> std::string {
    for (uint32_t i = 0; i < launches; ++i) {
      CTS_THREAD_OK(shared.launch(k, Dim(2), Dim(1),
                                  {KernelArg::buffer(counters), KernelArg::scalar(uint32_t(t))}));
      if (i % 64 == 0) CTS_THREAD_OK(shared.synchronize());  // sync while others submit
    }
    return "";
  });
  CTS_ASSERT_OK(shared.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(counters, kThreads));
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(v[t], 2 * launches) << "launches of thread " << t << " lost or repeated";
}

TEST_F(Threads, SharedAndPrivateStreamsWithEvents) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, kernel("mul_add_u32"));
  CTS_ASSERT_OK_AND_ASSIGN(Kernel count, kernel("count"));
  CTS_ASSERT_OK_AND_ASSIGN(Stream shared, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Buffer counters, device().allocate(kThreads * 4));
  CTS_ASSERT_OK(tessera::memset(counters, 0, 0, kThreads * 4));
  const uint64_t n = 256;
  std::vector<Buffer> bufs(kThreads);
  for (Buffer& b : bufs) {
    CTS_ASSERT_OK_AND_ASSIGN(b, device().allocate(n * 4));
    CTS_ASSERT_OK(tessera::memset(b, 0, 0, n * 4));
  }
  RunThreads([&](int t) -> std::string {
    StatusOr<Stream> mine = device().create_stream();
    CTS_THREAD_OK(mine);
    for (int round = 0; round < 40; ++round) {
      StatusOr<Event> e = device().create_event(TS_EVENT_DISABLE_TIMING);
      CTS_THREAD_OK(e);
      CTS_THREAD_OK(mine->launch(k, Dim(GroupsFor(n, GroupFor(k, 64))), Dim(GroupFor(k, 64)),
                                 {KernelArg::buffer(bufs[t]), KernelArg::scalar(1u),
                                  KernelArg::scalar(1u), KernelArg::scalar(n)}));
      CTS_THREAD_OK(mine->record(*e));
      CTS_THREAD_OK(shared.wait(*e));
      CTS_THREAD_OK(shared.launch(count, Dim(1), Dim(1),
                                  {KernelArg::buffer(counters), KernelArg::scalar(uint32_t(t))}));
      CTS_THREAD_OK(e->destroy());  // pending record: must stay safe
    }
    CTS_THREAD_OK(mine->synchronize());
    return "";
  });
  CTS_ASSERT_OK(shared.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto c, Download<uint32_t>(counters, kThreads));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(c[t], 40u) << "thread " << t;
    CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(bufs[t], n));
    EXPECT_EQ(v, std::vector<uint32_t>(n, 40u)) << "thread " << t;
  }
}

TEST_F(Threads, ConcurrentCreateAndDestroy) {
  std::atomic<int> done{0};
  RunThreads([&](int t) -> std::string {
    for (int i = 0; i < 50; ++i) {
      StatusOr<Buffer> b = device().allocate(1024 + 64 * t);
      CTS_THREAD_OK(b);
      StatusOr<Stream> s = device().create_stream();
      CTS_THREAD_OK(s);
      StatusOr<Event> e = device().create_event();
      CTS_THREAD_OK(e);
      CTS_THREAD_OK(s->memset_async(*b, 0, uint8_t(t), 1024));
      CTS_THREAD_OK(s->record(*e));
      CTS_THREAD_OK(e->synchronize());
      std::vector<uint8_t> back(1024);
      CTS_THREAD_OK(tessera::copy(back.data(), *b, 1024));
      if (back != std::vector<uint8_t>(1024, uint8_t(t))) return std::string("wrong data");
      CTS_THREAD_OK(e->destroy());
      CTS_THREAD_OK(s->destroy());
      CTS_THREAD_OK(b->destroy());
    }
    done.fetch_add(1);
    return "";
  });
  EXPECT_EQ(done.load(), kThreads);
}

TEST_F(Threads, ConcurrentSynchronousCopies) {
  const size_t n = 1 << 16;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(n * kThreads));
  RunThreads([&](int t) -> std::string {
    std::vector<uint8_t> in(n, uint8_t(t * 17)), out(n);
    for (int i = 0; i < 30; ++i) {
      CTS_THREAD_OK(tessera::copy(MemoryRef(b, uint64_t(t) * n), in.data(), n));
      CTS_THREAD_OK(tessera::copy(out.data(), MemoryRef(b, uint64_t(t) * n), n));
      if (out != in) return std::string("copy mixed up with another thread's");
    }
    return "";
  });
}

TEST_F(Threads, DeviceSynchronizeWhileSubmitting) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel count, kernel("count"));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer counters, device().allocate(kThreads * 4));
  CTS_ASSERT_OK(tessera::memset(counters, 0, 0, kThreads * 4));
  RunThreads([&](int t) -> std::string {
    StatusOr<Stream> s = device().create_stream();
    CTS_THREAD_OK(s);
    for (int i = 0; i < 100; ++i) {
      CTS_THREAD_OK(s->launch(count, Dim(1), Dim(1),
                              {KernelArg::buffer(counters), KernelArg::scalar(uint32_t(t))}));
      if (t % 2 == 0 && i % 25 == 0) CTS_THREAD_OK(device().synchronize());
      if (t == 1 && i % 30 == 0) CTS_THREAD_OK(device().default_stream().synchronize());
    }
    CTS_THREAD_OK(s->synchronize());
    return "";
  });
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(counters, kThreads));
  EXPECT_EQ(v, std::vector<uint32_t>(kThreads, 100u));
}

}  // namespace
}  // namespace tessera::cts
