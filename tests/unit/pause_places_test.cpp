// The places where a program pauses (pause_places.h): learned from the gaps between recorded
// entries, each place judged on its samples, then asked at every chunk-full check.
#include "graph/pause_places.h"

#include <gtest/gtest.h>

namespace pygraph {
namespace {

// Rounds of a loop of `length` places, `step` ns apart, `pause` ns before place `at`.
uint64_t rounds(PausePlaces& p, int n, size_t length, uint64_t now, uint64_t step, size_t at,
                uint64_t pause) {
  for (int r = 0; r < n && p.learning(); ++r) {
    for (size_t i = 0; i < length; ++i) {
      now += i == at ? pause : step;
      p.arrived(i, now);
    }
  }
  return now;
}

TEST(PausePlaces, APlaceWhoseEverySampleIsLongIsAPause) {
  PausePlaces p;
  p.start(5, true, 100);
  EXPECT_TRUE(p.learning());
  rounds(p, 3, 5, 1000, 10, 3, 500);
  EXPECT_FALSE(p.learning());  // every place has its two samples
  EXPECT_EQ(p.count(), 1u);
  EXPECT_TRUE(p.any());
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(p.before(i), i == 3) << i;
}

TEST(PausePlaces, OneShortSampleMakesNoPause) {
  PausePlaces p;
  p.start(5, true, 100);
  uint64_t now = rounds(p, 1, 5, 1000, 10, 3, 500);  // long, then short
  now = rounds(p, 1, 5, now, 10, 3, 50);
  rounds(p, 2, 5, now, 10, 3, 500);
  EXPECT_FALSE(p.learning());
  EXPECT_EQ(p.count(), 0u);
  EXPECT_FALSE(p.any());
  EXPECT_FALSE(p.before(3));
}

TEST(PausePlaces, AnInterruptedGapIsNoSample) {
  // Each time before place 3, the engine stopped following (a sync, an eager occurrence):
  // place 3 is never judged; learning stops after its rounds, with no pause there.
  PausePlaces p;
  p.start(5, true, 100);
  uint64_t now = 1000;
  int arrivals = 0;
  while (p.learning()) {
    for (size_t i = 0; i < 5 && p.learning(); ++i) {
      if (i == 3) p.interrupt();
      now += i == 3 ? 1000 : 10;
      p.arrived(i, now);
      ++arrivals;
    }
  }
  EXPECT_EQ(arrivals, 5 * int(PausePlaces::kRounds));
  EXPECT_FALSE(p.any());
}

TEST(PausePlaces, TheEnginesOwnWorkIsNoPause) {
  // A submission after place 1 takes 1 ms (a graph built): the gap before place 2 starts when
  // the engine is done.
  PausePlaces p;
  p.start(4, true, 100);
  uint64_t now = 1000;
  for (int r = 0; r < 4; ++r) {
    for (size_t i = 0; i < 4; ++i) {
      now += 10;
      p.arrived(i, now);
      if (i == 1) p.done_at(now += 1'000'000);
    }
  }
  EXPECT_FALSE(p.learning());
  EXPECT_FALSE(p.any());
}

TEST(PausePlaces, ASegmentsFirstPlaceIsNeverAPause) {
  // What comes before a segment's first place is a boundary (a sync), however long.
  PausePlaces p;
  p.start(4, false, 100);
  uint64_t now = 1000;
  for (int r = 0; r < 3; ++r) {
    p.interrupt();
    for (size_t i = 0; i < 4; ++i) p.arrived(i, now += i == 0 ? 5000 : 10);
  }
  EXPECT_FALSE(p.learning());  // judged from its other places
  EXPECT_FALSE(p.before(0));
  EXPECT_FALSE(p.any());
}

TEST(PausePlaces, NoThresholdLearnsNothing) {
  PausePlaces p;
  p.start(5, true, 0);
  EXPECT_FALSE(p.learning());
  p.arrived(0, 10);
  p.arrived(1, 10'000'000);
  EXPECT_FALSE(p.any());
  EXPECT_FALSE(p.before(1));
}

}  // namespace
}  // namespace pygraph
