// The join bookkeeping of a stream capture that several streams take part
// in, for plugins that record a capture in issue order themselves (vulkan,
// level_zero): which streams joined (by waiting on an event recorded in
// the capture), the captured nodes and edges, and whether every stream
// that joined was joined back before Stream_EndCapture (CUDA's rules).
//
// Each member keeps a vector clock: clock[k] is the last node of member k
// that the member's next node follows, through waits, transitively (its
// own entry is its own last node).  A member is joined back when the
// origin's clock covers its last node, however many streams the edge went
// through; a member that issued nothing needs no join.
//
// Thread-compatible: the plugin guards a capture with its device lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::plugin_support {

template <class Stream>
class CaptureJoins {
 public:
  // Where an event recorded inside the capture points: the node it
  // follows (-1: none yet), the stream, and that stream's clock then.
  struct Point {
    int64_t node = -1;
    const Stream* stream = nullptr;
    std::vector<int64_t> clock;
  };

  explicit CaptureJoins(Stream* origin) { members_.push_back({origin, -1, {}}); }

  Stream* origin() const { return members_[0].stream; }
  bool IsMember(const Stream* s) const { return Find(s) != nullptr; }
  // `s` joins (it waited on an event recorded in the capture).
  void Join(Stream* s) {
    if (!IsMember(s)) members_.push_back({s, -1, {}});
  }

  // A node issued by member `s`, after its earlier ones; returns its index.
  int64_t AddNode(const Stream* s) {
    Member* m = Find(s);
    if (m->last_node >= 0) ++edges_;  // in-stream order
    m->last_node = nodes_++;
    const size_t me = static_cast<size_t>(m - members_.data());
    if (m->clock.size() <= me) m->clock.resize(me + 1, -1);
    m->clock[me] = m->last_node;
    return m->last_node;
  }

  // An event recorded on member `s` now.
  Point Record(const Stream* s) const {
    const Member* m = Find(s);
    return Point{m->last_node, s, m->clock};
  }

  // Member `s` waits on an event recorded at `p`: an edge from another
  // stream's node, and everything `p` followed.
  void Wait(const Stream* s, const Point& p) {
    if (p.node >= 0 && p.stream != s) ++edges_;
    std::vector<int64_t>& into = Find(s)->clock;
    if (into.size() < p.clock.size()) into.resize(p.clock.size(), -1);
    for (size_t k = 0; k < p.clock.size(); ++k) into[k] = std::max(into[k], p.clock[k]);
  }

  // The first member (by joining order, the origin being 0) that issued
  // work and was not joined back; 0 when every one was.
  size_t FirstUnjoined() const {
    const std::vector<int64_t>& origin = members_[0].clock;
    for (size_t k = 1; k < members_.size(); ++k) {
      const Member& m = members_[k];
      if (m.last_node >= 0 && (k >= origin.size() || origin[k] < m.last_node)) return k;
    }
    return 0;
  }
  Stream* member(size_t k) const { return members_[k].stream; }
  size_t num_members() const { return members_.size(); }

  int64_t nodes() const { return nodes_; }
  size_t edges() const { return edges_; }

 private:
  struct Member {
    Stream* stream;
    int64_t last_node;
    std::vector<int64_t> clock;
  };
  Member* Find(const Stream* s) {
    for (Member& m : members_)
      if (m.stream == s) return &m;
    return nullptr;
  }
  const Member* Find(const Stream* s) const {
    for (const Member& m : members_)
      if (m.stream == s) return &m;
    return nullptr;
  }
  std::vector<Member> members_;  // [0] is the origin
  int64_t nodes_ = 0;
  size_t edges_ = 0;
};

}  // namespace tessera::plugin_support
