// StreamFork: the cross-stream shape of a chunk (stream_fork.h).
#include "graph/stream_fork.h"

#include <gtest/gtest.h>

#include <vector>

namespace pygraph {
namespace {

std::vector<uint32_t> deps_of(const StreamFork& f, size_t i) {
  size_t n = 0;
  const uint32_t* d = f.deps(i, &n);
  return std::vector<uint32_t>(d, d + n);
}

constexpr uint64_t kL = 0x100, kS = 0x200, kT = 0x300, kE1 = 0x1000, kE2 = 0x2000;

TEST(StreamFork, OneStreamIsAChain) {
  StreamFork f;
  for (int i = 0; i < 4; ++i) f.node(kL);
  EXPECT_EQ(f.streams(), 1u);
  EXPECT_TRUE(f.chain());  // nothing kept per node
  EXPECT_TRUE(deps_of(f, 0).empty());
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(deps_of(f, i), std::vector<uint32_t>{uint32_t(i - 1)});
}

TEST(StreamFork, ForkAndJoinBecomeEdgesFromTheRecords) {
  // PyTorch's wait_stream both ways: L works, S waits for L, both work, L waits for S.
  StreamFork f;
  f.node(kL);         // 0
  f.record(kL, kE1);  // 1
  ASSERT_TRUE(f.holds_event(kE1));
  EXPECT_FALSE(f.holds_stream(kS));
  f.wait(kS, kE1);  // S joins
  EXPECT_EQ(f.ordinal(kS), 1u);
  f.node(kS);         // 2: after the record only
  f.node(kL);         // 3: after 1, not after S's work
  f.record(kS, kE2);  // 4
  f.wait(kL, kE2);
  f.node(kL);  // 5: after 3 and the join's record
  EXPECT_EQ(deps_of(f, 2), std::vector<uint32_t>{1});
  EXPECT_EQ(deps_of(f, 3), std::vector<uint32_t>{1});
  EXPECT_EQ(deps_of(f, 4), std::vector<uint32_t>{2});
  EXPECT_EQ(deps_of(f, 5), (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(f.node_stream(2), 1u);
  EXPECT_FALSE(f.chain());
}

TEST(StreamFork, AChainBecomesNodesAtTheFirstEventOrStream) {
  // Three nodes as a chain, then a record: the chain's nodes are kept one by one, the same
  // edges and shape as if kept from the start.
  StreamFork f;
  for (int i = 0; i < 3; ++i) f.node(kL);
  f.record(kL, kE1);  // 3
  f.wait(kS, kE1);
  f.node(kS);  // 4
  for (size_t i = 1; i < 3; ++i) EXPECT_EQ(deps_of(f, i), std::vector<uint32_t>{uint32_t(i - 1)});
  EXPECT_EQ(deps_of(f, 3), std::vector<uint32_t>{2});
  EXPECT_EQ(deps_of(f, 4), std::vector<uint32_t>{3});
  StreamFork g;  // a second stream with no event: the same unchaining
  g.node(kL);
  g.node(kL);
  g.node(kS);
  EXPECT_FALSE(g.chain());
  EXPECT_EQ(deps_of(g, 1), std::vector<uint32_t>{0});
  EXPECT_TRUE(deps_of(g, 2).empty());
}

TEST(StreamFork, AWaitNamesTheLatestRecordAndAForgottenEventNone) {
  StreamFork f;
  f.node(kL);         // 0
  f.record(kL, kE1);  // 1
  f.node(kL);         // 2
  f.record(kL, kE1);  // 3: the latest record of E1
  f.wait(kS, kE1);
  f.node(kS);  // 4
  EXPECT_EQ(deps_of(f, 4), std::vector<uint32_t>{3});
  f.forget_event(kE1);
  EXPECT_FALSE(f.holds_event(kE1));
}

TEST(StreamFork, ASecondRecordFollowsTheFirstOnlyThroughTheChunksEdges) {
  // NCCL's relay: E1 recorded on S, L waits, L works, then E1 recorded on L: the second record
  // runs after the first. A third stream that never waited, or one whose wait came from
  // before the first record, would not be ordered after it.
  StreamFork f;
  f.node(kS);                               // 0
  f.record(kS, kE1);                        // 1
  f.node(kT);                               // 2: T, no wait
  EXPECT_TRUE(f.record_follows(kS, kE1));   // on the same stream, behind it
  EXPECT_FALSE(f.record_follows(kL, kE1));  // L is not in the chunk
  EXPECT_FALSE(f.record_follows(kT, kE1));  // T's work does not depend on it
  f.wait(kL, kE1);
  EXPECT_TRUE(f.record_follows(kL, kE1));  // the wait alone orders the record
  f.node(kL);                              // 3: after 1
  EXPECT_TRUE(f.record_follows(kL, kE1));  // through node 3
  f.record(kL, kE1);                       // 4: the latest record of E1
  f.wait(kS, kE1);
  f.node(kS);  // 5: after 0's successor 1 and 4
  EXPECT_TRUE(f.record_follows(kS, kE1));
  EXPECT_FALSE(f.record_follows(kT, kE1));
  EXPECT_EQ(deps_of(f, 5), (std::vector<uint32_t>{1, 4}));
  // A record of another event on T, waited for by L: L's next record of E1 follows E1's latest
  // record (4) through L's own chain, not through T.
  f.record(kT, kE2);  // 6
  f.wait(kL, kE2);
  EXPECT_TRUE(f.record_follows(kL, kE1));
  EXPECT_FALSE(f.record_follows(kT, kE2 + 1));  // an event not in the chunk
}

TEST(StreamFork, TheShapeTellsChunksWithOtherEdgesApart) {
  auto build = [](bool wait_first) {
    StreamFork f;
    f.node(kL);
    f.record(kL, kE1);
    f.node(kL);
    f.record(kL, kE2);
    f.wait(kS, wait_first ? kE1 : kE2);
    f.node(kS);
    return f.shape();
  };
  EXPECT_EQ(build(true), build(true));
  EXPECT_NE(build(true), build(false));
  StreamFork a, b;
  a.node(kL);
  a.record(kL, kE1);
  a.wait(kS, kE1);
  a.node(kS);
  b.node(kL);
  b.record(kL, kE1);
  b.wait(kT, kE1);
  b.node(kT);
  EXPECT_EQ(a.shape(), b.shape());  // ordinals, not handles: the same topology
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.nodes(), 0u);
}

}  // namespace
}  // namespace pygraph
