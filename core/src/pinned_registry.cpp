#include "pinned_registry.hpp"

#include <mutex>

namespace tessera::detail {

bool PinnedRegistry::Add(const void* pointer, size_t size, Origin origin) {
  uintptr_t start = reinterpret_cast<uintptr_t>(pointer);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto next = ranges_.lower_bound(start);
  if (next != ranges_.end() && next->first < start + size) return false;
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > start) return false;
  }
  ranges_.emplace(start, Range{size, origin});
  return true;
}

bool PinnedRegistry::Remove(const void* pointer, Origin origin) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto it = ranges_.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == ranges_.end() || it->second.origin != origin) return false;
  ranges_.erase(it);
  return true;
}

bool PinnedRegistry::Contains(const void* pointer, size_t size) const {
  uintptr_t start = reinterpret_cast<uintptr_t>(pointer);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = ranges_.upper_bound(start);
  if (it == ranges_.begin()) return false;
  --it;
  return start >= it->first && start + size <= it->first + it->second.size &&
         start + size >= start;
}

}  // namespace tessera::detail
