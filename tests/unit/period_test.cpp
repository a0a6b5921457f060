// Periods: the canonical rotation that gives a loop one identity, and the unrolled length graph
// mode follows.
#include "graph/period.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

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

}  // namespace
}  // namespace pygraph
