// One sequence measures at a time (measure_turn.h), on its own.
#include "decisions/measure_turn.h"

#include <gtest/gtest.h>

namespace pygraph {
namespace {

struct Seq {};

TEST(MeasureTurn, SequencesTakingTurnsInAStepMeasureOneAfterTheOther) {
  MeasureTurn<Seq> turn;
  Seq a, b;
  // A step of a then b, both undecided: a takes the turn, b waits, a keeps it while it comes.
  for (int step = 0; step < 10; ++step) {
    EXPECT_EQ(turn.start(&a), nullptr);
    EXPECT_FALSE(turn.waits(&a, false));
    turn.ran(&a, /*measuring=*/true);
    EXPECT_EQ(turn.start(&b), nullptr);
    EXPECT_TRUE(turn.waits(&b, false));
  }
  EXPECT_EQ(turn.holder(), &a);
  // a decides: b takes the turn at its next start; a decided never waits.
  turn.start(&a);
  turn.ran(&a, false);
  EXPECT_EQ(turn.holder(), nullptr);
  turn.start(&b);
  EXPECT_FALSE(turn.waits(&b, false));
  turn.ran(&b, true);
  turn.start(&a);
  EXPECT_FALSE(turn.waits(&a, /*decided=*/true));
  EXPECT_EQ(turn.holder(), &b);
}

TEST(MeasureTurn, AHolderThatStopsComingGivesItsTurnUp) {
  MeasureTurn<Seq> turn;
  Seq setup, loop;
  turn.start(&setup);
  turn.ran(&setup, true);  // met before the loop, then never again
  Seq* gone = nullptr;
  int waited = 0;
  for (int k = 0; k < 100 && !gone; ++k) {
    gone = turn.start(&loop);
    if (!gone) {
      EXPECT_TRUE(turn.waits(&loop, false));
      ++waited;
    }
  }
  EXPECT_EQ(gone, &setup);  // told, so that its running window is no sample
  EXPECT_EQ(waited, int(MeasureTurn<Seq>::kIdleStarts));
  EXPECT_FALSE(turn.waits(&loop, false));
  turn.ran(&loop, true);
  EXPECT_EQ(turn.holder(), &loop);
}

TEST(MeasureTurn, AHolderWhoseWindowsNeverCompleteGivesItsTurnUpForAWhile) {
  MeasureTurn<Seq> turn(/*stuck=*/10);
  Seq variant, other;
  uint64_t blocked = 0;
  int held = 0;
  for (int k = 0; k < 20 && !blocked; ++k) {
    turn.start(&variant);
    ASSERT_FALSE(turn.waits(&variant, false, blocked));
    blocked = turn.ran(&variant, /*measuring=*/true, /*window_done=*/false);
    ++held;
    turn.start(&other);
    EXPECT_EQ(turn.waits(&other, false), !blocked);
  }
  EXPECT_EQ(held, 10);
  EXPECT_EQ(blocked, turn.starts() + MeasureTurn<Seq>::kBlockedStarts - 1);
  EXPECT_EQ(turn.holder(), nullptr);
  // The other measures now; the variant waits until its block ends, as graphs.
  turn.ran(&other, true, false);
  turn.start(&variant);
  EXPECT_TRUE(turn.waits(&variant, false, blocked));
  turn.ran(&other, false);  // the other decided
  EXPECT_TRUE(turn.waits(&variant, false, blocked));
  while (turn.starts() < blocked) turn.start(&other);
  EXPECT_FALSE(turn.waits(&variant, false, blocked));
  // A holder that completes windows keeps the turn.
  MeasureTurn<Seq> fine(10);
  for (int k = 0; k < 100; ++k) {
    fine.start(&variant);
    EXPECT_EQ(fine.ran(&variant, true, k % 8 == 7), 0u) << k;
  }
  EXPECT_EQ(fine.holder(), &variant);
}

}  // namespace
}  // namespace pygraph
