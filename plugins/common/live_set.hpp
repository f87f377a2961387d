// The objects of one kind that a plugin's caller created and has not yet
// destroyed. plugin.h makes the client own them: Client_Destroy frees what
// is left through the same entry point the caller would have called, so a
// program that forgets a buffer or an event loses nothing past its client.
// Thread-safe (its own lock, never held while an object is destroyed).
#ifndef TESSERA_PLUGINS_COMMON_LIVE_SET_HPP
#define TESSERA_PLUGINS_COMMON_LIVE_SET_HPP

#include <cstddef>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace tessera::plugin_support {

template <typename T>
class LiveSet {
 public:
  void add(T* x) {
    std::lock_guard<std::mutex> lk(mu_);
    set_.insert(x);
  }
  void remove(T* x) {
    std::lock_guard<std::mutex> lk(mu_);
    set_.erase(x);
  }
  // Everything still live, the set left empty: the caller destroys each
  // (whose own remove() then finds nothing).
  std::vector<T*> take() {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<T*> all(set_.begin(), set_.end());
    set_.clear();
    return all;
  }

 private:
  std::mutex mu_;
  std::unordered_set<T*> set_;
};

// Client_Destroy's sweep: each object still in `live` destroyed through
// `entry` (its own Destroy/Free entry point) as the caller would have, with
// Args{struct_size, NULL, object}; the errors handed to `drop`.
template <typename T, typename Args, typename Entry, typename Drop>
void destroy_leftovers(LiveSet<T>& live, size_t struct_size, T* Args::*object, Entry entry, Drop drop) {
  for (T* x : live.take()) {
    Args a{};
    a.struct_size = struct_size;
    a.*object = x;
    if (auto* e = entry(&a)) drop(e);
  }
}

}  // namespace tessera::plugin_support

#endif
