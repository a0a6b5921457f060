// The chunk policy (chunk_policy.h) on its own: chunk sizes through an occurrence, what is worth
// a graph, and when a sequence cut short again and again stops being deferred.
#include "graph/chunk_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace pygraph {
namespace {

// The chunks an occurrence of `length` positions is cut into, with no flush between.
std::vector<size_t> chunks(ChunkCursor& c, size_t from, size_t length) {
  std::vector<size_t> out;
  c.begin(from);
  for (size_t pos = from; pos < length;) {
    const size_t end = c.end(length);
    out.push_back(end - pos);
    pos = end;
    c.submitted(pos);
  }
  return out;
}

TEST(ChunkCursor, ChunksDoubleFromTheFirstUpToTheLargest) {
  ChunkCursor c(2, 128);
  EXPECT_EQ(chunks(c, 0, 69), (std::vector<size_t>{2, 4, 8, 16, 32, 7}));
  EXPECT_EQ(chunks(c, 0, 300), (std::vector<size_t>{2, 4, 8, 16, 32, 64, 128, 46}));
  // A loop taken up at a phase: the first chunk starts there.
  EXPECT_EQ(chunks(c, 5, 20), (std::vector<size_t>{2, 4, 8, 1}));
}

TEST(ChunkCursor, AChunkIsFullWhenItsWorkReachesItsSizeWhateverItsPositions) {
  // Positions 0..: a launch, the program's graph of 40 nodes (39 more than a launch), launches.
  ChunkCursor c(2, 64);
  c.begin(0);
  EXPECT_FALSE(c.full(1, 100, 0));
  EXPECT_TRUE(c.full(2, 100, 0));  // two launches
  c.submitted(2);                  // the next may weigh 4
  EXPECT_FALSE(c.full(3, 100, 0));
  EXPECT_TRUE(c.full(3, 100, 39));  // one position, but 40 nodes
  c.submitted(3);
  EXPECT_FALSE(c.full(4, 100, 0));
  EXPECT_TRUE(c.full(4, 4, 0));  // the occurrence ends
}

TEST(ChunkCursor, AHeadIsFullAtItsSizeAndTheProgramsGraphAfterItGoesAlone) {
  // A segment's head of one launch before the program's graph of 40 nodes (early heads): full
  // at its one launch, though the first chunk is 2; the chunk after it, begun alone, is full at
  // the graph; the one after grows from what the graph weighed. Only the head is one.
  ChunkCursor c(2, 64);
  c.begin_head(0, 1);
  EXPECT_TRUE(c.head());
  EXPECT_TRUE(c.full(1, 100, 0));
  c.submitted(1);
  EXPECT_FALSE(c.head());
  c.begin_alone(1);
  EXPECT_FALSE(c.head());
  EXPECT_TRUE(c.filled(2, 39));
  c.submitted(2, 39);
  EXPECT_FALSE(c.filled(3, 39));  // 40 of 64 (80, at most 64)
  EXPECT_TRUE(c.filled(4, 78));
  // A head never outgrows the largest chunk, and any new beginning ends it.
  c.begin_head(0, 1000);
  EXPECT_FALSE(c.full(63, 100, 0));
  EXPECT_TRUE(c.full(64, 100, 0));
  c.begin(0);
  EXPECT_FALSE(c.head());
  c.begin_head(0, 1);
  c.reset();
  EXPECT_FALSE(c.head());
}

TEST(ChunkCursor, TheNextChunkGrowsFromWhatTheLastOneWeighed) {
  // The program's graph of 40 nodes fills a first chunk of 2 alone: the next may weigh 80 (two
  // of them, a graph worth replaying), not 4 (one again), and never more than max.
  ChunkCursor c(2, 64);
  c.begin(0);
  EXPECT_TRUE(c.filled(1, 39));
  c.submitted(1, 39);
  EXPECT_FALSE(c.filled(2, 39));  // one graph: 40 of 64
  EXPECT_TRUE(c.filled(3, 78));   // two
  // A chunk cut short by an op (2 of its 64) does not shrink the next.
  c.submitted(3, 0);
  EXPECT_FALSE(c.filled(3 + 63, 0));
  EXPECT_TRUE(c.filled(3 + 64, 0));
}

TEST(ChunkCursor, AnotherGrowthMakesFewerLargerChunks) {
  ChunkCursor c(2, 128, 4);
  EXPECT_EQ(chunks(c, 0, 69), (std::vector<size_t>{2, 8, 32, 27}));
  EXPECT_EQ(chunks(c, 0, 300), (std::vector<size_t>{2, 8, 32, 128, 128, 2}));
  ChunkCursor one(2, 128, 1);  // less than 2 is 2
  EXPECT_EQ(chunks(one, 0, 14), (std::vector<size_t>{2, 4, 8}));
}

TEST(ChunkCursor, ALoopKeepsItsChunkSizeAroundItsPeriod) {
  ChunkCursor c(2, 128);
  c.begin(0);
  for (int k = 0; k < 8; ++k) c.submitted(c.end(1000));  // grown to the largest
  EXPECT_EQ(c.end(1000) - c.start(), 128u);
  c.wrap();
  EXPECT_EQ(c.start(), 0u);
  EXPECT_EQ(c.end(80), 80u);  // clipped by the unrolled period, size kept
  EXPECT_EQ(c.end(1000), 128u);
  // An event op issued where it was, with nothing pending: the chunk starts after it.
  c.move_start(7);
  EXPECT_EQ(c.start(), 7u);
  c.reset();
  EXPECT_EQ(c.end(1000), 0u);
}

TEST(ChunkCursor, ARestartBeginsAtItsSizeAndGrowsAtItsPaceUntilTheNextCut) {
  // First 2, max 64, growth 2. Restarted at 10 with 7 entries and a pace of 1.5: 7, 10, 15,
  // then by 2 again after unpace() (a cut).
  ChunkCursor c(2, 64);
  c.begin_paced(10, 7, 384);
  EXPECT_EQ(c.end(1000), 17u);
  c.submitted(17);
  EXPECT_EQ(c.end(1000), 27u);
  c.submitted(27);
  EXPECT_EQ(c.end(1000), 42u);
  EXPECT_TRUE(c.paced());
  c.unpace();
  EXPECT_FALSE(c.paced());
  c.submitted(42);
  EXPECT_EQ(c.end(1000), 72u);
  // A pace that would not grow at least one entry a chunk still does.
  c.begin_paced(0, 2, 257);
  c.submitted(2);
  EXPECT_EQ(c.end(1000), 5u);
  // Sizes within first and max; a pace of at most 1 or at least the growth is the growth.
  c.begin_paced(0, 1, 384);
  EXPECT_EQ(c.end(1000), 2u);
  c.begin_paced(0, 5000, 384);
  EXPECT_EQ(c.end(1000), 64u);
  for (uint32_t pace : {0u, 200u, 256u, 512u, 4096u}) {
    c.begin_paced(0, 4, pace);
    c.submitted(4);
    EXPECT_EQ(c.end(1000), 12u) << pace;
  }
  // begin() ends a pace too.
  c.begin_paced(0, 4, 384);
  c.begin(0);
  c.submitted(2);
  EXPECT_EQ(c.end(1000), 6u);
}

TEST(ChunkCursor, SizesAreSane) {
  ChunkCursor zero(0, 0);  // a first chunk of at least 1, the largest at least the first
  EXPECT_EQ(chunks(zero, 0, 3), (std::vector<size_t>{1, 1, 1}));
  ChunkCursor inverted(8, 4);
  EXPECT_EQ(chunks(inverted, 0, 20), (std::vector<size_t>{8, 8, 4}));
  EXPECT_EQ(inverted.max(), 8u);
}

TEST(ChunkPolicy, TwoLaunchesAreWorthAGraphOneIsNot) {
  EXPECT_FALSE(worth_a_graph(0, 0, false));
  EXPECT_FALSE(worth_a_graph(1, 1, false));
  EXPECT_TRUE(worth_a_graph(2, 2, false));
  EXPECT_TRUE(worth_a_graph(2, 0, false));  // two copies, or a copy and the program's graph
}

TEST(ChunkPolicy, WithOneLaunchGraphsOneKernelLaunchIsWorthAGraphOneCopyIsNot) {
  EXPECT_TRUE(worth_a_graph(1, 1, true));
  EXPECT_FALSE(worth_a_graph(1, 0, true));  // a copy, a memset or the program's graph
  EXPECT_FALSE(worth_a_graph(1, 1, false));
  EXPECT_FALSE(worth_a_graph(0, 0, true));
  EXPECT_TRUE(worth_a_graph(2, 0, true));
}

TEST(ShortChunks, ASequenceCutShortAgainAndAgainRunsUndeferredForAWhileThatDoubles) {
  ShortChunks s;
  EXPECT_FALSE(s.undeferred());
  for (uint32_t k = 1; k < ShortChunks::kShortLimit; ++k) EXPECT_FALSE(s.cut_short()) << k;
  EXPECT_TRUE(s.cut_short());  // the 32nd in a row
  int undeferred = 0;
  while (s.undeferred()) ++undeferred;
  EXPECT_EQ(undeferred, 1024);
  // Again: twice as long.
  for (uint32_t k = 1; k < ShortChunks::kShortLimit; ++k) s.cut_short();
  EXPECT_TRUE(s.cut_short());
  undeferred = 0;
  while (s.undeferred()) ++undeferred;
  EXPECT_EQ(undeferred, 2048);
}

TEST(LoneStarts, APlaceCutShortInARowGoesOutAsItComesForGood) {
  LoneStarts l;
  EXPECT_FALSE(l.lone(3));  // nothing known yet
  for (uint8_t i = 1; i < LoneStarts::kLimit; ++i) l.cut_short(3, 10);
  EXPECT_FALSE(l.lone(3));
  l.replayed(3);  // a replay starting there ends the streak
  for (uint8_t i = 1; i < LoneStarts::kLimit; ++i) l.cut_short(3, 10);
  EXPECT_FALSE(l.lone(3));
  l.cut_short(3, 10);
  EXPECT_TRUE(l.lone(3));
  l.replayed(3);
  EXPECT_TRUE(l.lone(3));  // for good
  EXPECT_FALSE(l.lone(4));
  EXPECT_FALSE(l.lone(100));  // beyond the sequence
}

TEST(ShortChunks, AReplayEndsTheStreak) {
  ShortChunks s;
  for (uint32_t k = 1; k < ShortChunks::kShortLimit; ++k) s.cut_short();
  s.replayed();  // chunks that grow replay now and then: never taken for cut short
  for (uint32_t k = 1; k < ShortChunks::kShortLimit; ++k) EXPECT_FALSE(s.cut_short());
  EXPECT_FALSE(s.undeferred());
}

}  // namespace
}  // namespace pygraph
