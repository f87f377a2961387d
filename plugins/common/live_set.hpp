// The objects of one kind that a plugin's caller created and has not yet
// destroyed. plugin.h makes the client own them: Client_Destroy frees what
// is left through the same entry point the caller would have called, so a
// program that forgets a buffer or an event loses nothing past its client.
// Thread-safe (its own lock, never held while an object is destroyed).
#ifndef TESSERA_PLUGINS_COMMON_LIVE_SET_HPP
#define TESSERA_PLUGINS_COMMON_LIVE_SET_HPP

#include <cstddef>
#include <mutex>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "tessera/plugin.h"

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

// One device's leftovers in the order that is safe (graph execs, graphs,
// events, executables, buffers: each kind may refer to the ones after it,
// none to those before), through the plugin's entry points.  A plugin
// without graphs passes nullptr for both graph entries.  Streams are the
// plugin's own business (they go last, after the device is synchronized).
template <typename Device, typename Drop, typename GraphExecDestroy, typename GraphDestroy, typename EventDestroy,
          typename ExecutableDestroy, typename BufferFree>
void destroy_device_leftovers(Device& d, Drop drop, GraphExecDestroy graph_exec_destroy, GraphDestroy graph_destroy,
                              EventDestroy event_destroy, ExecutableDestroy executable_destroy,
                              BufferFree buffer_free) {
  if constexpr (!std::is_same_v<GraphExecDestroy, std::nullptr_t>)
    destroy_leftovers(d.live_graph_execs, TS_GRAPHEXEC_DESTROY_ARGS_STRUCT_SIZE, &TsGraphExec_Destroy_Args::exec,
                      graph_exec_destroy, drop);
  if constexpr (!std::is_same_v<GraphDestroy, std::nullptr_t>)
    destroy_leftovers(d.live_graphs, TS_GRAPH_DESTROY_ARGS_STRUCT_SIZE, &TsGraph_Destroy_Args::graph, graph_destroy,
                      drop);
  destroy_leftovers(d.live_events, TS_EVENT_DESTROY_ARGS_STRUCT_SIZE, &TsEvent_Destroy_Args::event, event_destroy,
                    drop);
  destroy_leftovers(d.live_executables, TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE,
                    &TsExecutable_Destroy_Args::executable, executable_destroy, drop);
  destroy_leftovers(d.live_buffers, TS_BUFFER_FREE_ARGS_STRUCT_SIZE, &TsBuffer_Free_Args::buffer, buffer_free, drop);
}

}  // namespace tessera::plugin_support

#endif
