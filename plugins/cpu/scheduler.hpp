// The CPU plugin's execution engine: one worker pool per client, in-order
// streams with timeline values, cross-stream dependencies, weighted fair share.
//
// DESIGN
//  * A StreamState is a timeline: `submitted` counts tasks queued on it,
//    `completed` counts tasks finished (tasks complete in order, so
//    completed == seq of the last finished task).  A dependency is a
//    (stream, value) pair, satisfied when stream.completed >= value - the
//    Vulkan timeline-semaphore model; events, default-stream rules and graph
//    edges are all expressed as such pairs.
//  * Each stream holds an intrusive FIFO of its not-yet-completed tasks.  Only
//    the head may run; it is "ready" once its dependencies are satisfied.
//  * A task has `items` units of work (kernel: one per tile group; big copy:
//    one per 1 MiB chunk).  Idle workers claim chunks of the head's items under
//    the scheduler mutex and run them unlocked; whoever finishes the last item
//    completes the task.  Manual tasks (collective parts) complete when both
//    the run finished and complete_manual() was called, without holding a
//    worker in between.
//  * Fair share is stride scheduling: stream pass += items_claimed / weight;
//    a worker takes the ready head with the highest priority, then the lowest
//    pass.  A stream that goes from idle to busy has its pass raised to the
//    current minimum, so it cannot bank credit while idle.  Because a stream
//    is in order it can use at most one worker for one-item tasks, so a worker
//    HOLDS (stays idle briefly) rather than run a stream whose pass is ahead
//    of a same-priority stream that is backlogged and merely waiting for its
//    own running head: two saturated streams of weight 3 and 1 then complete
//    3:1 items even with more workers than streams.  A hold never outlasts the
//    running item it waits for, nor kHoldLimit.
//  * Latency: idle workers spin on an epoch counter (pause, then yield) for
//    kSpin before sleeping on a condvar; at most kMaxSpinners spin at once.
//    Waiters (stream/event/device synchronize) spin on the stream's atomic
//    `completed` before sleeping.  Submitting takes one lock and notifies
//    only when nobody spins.
//
// LOCKING: one mutex per client (Scheduler::mutex()) guards every queue, the
// device stream registries and capture state.  `submitted`/`completed` are
// atomics so queries and spins need no lock; they are written under it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "plugin_support.hpp"

struct TsDevice;

namespace tessera::cpu {

struct Task;
struct StreamState;
struct CaptureSession;

// Per-worker scratch handed to Op::run.
struct WorkerContext {
  unsigned index = 0;
  void* shared_memory = nullptr;  // 64-byte aligned, kSharedMemoryPerGroup bytes
};

constexpr uint64_t kSharedMemoryPerGroup = 64 * 1024;

// A unit of work; immutable once built so graph replays can share it.
class Op {
 public:
  virtual ~Op() = default;
  virtual uint32_t work_items() const { return 1; }
  // Runs items [begin, end); disjoint ranges of one task may run concurrently.
  virtual void run(Task& task, uint32_t begin, uint32_t end, WorkerContext& w) = 0;
  // A manual op's task completes on Scheduler::complete_manual, not when run
  // returns (collectives).
  virtual bool manual_completion() const { return false; }
};

// An op that does nothing (markers, joins).
class NopOp final : public Op {
 public:
  void run(Task&, uint32_t, uint32_t, WorkerContext&) override {}
  static NopOp* instance();
};

struct Dep {
  std::shared_ptr<StreamState> stream;
  uint64_t value = 0;
};

// A small vector of dependencies: two inline, the rest on the heap.
class DepList {
 public:
  void add(std::shared_ptr<StreamState> s, uint64_t value);
  void add(const Dep& d) { add(d.stream, d.value); }
  size_t size() const { return n_; }
  const Dep& operator[](size_t i) const { return i < kInline ? inline_[i] : more_[i - kInline]; }
  void clear();
  void append(const DepList& o) {
    for (size_t i = 0; i < o.size(); ++i) add(o[i]);
  }

 private:
  static constexpr size_t kInline = 2;
  Dep inline_[kInline];
  std::vector<Dep> more_;
  size_t n_ = 0;
};

// One queued execution of an Op on a stream.
struct Task {
  Op* op = nullptr;
  StreamState* stream = nullptr;  // kept alive by the scheduler while queued
  uint64_t seq = 0;
  Task* next = nullptr;
  uint32_t items = 1;
  uint32_t claimed = 0;  // guarded by the scheduler mutex
  bool ready = false;    // deps seen satisfied (guarded by the mutex)
  bool manual = false;
  std::atomic<uint32_t> done{0};
  std::atomic<uint32_t> manual_refs{2};  // run finished + complete_manual
  DepList deps;
  // Timestamps to take when the task completes (steady clock, ns), before
  // `completed` is published: events recorded while this task was the
  // stream's tail take its completion time instead of queueing a marker of
  // their own (event.cpp).  Guarded by the scheduler mutex; emptied at
  // completion, so graph replays that reuse a task start with none.
  std::shared_ptr<std::atomic<int64_t>> stamp;  // the first (no allocation)
  std::vector<std::shared_ptr<std::atomic<int64_t>>> more_stamps;
  // The same for Stream_WriteTimestamp: the caller's memory, valid until
  // written (plugin.h).
  uint64_t* caller_stamp = nullptr;
  std::vector<uint64_t*> more_caller_stamps;
  // Frees the task after completion (called without the mutex held).
  void (*release)(Task*) = nullptr;
  void* owner = nullptr;  // for `release`
};

// Allocates a task that owns its op (one allocation).
template <class OpT>
struct OwnedTask final : Task {
  explicit OwnedTask(OpT&& o) : op_storage(std::move(o)) { op = &op_storage; }
  OpT op_storage;
  static void release_fn(Task* t) { delete static_cast<OwnedTask*>(t); }
};
template <class OpT>
Task* make_owned_task(OpT&& op) {
  auto* t = new OwnedTask<OpT>(std::move(op));
  t->items = t->op_storage.work_items();
  t->manual = t->op_storage.manual_completion();
  t->release = &OwnedTask<OpT>::release_fn;
  return t;
}

struct StreamState {
  TsDevice* device = nullptr;
  int32_t priority = 0;
  double weight = 1.0;
  bool blocking = true;   // obeys the default-stream rules
  bool is_default = false;
  bool hidden = false;    // internal graph lane
  std::atomic<uint64_t> submitted{0};
  std::atomic<uint64_t> completed{0};

  // Guarded by the scheduler mutex.
  Task* head = nullptr;
  Task* tail = nullptr;
  double pass = 0.0;
  bool active = false;     // in Scheduler::active_
  bool destroyed = false;  // user handle gone
  DepList pending_waits;   // from Stream_WaitEvent, attached to the next task
  // Capture (graph.cpp); guarded by the scheduler mutex.
  std::shared_ptr<CaptureSession> capture;
  int64_t capture_tail = -1;            // last node this stream recorded
  std::vector<int64_t> capture_waits;   // nodes the next node depends on
};

// The time events and timestamps report: steady_clock (the host's
// CLOCK_MONOTONIC), in nanoseconds.
inline int64_t steady_now_ns() {
  return static_cast<int64_t>(plugin_support::steady_clock_ns());
}

class Scheduler {
 public:
  explicit Scheduler(unsigned workers);
  ~Scheduler();  // waits for all work, then joins the workers
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  unsigned worker_count() const { return static_cast<unsigned>(threads_.size()); }
  std::mutex& mutex() { return mu_; }

  // Makes `stamp` take the completion time of the last task queued on `s`
  // and returns that task's seq, or returns 0 when nothing is queued (the
  // stream is idle: the caller stamps the time itself).  Mutex held.
  uint64_t stamp_tail_locked(StreamState& s, std::shared_ptr<std::atomic<int64_t>> stamp);
  // The same for the caller's memory of Stream_WriteTimestamp; returns false
  // when the stream is idle (nothing is written then).
  bool stamp_tail_locked(StreamState& s, uint64_t* caller_stamp);
  // Queues `t` at the tail of `s` (mutex held).  Sets t->seq and t->stream.
  void submit_locked(const std::shared_ptr<StreamState>& s, Task* t);
  // Second half of a manual task's completion; any thread, mutex NOT held.
  void complete_manual(Task* t);
  // Blocks until s.completed >= value (spin, then condvar); mutex NOT held.
  void wait(StreamState& s, uint64_t value);
  // Blocks until nothing is queued anywhere.
  void wait_all_idle();

 private:
  struct Claim {
    Task* task = nullptr;
    uint32_t begin = 0, end = 0;
  };
  enum class Pick { kGot, kHold, kNothing };

  void worker_main(unsigned index);
  Pick pick_locked(Claim& c, bool allow_hold);
  bool deps_ready(const Task& t) const;
  void activate_locked(const std::shared_ptr<StreamState>& s);
  // Pops the completed head of its stream; returns the task to release.
  Task* complete_locked(Task* t);
  void idle_wait(std::unique_lock<std::mutex>& lk, bool hold);

  std::mutex mu_;
  std::condition_variable work_cv_;  // workers sleep here
  std::condition_variable done_cv_;  // waiters sleep here
  std::vector<std::shared_ptr<StreamState>> active_;  // streams with queued tasks
  std::atomic<uint64_t> epoch_{0};   // bumped on every submit/completion
  std::atomic<int> spinners_{0};
  int sleepers_ = 0;
  int waiters_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tessera::cpu
