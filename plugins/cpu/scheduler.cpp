// Worker pool, stream queues and stride scheduling (see scheduler.hpp).
#include "scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TS_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define TS_CPU_RELAX() asm volatile("yield")
#else
#define TS_CPU_RELAX() ((void)0)
#endif

namespace tessera::cpu {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSpin = std::chrono::microseconds(40);        // idle worker / waiter spin
constexpr auto kHoldLimit = std::chrono::microseconds(2000);  // longest fairness hold
constexpr int kMaxSpinners = 1;

// Spins (pause, then yield so a 2-core machine still runs the host thread)
// until pred() or the spin budget is spent.
template <class Pred>
bool spin_until(Pred pred, Clock::duration budget) {
  for (int i = 0; i < 64; ++i) {
    if (pred()) return true;
    TS_CPU_RELAX();
  }
  const auto deadline = Clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 16; ++i) {
      if (pred()) return true;
      TS_CPU_RELAX();
    }
    if (Clock::now() >= deadline) return pred();
    std::this_thread::yield();
  }
}

}  // namespace

NopOp* NopOp::instance() {
  static NopOp op;
  return &op;
}

void DepList::add(std::shared_ptr<StreamState> s, uint64_t value) {
  // Same stream twice: keep the larger value.
  for (size_t i = 0; i < n_; ++i) {
    Dep& d = i < kInline ? inline_[i] : more_[i - kInline];
    if (d.stream == s) {
      d.value = std::max(d.value, value);
      return;
    }
  }
  if (n_ < kInline) {
    inline_[n_] = Dep{std::move(s), value};
  } else {
    more_.push_back(Dep{std::move(s), value});
  }
  ++n_;
}

void DepList::clear() {
  for (size_t i = 0; i < std::min(n_, kInline); ++i) inline_[i].stream.reset();
  more_.clear();
  n_ = 0;
}

Scheduler::Scheduler(unsigned workers) {
  if (workers == 0) workers = 1;
  threads_.reserve(workers);
  try {
    for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this, i] { worker_main(i); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_) t.join();
    throw;
  }
}

Scheduler::~Scheduler() {
  wait_all_idle();
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    epoch_.fetch_add(1, std::memory_order_release);
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void Scheduler::wait_all_idle() {
  std::unique_lock<std::mutex> lk(mu_);
  ++waiters_;
  done_cv_.wait(lk, [&] { return active_.empty(); });
  --waiters_;
}

void Scheduler::activate_locked(const std::shared_ptr<StreamState>& s) {
  // Raise the pass of a stream waking from idle to the minimum of the busy
  // ones, so idle time is not banked as credit.
  double min_pass = std::numeric_limits<double>::infinity();
  for (const auto& a : active_) min_pass = std::min(min_pass, a->pass);
  if (min_pass != std::numeric_limits<double>::infinity() && s->pass < min_pass)
    s->pass = min_pass;
  s->active = true;
  active_.push_back(s);
}

void Scheduler::submit_locked(const std::shared_ptr<StreamState>& s, Task* t) {
  t->stream = s.get();
  t->seq = s->submitted.load(std::memory_order_relaxed) + 1;
  s->submitted.store(t->seq, std::memory_order_release);
  t->next = nullptr;
  if (s->tail) {
    s->tail->next = t;
  } else {
    s->head = t;
  }
  s->tail = t;
  if (!s->active) activate_locked(s);
  epoch_.fetch_add(1, std::memory_order_release);
  if (sleepers_ > 0) {
    if (t->items > 1) {
      work_cv_.notify_all();
    } else if (spinners_.load(std::memory_order_relaxed) == 0) {
      work_cv_.notify_one();
    }
  }
}

bool Scheduler::deps_ready(const Task& t) const {
  for (size_t i = 0; i < t.deps.size(); ++i) {
    const Dep& d = t.deps[i];
    if (d.stream->completed.load(std::memory_order_acquire) < d.value) return false;
  }
  return true;
}

Scheduler::Pick Scheduler::pick_locked(Claim& c, bool allow_hold) {
  StreamState* best = nullptr;
  for (const auto& sp : active_) {
    StreamState* s = sp.get();
    Task* h = s->head;
    if (h == nullptr || h->claimed >= h->items) continue;
    if (!h->ready) {
      if (!deps_ready(*h)) continue;
      h->ready = true;
    }
    if (best == nullptr || s->priority > best->priority ||
        (s->priority == best->priority && s->pass < best->pass))
      best = s;
  }
  if (best == nullptr) return Pick::kNothing;

  if (allow_hold) {
    // Is a same-priority stream with a lower pass backlogged behind a head
    // that is running right now?  Then wait for it instead (see header).
    for (const auto& sp : active_) {
      const StreamState* s = sp.get();
      const Task* h = s->head;
      if (s == best || s->priority != best->priority || s->pass >= best->pass) continue;
      if (h != nullptr && h->claimed == h->items && h->next != nullptr &&
          h->done.load(std::memory_order_relaxed) < h->items)
        return Pick::kHold;
    }
  }

  Task* h = best->head;
  const uint32_t remaining = h->items - h->claimed;
  const uint32_t per = std::max<uint32_t>(1, h->items / (4 * worker_count()));
  const uint32_t n = std::min(remaining, per);
  c.task = h;
  c.begin = h->claimed;
  c.end = h->claimed + n;
  h->claimed += n;
  best->pass += static_cast<double>(n) / best->weight;
  return Pick::kGot;
}

uint64_t Scheduler::stamp_tail_locked(StreamState& s,
                                      std::shared_ptr<std::atomic<int64_t>> stamp) {
  // The tail is not complete: complete_locked pops the head and clears the
  // tail with the last task, under this mutex.
  if (s.tail == nullptr) return 0;
  if (stamp) {
    if (!s.tail->stamp)
      s.tail->stamp = std::move(stamp);
    else
      s.tail->more_stamps.push_back(std::move(stamp));
  }
  return s.tail->seq;
}

bool Scheduler::stamp_tail_locked(StreamState& s, uint64_t* caller_stamp) {
  if (s.tail == nullptr) return false;
  if (!s.tail->caller_stamp)
    s.tail->caller_stamp = caller_stamp;
  else
    s.tail->more_caller_stamps.push_back(caller_stamp);
  return true;
}

Task* Scheduler::complete_locked(Task* t) {
  StreamState* s = t->stream;
  if (t->stamp || t->caller_stamp) {
    const int64_t now = steady_now_ns();
    // `completed` below publishes the event stores (release); the caller's
    // memory is polled, so it gets a release store of its own.
    if (t->stamp) {
      t->stamp->store(now, std::memory_order_relaxed);
      t->stamp.reset();
      for (auto& stamp : t->more_stamps) stamp->store(now, std::memory_order_relaxed);
      t->more_stamps.clear();
    }
    if (t->caller_stamp) {
      __atomic_store_n(t->caller_stamp, static_cast<uint64_t>(now), __ATOMIC_RELEASE);
      t->caller_stamp = nullptr;
      for (uint64_t* slot : t->more_caller_stamps)
        __atomic_store_n(slot, static_cast<uint64_t>(now), __ATOMIC_RELEASE);
      t->more_caller_stamps.clear();
    }
  }
  // Tasks of a stream complete in order: t is the head.
  s->head = t->next;
  if (s->head == nullptr) s->tail = nullptr;
  s->completed.store(t->seq, std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_release);
  if (s->head == nullptr) {
    s->active = false;
    for (size_t i = 0; i < active_.size(); ++i) {
      if (active_[i].get() == s) {
        // The stream may die here if its handle is gone; nothing touches it after.
        std::swap(active_[i], active_.back());
        active_.pop_back();
        break;
      }
    }
  }
  if (waiters_ > 0) done_cv_.notify_all();
  if (sleepers_ > 0 && !active_.empty()) work_cv_.notify_all();
  return t;
}

void Scheduler::complete_manual(Task* t) {
  if (t->manual_refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  Task* done;
  {
    std::lock_guard<std::mutex> lk(mu_);
    done = complete_locked(t);
  }
  done->release(done);
}

void Scheduler::wait(StreamState& s, uint64_t value) {
  auto reached = [&] { return s.completed.load(std::memory_order_acquire) >= value; };
  if (reached()) return;
  if (spin_until(reached, kSpin)) return;
  std::unique_lock<std::mutex> lk(mu_);
  ++waiters_;
  done_cv_.wait(lk, reached);
  --waiters_;
}

void Scheduler::idle_wait(std::unique_lock<std::mutex>& lk, bool hold) {
  // Spin without the lock while the epoch stays put, then sleep.
  const uint64_t seen = epoch_.load(std::memory_order_acquire);
  if (spinners_.load(std::memory_order_relaxed) < kMaxSpinners) {
    spinners_.fetch_add(1, std::memory_order_relaxed);
    lk.unlock();
    const bool changed =
        spin_until([&] { return epoch_.load(std::memory_order_acquire) != seen; }, kSpin);
    lk.lock();
    spinners_.fetch_sub(1, std::memory_order_relaxed);
    if (changed) return;
  }
  if (epoch_.load(std::memory_order_acquire) != seen || stop_) return;
  ++sleepers_;
  if (hold) {
    work_cv_.wait_for(lk, kHoldLimit);
  } else {
    work_cv_.wait(lk);
  }
  --sleepers_;
}

void Scheduler::worker_main(unsigned index) {
  WorkerContext ctx;
  ctx.index = index;
  ctx.shared_memory = std::aligned_alloc(64, kSharedMemoryPerGroup);
  std::unique_lock<std::mutex> lk(mu_);
  Clock::time_point hold_since{};
  bool holding = false;
  Task* to_release = nullptr;  // completed task, freed once the lock is dropped
  auto release_unlocked = [&] {
    if (to_release) {
      Task* t = to_release;
      to_release = nullptr;
      lk.unlock();
      t->release(t);
      lk.lock();
    }
  };
  for (;;) {
    Claim c;
    bool allow_hold = !holding || Clock::now() - hold_since < kHoldLimit;
    Pick p = pick_locked(c, allow_hold);
    if (p == Pick::kGot) {
      holding = false;
      // Chain wake-up: submit_locked skips notify while a worker spins, and
      // that spinner may take only one of several tasks submitted in a burst.
      // Whoever claims work while others sleep and more may be ready wakes
      // one more, so ready work never waits behind a long kernel.
      if (sleepers_ > 0 && (active_.size() > 1 || c.end < c.task->items))
        work_cv_.notify_one();
      lk.unlock();
      if (to_release) {
        to_release->release(to_release);
        to_release = nullptr;
      }
      Task* t = c.task;
      t->op->run(*t, c.begin, c.end, ctx);
      const uint32_t n = c.end - c.begin;
      // Read the task's fields BEFORE publishing our items: once done reaches
      // items, the worker that finished last may complete and free the task
      // (graph launch slabs), so `t` must not be touched after the fetch_add
      // unless we are that worker.
      const uint32_t items = t->items;
      const bool manual = t->manual;
      const bool last = t->done.fetch_add(n, std::memory_order_acq_rel) + n == items;
      if (last && manual) {
        // The op arranged for complete_manual(); whoever comes second completes.
        if (t->manual_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          lk.lock();
          to_release = complete_locked(t);
          continue;
        }
      } else if (last) {
        lk.lock();
        to_release = complete_locked(t);
        continue;
      }
      lk.lock();
      continue;
    }
    if (to_release) {  // dropping the lock may have missed work: pick again
      release_unlocked();
      continue;
    }
    if (p == Pick::kHold) {
      if (!holding) {
        holding = true;
        hold_since = Clock::now();
      }
      idle_wait(lk, true);
      continue;
    }
    holding = false;
    if (stop_) break;
    idle_wait(lk, false);
  }
  lk.unlock();
  std::free(ctx.shared_memory);
}

}  // namespace tessera::cpu
