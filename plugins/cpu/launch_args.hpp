// The argument list a queued kernel launch hands its kernel: one pointer per
// argument (TsCpuLaunchContext.args), a buffer's address or the address of
// an 8-byte aligned copy of a scalar.
//
// WHY NOT TWO VECTORS.  They cost two allocations and two frees per launch
// (about a quarter of Kernel_Launch's instructions, callgrind).  A launch of
// up to kInlineArgs arguments and kInlineWords scalar words keeps both
// arrays inside the op; a larger one puts them on the heap.  The
// pointers to inline scalar copies point into the object itself, so a move
// (into the queued task, or out of it into a captured graph) re-aims them.
//
// Not thread-safe: built by the launching thread before the op is queued,
// read-only afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>

namespace tessera::cpu {

class LaunchArgs {
 public:
  static constexpr size_t kInlineArgs = 16;
  static constexpr size_t kInlineWords = 16;

  LaunchArgs() = default;
  LaunchArgs(const LaunchArgs&) = delete;
  LaunchArgs& operator=(const LaunchArgs&) = delete;
  LaunchArgs(LaunchArgs&& o) noexcept { take(o); }
  LaunchArgs& operator=(LaunchArgs&& o) noexcept {
    if (this != &o) take(o);
    return *this;
  }

  // Room for `args` pointers and `words` scalar words (zeroed); discards
  // what was there.
  void reset(size_t args, size_t words) {
    num_args_ = args;
    num_words_ = words;
    if (args <= kInlineArgs && words <= kInlineWords) {
      heap_ptrs_.reset();
      heap_words_.reset();
      ptrs_ = inline_ptrs_;
      words_ = inline_words_;
    } else {
      heap_ptrs_.reset(new void*[args]);
      heap_words_.reset(new uint64_t[words ? words : 1]);
      ptrs_ = heap_ptrs_.get();
      words_ = heap_words_.get();
    }
    std::memset(words_, 0, words * sizeof(uint64_t));
  }

  void set_pointer(size_t i, void* p) { ptrs_[i] = p; }
  // Copies `size` bytes of a scalar into word `w` onward and points
  // argument i at them.
  void set_scalar(size_t i, size_t w, const void* data, size_t size) {
    if (size) std::memcpy(&words_[w], data, size);
    ptrs_[i] = &words_[w];
  }

  void** data() { return ptrs_; }
  size_t size() const { return num_args_; }

 private:
  void take(LaunchArgs& o) {
    num_args_ = o.num_args_;
    num_words_ = o.num_words_;
    heap_ptrs_ = std::move(o.heap_ptrs_);
    heap_words_ = std::move(o.heap_words_);
    if (heap_ptrs_) {  // the arrays moved with their pointers intact
      ptrs_ = o.ptrs_;
      words_ = o.words_;
    } else {
      ptrs_ = inline_ptrs_;
      words_ = inline_words_;
      std::memcpy(inline_words_, o.inline_words_, num_words_ * sizeof(uint64_t));
      const auto* lo = reinterpret_cast<const char*>(o.inline_words_);
      const auto* hi = reinterpret_cast<const char*>(o.inline_words_ + num_words_);
      for (size_t i = 0; i < num_args_; ++i) {
        const auto* p = static_cast<const char*>(o.inline_ptrs_[i]);
        // std::less: pointers into different objects compare without UB.
        const bool own = !std::less<const char*>()(p, lo) && std::less<const char*>()(p, hi);
        inline_ptrs_[i] = own ? reinterpret_cast<char*>(inline_words_) + (p - lo) : o.inline_ptrs_[i];
      }
    }
    o.num_args_ = o.num_words_ = 0;
    o.ptrs_ = o.inline_ptrs_;
    o.words_ = o.inline_words_;
  }

  size_t num_args_ = 0, num_words_ = 0;
  void** ptrs_ = inline_ptrs_;
  uint64_t* words_ = inline_words_;
  std::unique_ptr<void*[]> heap_ptrs_;      // the large case
  std::unique_ptr<uint64_t[]> heap_words_;
  void* inline_ptrs_[kInlineArgs];
  uint64_t inline_words_[kInlineWords];
};

}  // namespace tessera::cpu
