// Periods: the canonical rotation that gives a loop one identity, and the unrolled length graph
// mode follows.
#include "graph/period.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "graph/arg_period.h"

namespace pygraph {
namespace {

std::vector<uint64_t> rotated(const std::vector<uint64_t>& t, size_t r) {
  std::vector<uint64_t> out(t.size());
  for (size_t k = 0; k < t.size(); ++k) out[k] = t[(r + k) % t.size()];
  return out;
}

TEST(Period, EveryRotationOfALoopHasTheSameCanonicalForm) {
  const std::vector<std::vector<uint64_t>> loops = {
      {7, 3, 9, 3, 1, 8},        // distinct least token
      {5, 2, 5, 2, 9, 2, 5, 1},  // repeated prefixes of the least rotation
      {4, 4, 4, 1, 4, 4, 1, 4},  // runs
      {2, 9},
      {6},
  };
  for (const auto& loop : loops) {
    const std::vector<uint64_t> canonical = rotated(loop, least_rotation(loop.data(), loop.size()));
    for (size_t r = 0; r < loop.size(); ++r) {
      const std::vector<uint64_t> other = rotated(loop, r);
      EXPECT_EQ(rotated(other, least_rotation(other.data(), other.size())), canonical);
    }
    // It is the least of all rotations.
    for (size_t r = 0; r < loop.size(); ++r) EXPECT_LE(canonical, rotated(loop, r));
  }
}

TEST(Period, ALoopThatRepeatsItselfHasOneCanonicalForm) {
  const std::vector<uint64_t> t = {3, 1, 3, 1, 3, 1};
  const size_t r = least_rotation(t.data(), t.size());
  EXPECT_EQ(t[r], 1u);
  EXPECT_EQ(least_rotation(t.data(), 0), 0u);
}

TEST(Period, ShortPeriodsUnrollToAPowerOfTwoMultipleWithinAChunk) {
  EXPECT_EQ(period_unroll(2, 8, 128), 64u);  // a fused layer of two launches
  EXPECT_EQ(period_unroll(5, 8, 128), 16u);  // a CuPy loop: 80 launches
  EXPECT_EQ(period_unroll(60, 8, 128), 2u);  // a compiled forward
  EXPECT_EQ(period_unroll(64, 8, 128), 2u);  // exactly a chunk
  EXPECT_EQ(period_unroll(65, 8, 128), 1u);
  EXPECT_EQ(period_unroll(300, 8, 128), 1u);  // longer than a chunk: chunks within it
  EXPECT_EQ(period_unroll(3, 16, 8), 8u);     // the minimum wins over a small chunk
  EXPECT_EQ(period_unroll(0, 8, 128), 1u);
}

TEST(Period, AnArgumentPeriodUnrollsToItsMultiple) {
  EXPECT_EQ(period_unroll(5, 8, 128, 1), 16u);  // as without one
  EXPECT_EQ(period_unroll(5, 8, 128, 2), 16u);  // double buffers: a power of two already
  EXPECT_EQ(period_unroll(5, 8, 128, 3), 24u);  // three buffers: 120 launches, not 80
  EXPECT_EQ(period_unroll(2, 8, 128, 7), 56u);
  EXPECT_EQ(period_unroll(60, 8, 128, 3), 3u);  // longer than a chunk: chunks within it
  EXPECT_EQ(period_unroll(60, 8, 128, 4), 4u);
  EXPECT_EQ(period_unroll(1, 16, 8, 3), 24u);   // the minimum still wins: 3 times 8
  EXPECT_EQ(period_unroll(5, 8, 128, 0), 16u);  // 0 reads as 1
}

// Hashes of `iterations` iterations of a loop of `period` launches, launch i of iteration t
// hashing to f(t, i), fed in order from ordinal `from`.
template <class F>
bool feed(ArgPeriod& a, size_t period, size_t iterations, F f, uint64_t from = 0) {
  bool done = false;
  for (size_t t = 0; t < iterations; ++t)
    for (size_t i = 0; i < period; ++i) done = a.seen(from + t * period + i, f(t, i)) || done;
  return done;
}

TEST(ArgPeriod, TheLeastNumberOfIterationsAfterWhichEveryArgumentCameBack) {
  for (uint32_t m : {1u, 2u, 3u, 5u, 7u, 8u}) {
    ArgPeriod a;
    a.start(4);
    // Launch 2 cycles through m values; the others never change.
    EXPECT_TRUE(feed(a, 4, ArgPeriod::kMaxIterations + 1,
                     [&](size_t t, size_t i) { return i == 2 ? 100 + t % m : i; }));
    EXPECT_FALSE(a.learning());
    EXPECT_EQ(a.iterations(), m) << m;
  }
}

TEST(ArgPeriod, ArgumentsThatNeverComeBackChangeNothing) {
  ArgPeriod a;
  a.start(3);
  EXPECT_TRUE(feed(a, 3, ArgPeriod::kMaxIterations + 1,
                   [](size_t t, size_t i) { return i == 0 ? 1000 + t : i; }));  // a counter
  EXPECT_EQ(a.iterations(), 1u);
  // Learned once: later launches are not looked at.
  EXPECT_FALSE(a.seen(1000, 5));
  EXPECT_EQ(a.iterations(), 1u);
}

TEST(ArgPeriod, AHoleShorterThanAPeriodIsAlikeAndALongerGapStartsOver) {
  auto cycle3 = [](size_t t, size_t i) { return i == 1 ? 50 + t % 3 : 7; };
  {
    // Launch 3 of each iteration is an event op issued where it was: never seen.
    ArgPeriod a;
    a.start(5);
    for (size_t t = 0; t <= ArgPeriod::kMaxIterations; ++t)
      for (size_t i = 0; i < 5; ++i)
        if (i != 3) a.seen(t * 5 + i, cycle3(t, i));
    EXPECT_FALSE(a.learning());
    EXPECT_EQ(a.iterations(), 3u);
  }
  {
    // Three iterations, then a gap of a whole turn (an eager occurrence): what came before is
    // another phase of the cycle, so learning starts over after it.
    ArgPeriod a;
    a.start(5);
    EXPECT_FALSE(feed(a, 5, 3, cycle3));
    EXPECT_FALSE(feed(a, 5, ArgPeriod::kMaxIterations, cycle3, 5 * 4));
    EXPECT_TRUE(a.learning());
    constexpr size_t kLast = ArgPeriod::kMaxIterations;
    EXPECT_TRUE(feed(
        a, 5, 1, [&](size_t t, size_t i) { return cycle3(t + kLast, i); }, 5 * (4 + kLast)));
    EXPECT_EQ(a.iterations(), 3u);
  }
}

TEST(ArgPeriod, ALoopThatNeverRunsLongEnoughIsGivenUp) {
  // Three iterations between syncs, then a resume a period later: learning starts over each
  // time, and stops trying after kMaxRestarts (it would hash every launch for good).
  ArgPeriod a;
  a.start(4);
  auto same = [](size_t, size_t i) { return i; };
  uint64_t at = 0;
  for (uint32_t run = 0; run <= ArgPeriod::kMaxRestarts + 1; ++run, at += 4 * 4) {
    EXPECT_TRUE(a.learning()) << run;
    EXPECT_FALSE(feed(a, 4, 3, same, at));
  }
  EXPECT_FALSE(a.learning());
  EXPECT_EQ(a.iterations(), 1u);
  EXPECT_FALSE(feed(a, 4, ArgPeriod::kMaxIterations + 1, same, at));  // nothing more looked at
}

TEST(ArgPeriod, LongLoopsAreNotLearned) {
  ArgPeriod a;
  a.start(ArgPeriod::kMaxPeriod + 1);
  EXPECT_FALSE(a.learning());
  EXPECT_FALSE(a.seen(0, 1));
  EXPECT_EQ(a.iterations(), 1u);
  a.start(0);
  EXPECT_FALSE(a.learning());
}

}  // namespace
}  // namespace pygraph
