// The host ranges that are page-locked (pinned_malloc, register_host, and the
// host side of host-pinned buffers), so the core can enforce the rule that an
// asynchronous copy touches only pinned host memory.
//
// Thread-safety: all methods are safe to call concurrently (shared mutex;
// lookups, on every async copy, take it shared).
#ifndef TESSERA_CORE_PINNED_REGISTRY_HPP_
#define TESSERA_CORE_PINNED_REGISTRY_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

namespace tessera::detail {

class PinnedRegistry {
 public:
  // Who page-locked the range: each is undone only by its own counterpart.
  enum class Origin { kPinnedMalloc, kRegisterHost, kPinnedBuffer };

  // False if the range overlaps one already registered.
  bool Add(const void* pointer, size_t size, Origin origin);
  // Removes the range that starts at `pointer` and was added by `origin`;
  // false if there is none.
  bool Remove(const void* pointer, Origin origin);
  // True when [pointer, pointer + size) lies inside one registered range.
  bool Contains(const void* pointer, size_t size) const;

 private:
  mutable std::shared_mutex mutex_;
  struct Range {
    size_t size;
    Origin origin;
  };
  std::map<uintptr_t, Range> ranges_;  // by start; non-overlapping
};

}  // namespace tessera::detail

#endif  // TESSERA_CORE_PINNED_REGISTRY_HPP_
