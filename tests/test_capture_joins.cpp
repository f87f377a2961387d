// CaptureJoins (plugins/common/capture_joins.hpp): the join rules the
// vulkan and level_zero plugins apply to a capture several streams take
// part in, checked without a device (the conformance area "graphs" checks
// them through each plugin).
#include "capture_joins.hpp"

#include <gtest/gtest.h>

namespace tessera::plugin_support {
namespace {

struct FakeStream {
  int id;
};
using Joins = CaptureJoins<FakeStream>;

TEST(CaptureJoins, ForkAndJoinCountEdgesAndJoinBack) {
  FakeStream s0{0}, s1{1};
  Joins j(&s0);
  j.AddNode(&s0);                       // node 0
  const Joins::Point fork = j.Record(&s0);
  j.Join(&s1);
  j.Wait(&s1, fork);                    // edge 0 -> s1
  j.AddNode(&s1);                       // node 1 (after node 0)
  EXPECT_EQ(j.FirstUnjoined(), 1u) << "s1 issued work the origin does not follow";
  const Joins::Point join = j.Record(&s1);
  j.Wait(&s0, join);                    // edge s1 -> s0
  j.AddNode(&s0);                       // node 2
  EXPECT_EQ(j.FirstUnjoined(), 0u);
  EXPECT_EQ(j.nodes(), 3);
  EXPECT_EQ(j.edges(), 3u);  // fork, join, s0's node 0 -> node 2 in order
}

TEST(CaptureJoins, JoinsAreTransitiveAndAnIdleJoinerNeedsNone) {
  FakeStream s0{0}, s1{1}, s2{2}, idle{3};
  Joins j(&s0);
  j.AddNode(&s0);
  const Joins::Point fork = j.Record(&s0);
  j.Join(&s1);
  j.Wait(&s1, fork);
  j.Join(&idle);
  j.Wait(&idle, fork);  // joins, issues nothing
  j.AddNode(&s1);
  const Joins::Point hop = j.Record(&s1);
  j.Join(&s2);
  j.Wait(&s2, hop);
  j.AddNode(&s2);
  j.Wait(&s0, j.Record(&s2));  // s1 is joined back through s2
  EXPECT_EQ(j.FirstUnjoined(), 0u);
  EXPECT_EQ(j.num_members(), 4u);
}

TEST(CaptureJoins, AWaitOnARecordBeforeAnyNodeAddsNoEdge) {
  FakeStream s0{0}, s1{1};
  Joins j(&s0);
  const Joins::Point empty = j.Record(&s0);  // nothing captured yet
  j.Join(&s1);
  j.Wait(&s1, empty);
  EXPECT_EQ(j.edges(), 0u);
  j.AddNode(&s1);
  EXPECT_EQ(j.FirstUnjoined(), 1u);
}

}  // namespace
}  // namespace tessera::plugin_support
