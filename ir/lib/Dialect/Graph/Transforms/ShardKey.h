//===- ShardKey.h - a dim's split over mesh axes, as one comparable key ---===//
//
// --tessera-shard-propagation (ShardPropagation.cpp) keeps, per dim of a
// value, the mesh axes the dim is split over as one string key, so that
// splits compare, hash and order as wholes; these helpers look inside.
// Header-only; no state.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_DIALECT_GRAPH_TRANSFORMS_SHARDKEY_H
#define TESSERA_DIALECT_GRAPH_TRANSFORMS_SHARDKEY_H

#include <set>
#include <string>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace tessera::graph::shard_key {

using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

// A dim's split is a key: "" (whole), one mesh axis, or several axes joined
// by kJoin, the major one first (a dim split over dp x tp: its block is
// c_dp * |tp| + c_tp). Keys compare as wholes (a dim over "dp" and one over
// "dp,tp" are split differently); the helpers below look inside them where
// axes must not be used twice.
constexpr char kJoin = '\x1f';

inline SmallVector<std::string> axesOf(const std::string& key) {
  SmallVector<std::string> out;
  if (key.empty()) return out;
  size_t from = 0;
  for (size_t at; (at = key.find(kJoin, from)) != std::string::npos; from = at + 1)
    out.push_back(key.substr(from, at - from));
  out.push_back(key.substr(from));
  return out;
}

inline std::string keyOf(ArrayRef<StringRef> axes) {
  std::string key;
  for (StringRef a : axes) key += (key.empty() ? "" : std::string(1, kJoin)) + a.str();
  return key;
}

// For diagnostics: "tp", or "dp x tp".
inline std::string shown(const std::string& key) {
  std::string out;
  for (const std::string& a : axesOf(key)) out += (out.empty() ? "" : " x ") + a;
  return out;
}

// True when some axis of `key` is in `set` / every axis is.
inline bool touches(const std::set<std::string>& set, const std::string& key) {
  return llvm::any_of(axesOf(key), [&](const std::string& a) { return set.count(a) > 0; });
}
inline bool covers(const std::set<std::string>& set, const std::string& key) {
  return !key.empty() && llvm::all_of(axesOf(key), [&](const std::string& a) { return set.count(a) > 0; });
}
// True when two keys share an axis.
inline bool overlaps(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  SmallVector<std::string> x = axesOf(a);
  return touches(std::set<std::string>(x.begin(), x.end()), b);
}
inline void insertAxes(std::set<std::string>& set, const std::string& key) {
  for (const std::string& a : axesOf(key)) set.insert(a);
}
// True when `key` splits a dim further than `prefix` does: its leading axes
// are `prefix`'s ("" is a prefix of every key). A part under `key` is then
// a part of the part under `prefix`, and moving between the two needs
// collectives over the remaining axes only.
inline bool isPrefix(const std::string& prefix, const std::string& key) {
  return prefix.empty() || key == prefix ||
         (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0 && key[prefix.size()] == kJoin);
}
// The axes of `key` after `prefix` (isPrefix(prefix, key)).
inline std::string suffixOf(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : key == prefix ? std::string() : key.substr(prefix.size() + 1);
}

}  // namespace tessera::graph::shard_key

#endif
