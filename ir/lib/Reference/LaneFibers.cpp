#include "LaneFibers.h"

#include <sys/mman.h>

#include <cstdint>

namespace tessera::reference {

LaneFibers::LaneFibers(size_t lanes, size_t stack_bytes)
    : lanes_(lanes), stack_bytes_(stack_bytes), contexts_(lanes), finished_(lanes, true) {
  void *p = mmap(nullptr, lanes * stack_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) stacks_ = static_cast<char *>(p);
}

LaneFibers::~LaneFibers() {
  if (stacks_) munmap(stacks_, lanes_ * stack_bytes_);
}

void LaneFibers::Trampoline(unsigned hi, unsigned lo, unsigned lane) {
  auto *self = reinterpret_cast<LaneFibers *>((static_cast<uintptr_t>(hi) << 32) | lo);
  self->body_(lane);
  self->finished_[lane] = true;
  // Returning goes to uc_link: the scheduler.
}

void LaneFibers::Start(const std::function<void(size_t)> &body) {
  body_ = body;
  const uintptr_t self = reinterpret_cast<uintptr_t>(this);
  for (size_t i = 0; i < lanes_; ++i) {
    ucontext_t &c = contexts_[i];
    getcontext(&c);
    c.uc_stack.ss_sp = stacks_ + i * stack_bytes_;
    c.uc_stack.ss_size = stack_bytes_;
    c.uc_link = &scheduler_;
    makecontext(&c, reinterpret_cast<void (*)()>(&LaneFibers::Trampoline), 3,
                static_cast<unsigned>(self >> 32), static_cast<unsigned>(self & 0xffffffffu),
                static_cast<unsigned>(i));
    finished_[i] = false;
  }
}

void LaneFibers::Resume(size_t lane) {
  if (!finished_[lane]) swapcontext(&scheduler_, &contexts_[lane]);
}

void LaneFibers::Yield(size_t lane) { swapcontext(&contexts_[lane], &scheduler_); }

}  // namespace tessera::reference
