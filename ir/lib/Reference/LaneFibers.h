//===- LaneFibers.h - one fiber per lane of a tile group ------------------===//
//
// The lanes of a group run as fibers (ucontext) on one thread: a lane runs
// until it reaches an op every lane (or every lane of its subgroup) must
// reach -- then it yields -- or until it finishes.  The interpreter resumes
// the lanes once the op can be resolved.  Stacks are mapped once
// (MAP_NORESERVE) and reused by every group.
//
// Thread-compatible: one LaneFibers per interpreter call.
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_REFERENCE_LANEFIBERS_H
#define TESSERA_REFERENCE_LANEFIBERS_H

#include <ucontext.h>

#include <functional>
#include <vector>

namespace tessera::reference {

class LaneFibers {
 public:
  /// `lanes` fibers, each with a stack of `stack_bytes`.
  LaneFibers(size_t lanes, size_t stack_bytes);
  ~LaneFibers();
  LaneFibers(const LaneFibers &) = delete;
  LaneFibers &operator=(const LaneFibers &) = delete;

  bool ok() const { return stacks_ != nullptr; }
  /// Prepares every lane to run `body(lane)` from the start.
  void Start(const std::function<void(size_t)> &body);
  /// Runs `lane` until it yields or finishes.
  void Resume(size_t lane);
  /// From inside `lane`: back to whoever resumed it.
  void Yield(size_t lane);
  bool Finished(size_t lane) const { return finished_[lane]; }

 private:
  static void Trampoline(unsigned hi, unsigned lo, unsigned lane);
  size_t lanes_, stack_bytes_;
  char *stacks_ = nullptr;
  std::vector<ucontext_t> contexts_;
  ucontext_t scheduler_;
  std::vector<bool> finished_;
  std::function<void(size_t)> body_;
};

}  // namespace tessera::reference

#endif
