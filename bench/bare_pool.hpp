// BarePool: the reference the launch round trip is compared against.
//
// A plain thread pool as anyone would write it in an afternoon: one
// mutex-protected deque of std::function, a condition variable to wake the
// workers, and (in RunAndWait) a second mutex/condvar pair to hand the result
// back.  No spinning, no lock-free tricks: this is the cost a stream built on
// a mutex/condvar queue cannot beat by much, so "within 1.5x of the bare pool"
// means the runtime adds little on top of the hand-off itself.
//
// Thread-safety: Submit and RunAndWait may be called from any thread.
#ifndef TESSERA_BENCH_BARE_POOL_HPP_
#define TESSERA_BENCH_BARE_POOL_HPP_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tessera_bench {

class BarePool {
 public:
  explicit BarePool(unsigned num_workers) {
    if (num_workers == 0) num_workers = 1;
    workers_.reserve(num_workers);
    for (unsigned i = 0; i < num_workers; ++i)
      workers_.emplace_back([this] { WorkerLoop(); });
  }
  ~BarePool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  BarePool(const BarePool&) = delete;
  BarePool& operator=(const BarePool&) = delete;

  void Submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

  // Submits `task` and blocks until a worker has run it: one round trip.
  template <typename F>
  void RunAndWait(F&& task) {
    std::mutex done_mutex;
    std::condition_variable done_cv;
    bool done = false;
    Submit([&] {
      task();
      {
        std::lock_guard<std::mutex> lock(done_mutex);
        done = true;
      }
      done_cv.notify_one();
    });
    std::unique_lock<std::mutex> lock(done_mutex);
    done_cv.wait(lock, [&] { return done; });
  }

 private:
  void WorkerLoop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping and drained
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace tessera_bench

#endif  // TESSERA_BENCH_BARE_POOL_HPP_
