// The places where a program pauses (pause_places.h): learned from the gaps between recorded
// entries, each place judged on its samples, then asked at every chunk-full check.
#include "graph/pause_places.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

namespace pygraph {
namespace {

constexpr uint64_t GpuTimerLost = ~0ull;  // GpuTimer::kLost

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

// Learned pauses before each place in `at` of a loop of `length` places: 2 rounds of 1 ms
// pauses there, 10 ns elsewhere.
PausePlaces learned(size_t length, std::initializer_list<size_t> at, uint64_t light_ns) {
  PausePlaces p;
  p.start(length, true, 100, light_ns);
  uint64_t now = 1000;
  for (int r = 0; r < 3 && p.learning(); ++r) {
    for (size_t i = 0; i < length; ++i) {
      bool pause = false;
      for (size_t a : at) pause |= a == i;
      p.arrived(i, now += pause ? 1'000'000 : 10);
    }
  }
  return p;
}

// Each chunk from one pause to the next, `rounds` times, weighed with `gpu_ns(place)`.
template <class F>
void weigh(PausePlaces& p, std::initializer_list<size_t> at, int rounds, F gpu_ns) {
  std::vector<size_t> places(at);
  for (int r = 0; r < rounds && p.weighing(); ++r) {
    for (size_t k = 0; k < places.size(); ++k) {
      const size_t start = places[(k + places.size() - 1) % places.size()];
      if (p.wants_weight(start, places[k])) p.weighed(places[k], gpu_ns(places[k]));
    }
  }
}

TEST(PausePlaces, APauseWithLittleWorkWaitingIsDropped) {
  // Pauses before places 2, 5 and 8 of 10; the work from the last pause takes 30, 120 and
  // 30 us on the GPU. From the first place on: at 2, 30 us wait (dropped); at 5, 150 (a cut);
  // at 8, 30 (dropped).
  PausePlaces p = learned(10, {2, 5, 8}, 100'000);
  ASSERT_FALSE(p.learning());
  EXPECT_EQ(p.count(), 3u);
  EXPECT_TRUE(p.weighing());
  EXPECT_TRUE(p.before(2) && p.before(5) && p.before(8));  // all cut while weighed
  weigh(p, {2, 5, 8}, 4, [](size_t place) { return place == 5 ? 120'000 : 30'000; });
  EXPECT_FALSE(p.weighing());  // every place has its two samples
  EXPECT_EQ(p.count(), 1u);
  EXPECT_EQ(p.light(), 2u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(p.before(i), i == 5) << i;
}

TEST(PausePlaces, TheWorkWaitingAddsUpOverDroppedPauses) {
  // Four pauses, 60 us of work before each: the second and the fourth wait for 120 us.
  PausePlaces p = learned(10, {2, 4, 6, 8}, 100'000);
  weigh(p, {2, 4, 6, 8}, 4, [](size_t) { return 60'000; });
  EXPECT_FALSE(p.weighing());
  EXPECT_EQ(p.count(), 2u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(p.before(i), i == 4 || i == 8) << i;
}

TEST(PausePlaces, InALoopTheWorkWaitingCarriesIntoTheNextPeriod) {
  // Pauses before places 2, 5 and 8 of a loop of 10, with 60, 150 and 60 us of work before
  // them: the work after the pause at 5 waits at 8 (60 us, dropped), and then at 2 of the next
  // period with its own (120 us): that pause still cuts.
  PausePlaces p = learned(10, {2, 5, 8}, 100'000);
  weigh(p, {2, 5, 8}, 4, [](size_t place) { return place == 5 ? 150'000 : 60'000; });
  EXPECT_FALSE(p.weighing());
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(p.before(i), i == 2 || i == 5) << i;
  EXPECT_EQ(p.light(), 1u);
}

TEST(PausePlaces, TheLargestSampleCounts) {
  PausePlaces p = learned(10, {5}, 100'000);
  uint64_t next = 90'000;
  weigh(p, {5}, 4, [&next](size_t) { return next += 20'000; });  // 110, then 130 us
  EXPECT_FALSE(p.weighing());
  EXPECT_TRUE(p.before(5));
  PausePlaces q = learned(10, {5}, 100'000);
  next = 10'000;
  weigh(q, {5}, 4, [&next](size_t) { return next += 20'000; });  // 30, then 50 us
  EXPECT_FALSE(q.before(5));
  EXPECT_FALSE(q.any());  // no pause left: one empty vector answers
}

TEST(PausePlaces, APauseNeverWeighedKeepsCutting) {
  // The timer lost every time at place 5 (no slot, a driver error): weighing ends after its
  // rounds of requests, place 5 cuts, and the light place 2 before it does not.
  PausePlaces p = learned(10, {2, 5}, 100'000);
  int requests = 0;
  for (int r = 0; r < 100 && p.weighing(); ++r) {
    if (p.wants_weight(5, 2)) p.weighed(2, 10'000);
    if (p.wants_weight(2, 5)) {
      ++requests;
      p.weighed(5, GpuTimerLost);
    }
  }
  EXPECT_FALSE(p.weighing());
  EXPECT_LE(requests, 2 * int(PausePlaces::kWeighRounds));
  EXPECT_TRUE(p.before(5));
  EXPECT_FALSE(p.before(2));
  EXPECT_EQ(p.unweighed(), 1u);
  EXPECT_EQ(p.light(), 1u);
}

TEST(PausePlaces, OnlyAChunkFromOnePauseToTheNextIsWeighed) {
  PausePlaces p = learned(10, {2, 5}, 100'000);
  EXPECT_FALSE(p.wants_weight(3, 5));  // began where a chunk filled
  EXPECT_FALSE(p.wants_weight(2, 7));  // ends at no pause
  EXPECT_TRUE(p.wants_weight(2, 5));
  EXPECT_TRUE(p.weighing());
  // A time that arrives after weighing ended changes nothing.
  weigh(p, {2, 5}, 4, [](size_t) { return 500'000; });
  EXPECT_FALSE(p.weighing());
  p.weighed(5, 1);
  EXPECT_TRUE(p.before(2) && p.before(5));
}

TEST(PausePlaces, ASegmentsStartBeginsAWeighedChunk) {
  // A sequence that does not wrap: the chunk from its start to its pause is weighed.
  PausePlaces p;
  p.start(6, false, 100, 100'000);
  uint64_t now = 1000;
  for (int r = 0; r < 3 && p.learning(); ++r) {
    p.interrupt();
    for (size_t i = 0; i < 6; ++i) p.arrived(i, now += i == 3 ? 1'000'000 : 10);
  }
  ASSERT_TRUE(p.weighing());
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(p.wants_weight(0, 3));
    p.weighed(3, 20'000);
  }
  EXPECT_FALSE(p.weighing());
  EXPECT_FALSE(p.any());
  EXPECT_EQ(p.light(), 1u);
}

TEST(PausePlaces, NoLightThresholdWeighsNothing) {
  PausePlaces p = learned(10, {5}, 0);
  EXPECT_FALSE(p.weighing());
  EXPECT_FALSE(p.wants_weight(5, 5));
  EXPECT_TRUE(p.before(5));
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
