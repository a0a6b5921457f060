// The measured decision per sequence: windows of eager and graph iterations in turn decide,
// with a threshold and a majority of pairs; the switch's first iteration is no sample; the
// verdict is measured again when the replays or the times change, and an eager one after a
// while; a cached verdict applies at once.
#include "decisions/decision_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

namespace pygraph {
namespace {

// Drives a policy through `n` iteration starts (each closes the iteration before it) whose time
// depends on the arm chosen; returns the total time. `time(arm, i)` gives iteration i's
// duration in ns. A verdict after 6 windows of 8 iterations comes at the 49th start.
uint64_t drive(SequencePolicy& p, int n, const std::function<double(Arm, int)>& time,
               uint64_t* clock) {
  uint64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const Arm arm = p.next(*clock);
    const auto t = static_cast<uint64_t>(time(arm, i));
    *clock += t;
    total += t;
  }
  return total;
}

// Iteration times for 97 starts of pairs of windows (a graph window and an eager one, 8
// iterations each): 1 ms eagerly, `ratio[k]` ms as graphs in pair k (the last one after that).
std::function<double(Arm, int)> pairs_at(std::vector<double> ratio) {
  return [ratio](Arm a, int i) {
    const size_t k = std::min<size_t>(static_cast<size_t>(i / 16), ratio.size() - 1);
    return a == Arm::kGraph ? 1e6 * ratio[k] : 1e6;
  };
}

TEST(DecisionPolicy, GraphsThatPayAreKeptAfterThreePairsOfWindows) {
  SequencePolicy p;
  uint64_t clock = 1;
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(0, 20'000);
  auto time = [&](Arm a, int) { return (a == Arm::kGraph ? 850'000 : 1'000'000) + noise(rng); };
  drive(p, 48, time, &clock);
  EXPECT_FALSE(p.decided());
  drive(p, 1, time, &clock);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  EXPECT_NEAR(p.gain_percent(), 15.0, 2.0);
  EXPECT_EQ(p.pairs_won(), 3u);
  EXPECT_EQ(p.source(), "measured");
  EXPECT_NE(p.why().find("graph: graphs 1"), std::string::npos) << p.why();
  EXPECT_EQ(p.next(clock), Arm::kGraph);
}

TEST(DecisionPolicy, ARestartedMeasurementBeginsAgainFromItsFirstWindow) {
  // Half-way (3 windows), then restarted (a long pause while another sequence measured): the
  // windows before it are no half of the measurement after it, which takes 6 windows again.
  SequencePolicy p;
  uint64_t clock = 1;
  auto time = [](Arm a, int) { return a == Arm::kGraph ? 850'000.0 : 1'000'000.0; };
  drive(p, 28, time, &clock);
  EXPECT_EQ(p.windows(), 3u);
  p.restart();
  clock += 1'000'000'000;
  drive(p, 48, time, &clock);
  EXPECT_FALSE(p.decided()) << p.why();
  drive(p, 1, time, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  p.restart();  // decided: nothing to restart
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
}

TEST(DecisionPolicy, GraphsThatDoNotPayGoBackToEager) {
  for (double graph_ns : {1'000'000.0, 1'010'000.0, 990'000.0}) {  // +0 %, slower, 1 % faster
    SequencePolicy p;
    uint64_t clock = 1;
    drive(
        p, 49, [&](Arm a, int) { return a == Arm::kGraph ? graph_ns : 1'000'000; }, &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kEager) << graph_ns << " " << p.why();
    EXPECT_EQ(p.next(clock), Arm::kEager);
  }
}

TEST(DecisionPolicy, OneLuckyPairIsNotEnough) {
  // A 30 % gain in one pair, none in the two others: the pairs disagree, so three more are
  // measured; the median ratio of the six shows no gain.
  SequencePolicy p;
  uint64_t clock = 1;
  int start = 0;  // over both drives
  auto time = [&](Arm a, int) {
    const bool first_pair = start++ < 16;
    return a == Arm::kGraph && first_pair ? 700'000.0 : 1e6;
  };
  drive(p, 49, time, &clock);
  ASSERT_FALSE(p.decided());
  EXPECT_EQ(p.pairs(), 6u);
  EXPECT_NE(p.why().find("window 7 of 12; the first pairs disagreed"), std::string::npos)
      << p.why();
  drive(p, 48, time, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kEager) << p.why();
  EXPECT_EQ(p.pairs_won(), 1u);
  EXPECT_NE(p.why().find("faster in 1 of 6 window pairs"), std::string::npos) << p.why();
}

TEST(DecisionPolicy, PairsThatDisagreeAreMeasuredTwiceAsLong) {
  // The GPU machine's host switching pace between two windows: graphs won two pairs, one by
  // 30 % and one by 1 %, and lost one by 5 %. The median of three ratios (1 % gain) would say
  // eager; three more pairs, 15 % each, say graph. The figures are the rule's: the gain is
  // 1 - the median ratio, and the graph time the eager median times that ratio.
  SequencePolicy p;
  uint64_t clock = 1;
  drive(p, 97, pairs_at({0.70, 1.05, 0.99, 0.85, 0.85, 0.85}), &clock);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  EXPECT_EQ(p.pairs_won(), 5u);
  EXPECT_NEAR(p.gain_percent(), 15.0, 1e-9);
  EXPECT_NEAR(p.graph_ns(), 850'000.0, 1e-3);
  EXPECT_NEAR(p.eager_ns(), 1'000'000.0, 1e-3);
  // Pairs that all agree decide after three: graphs slower in every one.
  SequencePolicy q;
  drive(
      q, 49, [](Arm a, int) { return a == Arm::kGraph ? 1'050'000.0 : 1'000'000.0; }, &clock);
  EXPECT_EQ(q.phase(), SequencePolicy::Phase::kEager) << q.why();
  EXPECT_EQ(q.pairs(), 3u);
  EXPECT_NEAR(q.gain_percent(), -5.0, 1e-9);
}

TEST(DecisionPolicy, TheFirstIterationOfAWindowIsNoSample) {
  // Building graphs makes each graph window's first iteration 50 times slower.
  SequencePolicy p;
  uint64_t clock = 1;
  drive(
      p, 49,
      [](Arm a, int i) {
        if (a == Arm::kGraph && i % 8 == 0) return 50'000'000.0;
        return a == Arm::kGraph ? 800'000.0 : 1'000'000.0;
      },
      &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  EXPECT_NEAR(p.gain_percent(), 20.0, 0.1);
}

TEST(DecisionPolicy, AnInterruptedIterationIsNoSample) {
  SequencePolicy p;
  uint64_t clock = 1;
  for (int i = 0; i < 200 && !p.decided(); ++i) {
    const Arm a = p.next(clock);
    clock += a == Arm::kGraph ? 800'000 : 1'000'000;
    if (i % 3 == 2) {
      p.interrupt();           // the sequence went elsewhere: a long pause follows
      clock += 1'000'000'000;  // that must never count as an iteration
    }
  }
  ASSERT_TRUE(p.decided());
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  EXPECT_NEAR(p.gain_percent(), 20.0, 0.1);
}

TEST(DecisionPolicy, AGraphVerdictIsMeasuredAgainWhenThingsChange) {
  auto decided_graph = [](SequencePolicy* p, uint64_t* clock) {
    p->replay_figures(2.0, 40.0);
    drive(
        *p, 49, [](Arm a, int) { return a == Arm::kGraph ? 800'000.0 : 1'000'000.0; }, clock);
    ASSERT_EQ(p->phase(), SequencePolicy::Phase::kGraph);
  };
  {  // graph iterations drift by more than 15 % for 3 windows in a row
    SequencePolicy p;
    uint64_t clock = 1;
    decided_graph(&p, &clock);
    drive(
        p, 8, [](Arm, int) { return 800'000.0; }, &clock);  // the first window: the reference
    drive(
        p, 8, [](Arm, int) { return 900'000.0; }, &clock);  // within 15 %: stays
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
    drive(
        p, 16, [](Arm, int) { return 950'000.0; }, &clock);  // two slow windows: noise
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
    drive(
        p, 8, [](Arm, int) { return 800'000.0; }, &clock);  // back: the count starts again
    drive(
        p, 16, [](Arm, int) { return 950'000.0; }, &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
    drive(
        p, 8, [](Arm, int) { return 950'000.0; }, &clock);  // the third in a row
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
    EXPECT_EQ(p.measurements(), 1u);
    EXPECT_NE(p.why().find("again: graph iterations drifted from 800.0 to 950.0 us"),
              std::string::npos)
        << p.why();
  }
  {  // chunks that grow: more patched nodes and launches per replay, the same per launch
    SequencePolicy p;
    uint64_t clock = 1;
    decided_graph(&p, &clock);
    p.replay_figures(8.0, 160.0);
    p.replay_figures(8.0, 160.0);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
  }
  {  // more patched nodes per replay, in two reports in a row
    SequencePolicy p;
    uint64_t clock = 1;
    decided_graph(&p, &clock);
    p.replay_figures(2.5, 40.0);
    p.replay_figures(2.5, 40.0);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
    p.replay_figures(6.0, 40.0);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);  // one report: a sync's restart
    p.replay_figures(2.0, 40.0);
    p.replay_figures(6.0, 40.0);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
    p.replay_figures(6.0, 40.0);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
    EXPECT_NE(p.why().find("again: patched nodes per replayed launch grew from 0.05 to 0.15"),
              std::string::npos)
        << p.why();
  }
  {  // fewer launches per replay
    SequencePolicy p;
    uint64_t clock = 1;
    decided_graph(&p, &clock);
    p.replay_figures(2.0, 20.0);
    p.replay_figures(2.0, 20.0);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
    EXPECT_NE(p.why().find("again: launches per replay fell from 40.0 to 20.0"), std::string::npos)
        << p.why();
  }
}

TEST(DecisionPolicy, AGraphVerdictMeasuredAgainStaysWhileItsMedianPairGains) {
  // Pairs that split near the threshold, as compiled-b1's did on a slow host (session 26):
  // graphs win 3 of 6 pairs, and the median ratio is 0.97 (a 3 % gain).
  const auto split_pairs = pairs_at({0.90, 1.0, 0.92, 1.0, 0.94, 1.0});
  auto drifted = [](SequencePolicy* p, uint64_t* clock) {
    drive(
        *p, 49, [](Arm a, int) { return a == Arm::kGraph ? 800'000.0 : 1'000'000.0; }, clock);
    ASSERT_EQ(p->phase(), SequencePolicy::Phase::kGraph);
    drive(
        *p, 8, [](Arm, int) { return 800'000.0; }, clock);  // the reference
    drive(
        *p, 24, [](Arm, int) { return 950'000.0; }, clock);  // three slow windows
    ASSERT_EQ(p->phase(), SequencePolicy::Phase::kMeasuring);
  };
  {  // first measured so: no majority, eager
    SequencePolicy p;
    uint64_t clock = 1;
    drive(p, 97, split_pairs, &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kEager) << p.why();
    EXPECT_EQ(p.pairs_won(), 3u);
    EXPECT_EQ(p.why().find("kept"), std::string::npos) << p.why();
  }
  {  // a graph verdict measured again so: stays graph, and says why
    SequencePolicy p;
    uint64_t clock = 1;
    drifted(&p, &clock);
    drive(p, 97, split_pairs, &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
    EXPECT_EQ(p.pairs(), 6u);
    EXPECT_EQ(p.pairs_won(), 3u);
    EXPECT_NEAR(p.gain_percent(), 3.0, 1e-6);
    EXPECT_NE(p.why().find("kept: a graph verdict measured again needs no majority"),
              std::string::npos)
        << p.why();
    EXPECT_NE(p.why().find("measured again: graph iterations drifted from 800.0 to 950.0 us"),
              std::string::npos)
        << p.why();
  }
  {  // kept so, it is no confirmation: the next drift of 3 windows measures it again
    SequencePolicy p;
    uint64_t clock = 1;
    drifted(&p, &clock);
    drive(p, 97, split_pairs, &clock);
    ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
    drive(
        p, 8, [](Arm, int) { return 970'000.0; }, &clock);  // the reference
    drive(
        p, 24, [](Arm, int) { return 1'200'000.0; }, &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring) << p.why();
  }
  {  // a cached graph verdict measured again after a drift: the same hysteresis
    SequencePolicy p;
    uint64_t clock = 1;
    p.adopt(true, "cached");
    drive(
        p, 9, [](Arm, int) { return 800'000.0; }, &clock);  // the reference
    drive(
        p, 24, [](Arm, int) { return 950'000.0; }, &clock);
    ASSERT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring) << p.why();
    drive(p, 97, split_pairs, &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
    EXPECT_NE(p.why().find("kept"), std::string::npos) << p.why();
  }
  {  // an eager verdict tried again: becoming graph still needs the majority
    PolicyOptions o;
    o.recheck_iterations = 10;
    SequencePolicy p(o);
    uint64_t clock = 1;
    drive(
        p, 49, [](Arm a, int) { return a == Arm::kGraph ? 1'000'000.0 : 1'000'000.0; }, &clock);
    ASSERT_EQ(p.phase(), SequencePolicy::Phase::kEager) << p.why();
    drive(
        p, 10, [](Arm, int) { return 1'000'000.0; }, &clock);
    ASSERT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring) << p.why();
    drive(p, 97, split_pairs, &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kEager) << p.why();
    EXPECT_EQ(p.pairs_won(), 3u);
  }
  {  // measured again under the threshold: eager, however the pairs split
    SequencePolicy p;
    uint64_t clock = 1;
    drifted(&p, &clock);
    drive(p, 97, pairs_at({0.97, 1.01, 0.99, 1.0, 0.985, 1.0}), &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kEager) << p.why();
    EXPECT_LT(p.gain_percent(), 2.0);
  }
}

TEST(DecisionPolicy, ASteadyStateUnlikeTheMeasurementIsNoDrift) {
  // A GPU-bound program timed on the CPU: while windows alternate, graph iterations take
  // 6.5 ms; once graphs run alone the GPU's queue sets the pace, 9 to 11 ms. That is where the
  // verdict leads, not a change: no measurement again.
  SequencePolicy p;
  uint64_t clock = 1;
  drive(
      p, 49, [](Arm a, int) { return a == Arm::kGraph ? 6'500'000.0 : 8'700'000.0; }, &clock);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> pace(9'500'000, 10'500'000);
  drive(
      p, 2000, [&](Arm, int) { return pace(rng); }, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  EXPECT_EQ(p.measurements(), 1u);
}

TEST(DecisionPolicy, AConfirmedGraphVerdictTakesLongerToMeasureAgain) {
  SequencePolicy p;
  uint64_t clock = 1;
  auto measure = [](Arm a, int) { return a == Arm::kGraph ? 800'000.0 : 1'000'000.0; };
  drive(p, 49, measure, &clock);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
  auto drift_by_windows = [&](int windows) {
    drive(
        p, 8, [](Arm, int) { return 800'000.0; }, &clock);  // the reference
    drive(
        p, 8 * windows, [](Arm, int) { return 1'000'000.0; }, &clock);
  };
  drift_by_windows(3);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
  drive(p, 49, measure, &clock);  // graph again: confirmed once
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph);
  drift_by_windows(5);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph);  // now 6 windows
  drive(
      p, 8, [](Arm, int) { return 1'000'000.0; }, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
  EXPECT_EQ(p.measurements(), 2u);
}

TEST(DecisionPolicy, AnEagerVerdictIsTriedAgainLessAndLessOften) {
  PolicyOptions o;
  o.recheck_iterations = 100;
  SequencePolicy p(o);
  uint64_t clock = 1;
  auto same = [](Arm, int) { return 1'000'000.0; };
  drive(p, 49, same, &clock);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kEager);
  drive(p, 50, same, &clock);
  // An eager verdict has nothing to compare: a rescale on the way (a loop unrolled anew) only
  // ends the running iteration, and the count goes on.
  p.rescaled();
  drive(p, 49, same, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kEager);
  drive(p, 1, same, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);  // after 100 eager iterations
  EXPECT_EQ(p.windows(), 6u);
  drive(p, 48, same, &clock);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kEager);
  drive(p, 150, same, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kEager);  // now 200
  drive(p, 60, same, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
}

TEST(DecisionPolicy, ACachedVerdictAppliesAtOnce) {
  SequencePolicy p;
  p.adopt(true, "cached");
  EXPECT_TRUE(p.decided());
  EXPECT_EQ(p.next(1), Arm::kGraph);
  EXPECT_EQ(p.why(), "graph (cached)");
  SequencePolicy q;
  q.adopt(false, "config");
  EXPECT_EQ(q.next(1), Arm::kEager);
}

TEST(DecisionPolicy, ACachedGraphVerdictIsNotMeasuredAgainForRunningFaster) {
  // A warm start: the first windows build the graphs (slow), then they run 20 % faster than
  // that. Faster is no drift; the faster pace is the reference for slowing down later.
  SequencePolicy p;
  p.adopt(true, "cached");
  uint64_t clock = 1;
  drive(
      p, 16, [](Arm, int) { return 1'200'000.0; }, &clock);
  drive(
      p, 80, [](Arm, int) { return 960'000.0; }, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  EXPECT_EQ(p.measurements(), 0u);
  drive(
      p, 32, [](Arm, int) { return 1'150'000.0; }, &clock);  // 20 % slower: 3 windows in a row
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
  EXPECT_NE(p.why().find("again: graph iterations drifted from 960.0 to 1150.0 us"),
            std::string::npos)
      << p.why();
}

TEST(DecisionPolicy, OneFastWindowMovesNoReference) {
  // One window 20 % fast among windows at the usual pace is noise, as one slow one is: the
  // reference stays, and the usual pace after it is no drift (a review's case: with the
  // reference moved down to the fast window, three usual windows read as 25 % slower).
  SequencePolicy p;
  p.adopt(true, "cached");
  uint64_t clock = 1;
  drive(
      p, 33, [](Arm, int) { return 1'000'000.0; }, &clock);
  drive(
      p, 8, [](Arm, int) { return 800'000.0; }, &clock);
  drive(
      p, 40, [](Arm, int) { return 1'000'000.0; }, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  EXPECT_EQ(p.measurements(), 0u);
  // Two fast windows in a row, then the usual pace: still no drift.
  drive(
      p, 16, [](Arm, int) { return 800'000.0; }, &clock);
  drive(
      p, 40, [](Arm, int) { return 1'000'000.0; }, &clock);
  EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
}

TEST(DecisionPolicy, ARescaledOccurrenceIsNoDrift) {
  // A 70-launch loop unrolled anew after its verdict to 3 iterations (its argument period,
  // arg_period.h): each occurrence, which the policy times, spans 3 times the launches. Told so
  // (rescaled()), the verdict takes a fresh reference and stays; untold, 3 windows 3 times as
  // long read as a drift and the loop was measured again (session 32's review).
  for (const bool told : {false, true}) {
    SequencePolicy p;
    uint64_t clock = 1;
    drive(
        p, 49, [](Arm a, int) { return a == Arm::kGraph ? 800'000.0 : 1'000'000.0; }, &clock);
    ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
    drive(
        p, 16, [](Arm, int) { return 800'000.0; }, &clock);  // the reference, and one more
    if (told) p.rescaled();
    // Untold, 3 windows of the new unroll; told, 10.
    drive(
        p, told ? 80 : 24, [](Arm, int) { return 2'400'000.0; }, &clock);
    if (!told) {
      EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
      EXPECT_NE(p.why().find("again: graph iterations drifted from 800.0 to 2400.0 us"),
                std::string::npos)
          << p.why();
      continue;
    }
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
    EXPECT_EQ(p.measurements(), 1u);
    // The fresh reference is watched as the first was: 20 % slower for 3 windows is a drift.
    drive(
        p, 32, [](Arm, int) { return 2'880'000.0; }, &clock);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
    EXPECT_NE(p.why().find("again: graph iterations drifted from 2400.0 to 2880.0 us"),
              std::string::npos)
        << p.why();
  }
}

TEST(DecisionPolicy, ARescaledOccurrenceTakesItsReplayFiguresAnew) {
  // Unrolled anew to fewer launches (128 a replay, then 70): the first report after the rescale
  // (the engine begins it there) is the reference. Untold, two reports of 70 launches a replay
  // against the old unroll's 128 measured again. Rescaled twice before a report (the second
  // leaves nothing to take from the first), the reference is still taken.
  for (const int rescales : {0, 1, 2}) {
    SequencePolicy p;
    uint64_t clock = 1;
    p.replay_figures(0.0, 128.0);
    drive(
        p, 49, [](Arm a, int) { return a == Arm::kGraph ? 800'000.0 : 1'000'000.0; }, &clock);
    ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
    for (int r = 0; r < rescales; ++r) p.rescaled();
    p.replay_figures(0.0, 70.0);
    p.replay_figures(0.0, 70.0);
    if (!rescales) {
      EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring);
      EXPECT_NE(p.why().find("again: launches per replay fell from 128.0 to 70.0"),
                std::string::npos)
          << p.why();
      continue;
    }
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << rescales << ": " << p.why();
    // The new reference is compared with as the first was.
    p.replay_figures(7.0, 35.0);
    p.replay_figures(7.0, 35.0);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring) << rescales;
    EXPECT_NE(p.why().find("again: patched nodes per replayed launch grew from 0.00 to 0.20"),
              std::string::npos)
        << rescales << ": " << p.why();
  }
  {  // a cached verdict compares no replay figures, rescaled or not
    SequencePolicy p;
    p.adopt(true, "cached");
    p.rescaled();
    for (int r = 0; r < 4; ++r) p.replay_figures(7.0, 35.0);
    EXPECT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  }
}

TEST(DecisionPolicy, ARescaledOccurrenceStartsAMeasurementUnderWayOver) {
  // A measurement (started by a drift) whose loop is unrolled anew half-way: its 3 windows so
  // far timed occurrences 3 times as short, no half of a measurement of the new unroll. It
  // starts over from its first window, for the same reason, and decides on the new unroll's
  // windows alone. Untold, the verdict came 21 starts later, from windows of both unrolls.
  SequencePolicy p;
  uint64_t clock = 1;
  auto before = [](Arm a, int) { return a == Arm::kGraph ? 800'000.0 : 1'000'000.0; };
  auto after = [](Arm a, int) { return a == Arm::kGraph ? 2'400'000.0 : 3'000'000.0; };
  drive(p, 49, before, &clock);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  drive(
      p, 8, [](Arm, int) { return 800'000.0; }, &clock);  // the reference
  drive(
      p, 24, [](Arm, int) { return 950'000.0; }, &clock);  // three slow windows
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kMeasuring) << p.why();
  drive(p, 28, before, &clock);
  EXPECT_EQ(p.windows(), 9u);
  p.rescaled();
  EXPECT_EQ(p.windows(), 9u);  // windows completed stay counted
  EXPECT_EQ(p.why().rfind("measuring (window 1 of 6; again: graph iterations drifted from 800.0 "
                          "to 950.0 us",
                          0),
            0u)
      << p.why();
  drive(p, 21, after, &clock);
  EXPECT_FALSE(p.decided()) << p.why();
  EXPECT_EQ(p.windows(), 11u);
  EXPECT_EQ(p.why().rfind("measuring (window 3 of 6; again: graph iterations drifted", 0), 0u)
      << p.why();
  drive(p, 28, after, &clock);
  ASSERT_EQ(p.phase(), SequencePolicy::Phase::kGraph) << p.why();
  EXPECT_EQ(p.measurements(), 2u);
  EXPECT_NEAR(p.gain_percent(), 20.0, 1e-9);
  EXPECT_NEAR(p.eager_ns(), 3'000'000.0, 1e-3);  // the new unroll's eager windows alone
  EXPECT_NE(p.why().find("measured again: graph iterations drifted from 800.0 to 950.0 us"),
            std::string::npos)
      << p.why();
}

TEST(DecisionPolicy, MeasuringCostsUnderOnePercentOfAThousandIterations) {
  SequencePolicy p;
  uint64_t clock = 1;
  auto time = [](Arm a, int) { return a == Arm::kGraph ? 850'000.0 : 1'000'000.0; };
  const uint64_t measured = drive(p, 1000, time, &clock);
  const double all_graph = 1000 * 850'000.0;
  EXPECT_LT(measured / all_graph - 1, 0.01);
}

}  // namespace
}  // namespace pygraph
