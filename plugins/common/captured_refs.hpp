// What a captured graph refers to, so that a replay after one of those
// objects was destroyed fails cleanly instead of using freed memory (or, on
// Vulkan, submitting a command buffer that names a destroyed VkBuffer).
//
// A graph does not keep the buffers and executables it uses alive (neither
// does CUDA's): every object a graph may capture owns a LifeToken, the
// capture keeps a weak reference to it with a description for the message,
// and GraphExec_Launch checks them all before replaying (one atomic load per
// distinct object).
//
// Thread-safety: a CapturedRefs is written during a capture and read-only
// afterwards; the tokens themselves are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plugin_support.hpp"

namespace tessera::plugin_support {

// Owned by an object for its whole life; expires when the object is freed.
using LifeToken = std::shared_ptr<const void>;
inline LifeToken make_life_token() { return std::make_shared<char>(0); }

class CapturedRefs {
 public:
  // Notes that the graph uses the object behind `token`; `what` says how
  // ("buffer argument 1 of the launch of kernel 'fill' (node 3)").  Only the
  // first use of an object is kept.
  void add(const std::weak_ptr<const void>& token, std::string what) {
    for (const Ref& r : refs_)
      if (!r.alive.owner_before(token) && !token.owner_before(r.alive)) return;
    refs_.push_back({token, std::move(what)});
  }
  void append(const CapturedRefs& other) {
    for (const Ref& r : other.refs_) add(r.alive, r.what);
  }
  // NULL when every object is alive; otherwise FAILED_PRECONDITION naming
  // the first destroyed one.
  TsError* check(const char* plugin) const {
    for (const Ref& r : refs_)
      if (r.alive.expired())
        return errorf(TS_ERROR_FAILED_PRECONDITION,
                      "%s: GraphExec_Launch: the graph uses %s, which was destroyed after "
                      "the capture; a graph does not keep the buffers and executables it "
                      "uses alive: keep them until its last launch, or capture it again",
                      plugin, r.what.c_str());
    return nullptr;
  }
  size_t size() const { return refs_.size(); }

 private:
  struct Ref {
    std::weak_ptr<const void> alive;
    std::string what;
  };
  std::vector<Ref> refs_;
};

}  // namespace tessera::plugin_support
