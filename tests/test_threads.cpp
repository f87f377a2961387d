// Many host threads using one runtime at once: shared and private streams,
// events across threads, allocation churn.  Counting: every launch must run
// exactly once, and the test must finish (no deadlock).
#include <thread>

#include "test_util.hpp"

namespace tessera {
namespace {

using testing::CpuTest;
using testing::Download;

class ThreadTest : public CpuTest {};

constexpr int kThreads = 8;
constexpr uint32_t kLaunchesPerStream = 100;
constexpr uint32_t kGroups = 4;

TEST_F(ThreadTest, SharedAndPrivateStreamsFromEightThreads) {
  Buffer counter = Alloc(4);
  TS_ASSERT_OK(memset(counter, 0, 0, 4));
  Stream shared = NewStream();
  Kernel count = kernel("count");
  std::vector<std::string> errors(kThreads);

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto own = device().create_stream();
      if (!own.ok()) {
        errors[t] = own.status().ToString();
        return;
      }
      for (uint32_t i = 0; i < kLaunchesPerStream; ++i) {
        for (const Stream* s : {&shared, &own.value()}) {
          Status st = s->launch(count, {kGroups, 1, 1}, {1, 1, 1},
                                {KernelArg::buffer(counter)});
          if (!st.ok()) {
            errors[t] = st.ToString();
            return;
          }
        }
      }
      Status st = own->synchronize();
      if (st.ok()) st = own->destroy();
      if (!st.ok()) errors[t] = st.ToString();
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  TS_ASSERT_OK(shared.synchronize());
  TS_ASSERT_OK(device().synchronize());
  EXPECT_EQ(Download<uint32_t>(counter, 1)[0],
            kThreads * kLaunchesPerStream * 2 * kGroups);
}

TEST_F(ThreadTest, EventsAcrossThreads) {
  // Thread t fills its slice on its own stream and records an event; the
  // main thread's stream waits on all events, then sums.
  constexpr uint32_t n = 64;
  Buffer data = Alloc(kThreads * n * 4);
  std::vector<Event> events;
  for (int t = 0; t < kThreads; ++t) events.push_back(NewEvent());
  Kernel fill = kernel("fill");
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto s = device().create_stream();
      if (!s.ok()) {
        errors[t] = s.status().ToString();
        return;
      }
      Status st = s->launch(fill, {2, 1, 1}, {32, 1, 1},
                            {KernelArg::buffer(data, uint64_t(t) * n * 4),
                             KernelArg::scalar(float(t + 1)),
                             KernelArg::scalar(n)});
      if (st.ok()) st = s->record(events[t]);
      if (st.ok()) st = s->destroy();  // pending work still completes
      if (!st.ok()) errors[t] = st.ToString();
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  Stream main_stream = NewStream();
  for (const Event& e : events) TS_ASSERT_OK(main_stream.wait(e));
  TS_ASSERT_OK_AND_ASSIGN(void* host, runtime_.pinned_malloc(kThreads * n * 4));
  TS_ASSERT_OK(main_stream.copy_async(host, data, kThreads * n * 4));
  TS_ASSERT_OK(main_stream.synchronize());
  const float* v = static_cast<const float*>(host);
  for (int t = 0; t < kThreads; ++t)
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(v[t * n + i], float(t + 1));
  TS_EXPECT_OK(runtime_.pinned_free(host));
}

TEST_F(ThreadTest, ConcurrentAllocationAndCopies) {
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto b = device().allocate(4096);
        if (!b.ok()) {
          errors[t] = b.status().ToString();
          return;
        }
        std::vector<int> in(1024, t * 1000 + i), out(1024);
        Status st = copy(*b, in.data(), 4096);
        if (st.ok()) st = copy(out.data(), *b, 4096);
        if (st.ok() && out != in) st = Status(StatusCode::kDataLoss, "mismatch");
        if (st.ok()) st = b->destroy();
        if (!st.ok()) {
          errors[t] = st.ToString();
          return;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

}  // namespace
}  // namespace tessera
