#include "graph/sequence_detector.h"

#include <gtest/gtest.h>

#include "graph/token.h"

namespace pygraph {
namespace {

void feed(SequenceDetector& d, const std::vector<uint64_t>& tokens) {
  for (uint64_t t : tokens) d.push(t);
}

TEST(SequenceDetector, RepeatedSegmentIsOneSequenceWithItsBoundary) {
  SequenceDetector d;
  for (int step = 0; step < 5; ++step) {
    feed(d, {11, 12, 13, 14, 15});
    const Sequence* s = d.boundary(/*tag=*/7);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->occurrences, uint64_t(step + 1));
  }
  ASSERT_EQ(d.sequences().size(), 1u);
  const Sequence& s = d.sequences()[0];
  EXPECT_FALSE(s.periodic);
  EXPECT_EQ(s.tokens, (std::vector<uint64_t>{11, 12, 13, 14, 15}));
  EXPECT_EQ(s.ended_by.at(7), 5u);
  EXPECT_EQ(s.first_end, 5u);
  EXPECT_EQ(s.last_end, 25u);
}

TEST(SequenceDetector, ShortLastBatchIsASeparateSequence) {
  SequenceDetector d;
  for (int step = 0; step < 4; ++step) {
    feed(d, {1, 2, 3, 4});
    d.boundary(1);
  }
  feed(d, {1, 2, 5, 4});  // another kernel for the odd size
  const Sequence* last = d.boundary(1);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->occurrences, 1u);
  ASSERT_EQ(d.sequences().size(), 2u);
  EXPECT_EQ(d.sequences()[0].occurrences, 4u);
}

TEST(SequenceDetector, LoopWithoutBoundariesIsFoundByItsPeriod) {
  SequenceDetector d;
  const Sequence* last = nullptr;
  int completions = 0;
  for (int i = 0; i < 10; ++i) {
    for (uint64_t t = 1; t <= 6; ++t) {
      if (const Sequence* s = d.push(t)) {
        last = s;
        ++completions;
      }
    }
  }
  ASSERT_NE(last, nullptr);
  EXPECT_TRUE(last->periodic);
  EXPECT_EQ(last->tokens, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(last->occurrences, 10u);  // the first period is counted when the second confirms it
  EXPECT_EQ(completions, 9);
  EXPECT_EQ(d.sequences().size(), 1u);
}

TEST(SequenceDetector, BrokenPeriodStopsCountingAndResumes) {
  SequenceDetector d;
  for (int i = 0; i < 3; ++i) feed(d, {1, 2, 3, 4, 5});
  ASSERT_EQ(d.sequences().size(), 1u);
  EXPECT_EQ(d.sequences()[0].occurrences, 3u);
  feed(d, {99});  // something else happens once
  EXPECT_EQ(d.sequences()[0].occurrences, 3u);
  for (int i = 0; i < 3; ++i) feed(d, {1, 2, 3, 4, 5});
  ASSERT_EQ(d.sequences().size(), 1u);  // found again: the same loop, whatever its rotation
  EXPECT_GE(d.sequences()[0].occurrences, 4u);
}

TEST(SequenceDetector, ALoopWhoseIterationRepeatsABlockIsFoundByItsIteration) {
  // Two inference steps of timm's EfficientNet-B0 at batch 8 as the GPU run's trace has them
  // (one letter per launch token; the second step launches one kernel of a stage with other
  // attributes, so the loop's period is two steps, 540 launches). Blocks of 17 launches repeat
  // inside each stage: the nearest earlier sight of most launches is one block back, and the
  // detector once proposed only those, so the iteration was never found and 55 % of the run's
  // launches stayed eager (issue 10: nested periods resolve to the outer iteration).
  const std::string two_steps =
      "abcdbcefgchgijkblbcdbcefgcfgijkbkbcdbcemgchgijkbnkbcopcemgchgijqpkpcopcemgchgijkpnkpcdrcem"
      "gchgijqrkrcdrcesgcfgijqrnkrcdrcesgcfgijqrnkrcorcesgcfgijqrkrcorcefgcfgijqrnkrcorcefgcfgijq"
      "rnkrcorcefgcfgijtrurcorcevgcfgijtrnurcorcevgcfgijtrnurcorcevgcfgijtrnurcdrcevgcfgijwrurcex"
      "abcdbcefgchgijkblbcdbcefgcfgijkbkbcdbcemgchgijkbnkbcopcemgchgijqpkpcopcemgchgijkpnkpcdrcem"
      "gchgijqrkrcdrceygcfgijqrnkrcdrceygcfgijqrnkrcorceygcfgijqrkrcorcefgcfgijqrnkrcorcefgcfgijq"
      "rnkrcorcefgcfgijtrurcorcevgcfgijtrnurcorcevgcfgijtrnurcorcevgcfgijtrnurcdrcevgcfgijwrurcex";
  ASSERT_EQ(two_steps.size(), 540u);
  SequenceDetector d;
  const Sequence* iteration = nullptr;
  for (int i = 0; i < 6; ++i) {
    for (char c : two_steps) {
      const Sequence* s = d.push(uint64_t(c));
      if (s && s->tokens.size() == two_steps.size()) iteration = s;
    }
  }
  ASSERT_NE(iteration, nullptr);
  EXPECT_TRUE(iteration->periodic);
  EXPECT_GE(iteration->occurrences, 4u);  // found by the third time round, then every time
}

TEST(SequenceDetector, ALoopFoundAgainAtAnotherLaunchIsTheSameSequence) {
  // The loop [1 2 3 4 5] runs, a sync breaks it, and it goes on from launch 3: one sequence,
  // in one rotation, and the phase it reports is where the loop goes on.
  SequenceDetector d;
  const std::vector<uint64_t> loop = {1, 2, 3, 4, 5};
  int checked = 0;
  auto run = [&](size_t first, int rounds) {
    const Sequence* pending = nullptr;
    for (int i = 0; i < rounds; ++i) {
      for (size_t k = 0; k < loop.size(); ++k) {
        const uint64_t t = loop[(first + k) % loop.size()];
        if (pending) {
          EXPECT_EQ(pending->tokens[d.periodic_phase()], t);
          ++checked;
        }
        pending = d.push(t);
      }
    }
  };
  auto periodic = [&] {
    std::vector<const Sequence*> out;
    for (const Sequence& s : d.sequences())
      if (s.periodic) out.push_back(&s);
    return out;
  };
  run(0, 4);
  ASSERT_EQ(periodic().size(), 1u);
  const std::vector<uint64_t> canonical = periodic()[0]->tokens;
  const uint64_t before = periodic()[0]->occurrences;
  d.boundary(9);  // (the 20 launches before it are also a segment: another kind of sequence)
  run(2, 4);
  ASSERT_EQ(periodic().size(), 1u);
  EXPECT_EQ(periodic()[0]->tokens, canonical);
  EXPECT_GT(periodic()[0]->occurrences, before);
  EXPECT_GE(checked, 4);
}

TEST(SequenceDetector, AShortRunOfOneKernelIsNoSequence) {
  SequenceDetector d;  // min_run 32: a run of one kernel shorter than that is no loop yet
  for (int i = 0; i < 32; ++i) EXPECT_EQ(d.push(42), nullptr);
  EXPECT_TRUE(d.sequences().empty());
  SequenceDetector segments;  // nor a segment of one launch: a graph of it saves nothing
  for (int i = 0; i < 3; ++i) {
    segments.push(42);
    EXPECT_EQ(segments.boundary(0), nullptr);
  }
  EXPECT_TRUE(segments.sequences().empty());
}

TEST(SequenceDetector, ALongRunOfOneKernelIsALoopOfPeriodOne) {
  // A plain C++ benchmark loop: one kernel launched again and again, no sync. It is a loop of
  // period one from its 33rd launch on (the run of 32 after the first), one occurrence a launch.
  SequenceDetector d;
  const Sequence* first = nullptr;
  int at = 0;
  for (int i = 1; i <= 1000; ++i) {
    const Sequence* s = d.push(42);
    if (s && !first) {
      first = s;
      at = i;
    }
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(at, 33);
  ASSERT_EQ(d.sequences().size(), 1u);
  const Sequence& s = d.sequences()[0];
  EXPECT_TRUE(s.periodic);
  EXPECT_EQ(s.tokens, std::vector<uint64_t>{42});
  EXPECT_EQ(s.occurrences, 1000u);  // the run before it counts
  EXPECT_EQ(d.periodic_phase(), 0u);
}

TEST(SequenceDetector, RunsOfOneKernelInsideALoopLeaveItsIterationToBeFound) {
  // An iteration with a run of 20 launches of one kernel (elementwise kernels of one shape in
  // a row): the run is no loop of its own, the iteration is found.
  std::vector<uint64_t> iteration = {1, 2};
  iteration.insert(iteration.end(), 20, 7);
  iteration.insert(iteration.end(), {3, 4, 5});
  SequenceDetector d;
  for (int i = 0; i < 10; ++i) feed(d, iteration);
  ASSERT_EQ(d.sequences().size(), 1u);
  EXPECT_EQ(d.sequences()[0].tokens.size(), iteration.size());
  EXPECT_GE(d.sequences()[0].occurrences, 8u);
}

TEST(SequenceDetector, ALongRunInsideALoopIsALoopOnlyUntilTheIterationIsFound) {
  // The run is long enough to be a loop of its own in the first iteration. From the second on
  // the iteration is the candidate, and once found it is the only loop counted, run and all.
  std::vector<uint64_t> iteration = {1, 2};
  iteration.insert(iteration.end(), 50, 7);
  iteration.insert(iteration.end(), {3, 4, 5});
  SequenceDetector d;
  feed(d, iteration);
  ASSERT_EQ(d.sequences().size(), 1u);
  const uint64_t run_count = d.sequences()[0].occurrences;
  EXPECT_EQ(d.sequences()[0].tokens, std::vector<uint64_t>{7});
  for (int i = 0; i < 9; ++i) feed(d, iteration);
  ASSERT_EQ(d.sequences().size(), 2u);
  EXPECT_EQ(d.sequences()[0].occurrences, run_count);  // never again
  EXPECT_EQ(d.sequences()[1].tokens.size(), iteration.size());
  EXPECT_GE(d.sequences()[1].occurrences, 8u);
}

TEST(SequenceDetector, ARunCountsOnlyWithinTheWindow) {
  // min_run beyond what the window holds is cut to max_length: a run of one kernel is still a
  // loop, found within the window.
  DetectorOptions o;
  o.max_length = 8;
  o.min_run = 1000;
  SequenceDetector d(o);
  for (int i = 0; i < 20; ++i) d.push(42);
  ASSERT_EQ(d.sequences().size(), 1u);
  EXPECT_EQ(d.sequences()[0].tokens, std::vector<uint64_t>{42});
}

TEST(SequenceDetector, PeriodsDoNotSpanBoundaries) {
  SequenceDetector d;
  for (int i = 0; i < 4; ++i) {
    feed(d, {1, 2, 3});
    d.boundary(0);
  }
  for (const auto& s : d.sequences()) EXPECT_FALSE(s.periodic);
}

TEST(SequenceDetector, MemoryIsBounded) {
  DetectorOptions o;
  o.max_sequences = 3;
  o.max_length = 8;
  SequenceDetector d(o);
  for (uint64_t k = 0; k < 10; ++k) {
    feed(d, {100 + k, 200 + k});
    d.boundary(0);
  }
  EXPECT_EQ(d.sequences().size(), 3u);
  EXPECT_EQ(d.sequences().back().id, 10u);  // the newest stay
  EXPECT_EQ(d.evictions(), 7u);             // one dropped each time it was full
  EXPECT_EQ(d.find(7), nullptr);
  std::vector<uint64_t> long_segment(9, 5);
  long_segment[3] = 6;
  feed(d, long_segment);
  EXPECT_EQ(d.boundary(0), nullptr);  // longer than max_length: not tracked
}

TEST(LaunchToken, ShapeNotArgumentsMakesTheToken) {
  LaunchShape a{1, {128, 1, 1}, 0, 0, 0};
  LaunchShape b = a;
  EXPECT_EQ(launch_token(a), launch_token(b));
  b.block[0] = 64;
  EXPECT_NE(launch_token(a), launch_token(b));
  b = a;
  b.stream = 7;
  EXPECT_NE(launch_token(a), launch_token(b));
  b = a;
  b.function_id = 2;
  EXPECT_NE(launch_token(a), launch_token(b));
  EXPECT_NE(launch_token(a), 0u);
  uint8_t value[64] = {1};
  const uint64_t h1 = attr_hash_add(0, 5, value);
  value[0] = 2;
  EXPECT_NE(h1, attr_hash_add(0, 5, value));
  EXPECT_NE(h1, attr_hash_add(0, 6, value));
}

TEST(SequenceDetector, TheLatestFoundSegmentOfAFirstTokenIsKept) {
  SequenceDetector d;  // min_repeats 2
  EXPECT_EQ(d.latest_found_segment(7), nullptr);
  feed(d, {7, 8, 9});
  d.boundary(0);
  EXPECT_EQ(d.latest_found_segment(7), nullptr);  // seen once: not found yet
  feed(d, {7, 8, 9});
  d.boundary(0);
  const Sequence* a = d.latest_found_segment(7);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->tokens, (std::vector<uint64_t>{7, 8, 9}));
  const uint32_t a_id = a->id;
  // Another segment with the same first token: seen once it is not found, and `a` stays.
  feed(d, {7, 5});
  d.boundary(0);
  EXPECT_EQ(d.latest_found_segment(7)->id, a_id);
  feed(d, {7, 5});
  d.boundary(0);
  EXPECT_EQ(d.latest_found_segment(7)->tokens, (std::vector<uint64_t>{7, 5}));
  feed(d, {7, 8, 9});
  d.boundary(0);
  EXPECT_EQ(d.latest_found_segment(7)->id, a_id);  // occurred last again
  EXPECT_EQ(d.find(a_id), d.latest_found_segment(7));
  EXPECT_EQ(d.latest_found_segment(8), nullptr);  // no segment begins with 8
}

TEST(SequenceDetector, AFullTableDropsItsOldestEighthAndItsIndexesFollow) {
  DetectorOptions o;
  o.max_sequences = 16;
  SequenceDetector d(o);
  for (uint64_t k = 0; k < 16; ++k) {
    for (int rep = 0; rep < 2; ++rep) {
      feed(d, {100 + k, 200 + k});
      d.boundary(0);
    }
  }
  ASSERT_EQ(d.sequences().size(), 16u);
  const uint32_t first_id = d.sequences()[0].id, second_id = d.sequences()[1].id;
  ASSERT_NE(d.latest_found_segment(100), nullptr);
  // A 17th: the two least recently seen go, the others keep their order and stay findable.
  feed(d, {300, 400});
  d.boundary(0);
  EXPECT_EQ(d.sequences().size(), 15u);
  EXPECT_EQ(d.find(first_id), nullptr);
  EXPECT_EQ(d.find(second_id), nullptr);
  EXPECT_EQ(d.latest_found_segment(100), nullptr);
  EXPECT_EQ(d.latest_found_segment(101), nullptr);
  for (size_t i = 1; i < d.sequences().size(); ++i) {
    EXPECT_LT(d.sequences()[i - 1].id, d.sequences()[i].id);
  }
  for (const Sequence& s : d.sequences()) EXPECT_EQ(d.find(s.id), &s);
  for (uint64_t k = 2; k < 16; ++k) {
    const Sequence* s = d.latest_found_segment(100 + k);
    ASSERT_NE(s, nullptr) << k;
    EXPECT_EQ(s->tokens, (std::vector<uint64_t>{100 + k, 200 + k}));
  }
  // Seen again, a kept one is counted on (its occurrences), not added anew.
  feed(d, {110, 210});
  EXPECT_EQ(d.boundary(0), d.latest_found_segment(110));
  EXPECT_EQ(d.latest_found_segment(110)->occurrences, 3u);
}

TEST(SequenceDetector, AFullTableDropsTheOldestFirstWhenTwoEndedAtTheSameLaunch) {
  DetectorOptions o;
  o.max_sequences = 16;  // drops 2 at a time
  SequenceDetector d(o);
  auto loop = [&] {  // a loop and the segment it is: both end at the boundary's launch
    feed(d, {1, 2, 1, 2, 1, 2});
    d.boundary(0);
  };
  loop();
  feed(d, {50, 51});  // the oldest once the loop is seen again, and after it in the table
  d.boundary(0);
  const uint32_t oldest = d.sequences().back().id;
  loop();
  ASSERT_EQ(d.sequences().size(), 3u);
  const uint64_t tie = d.sequences()[0].last_end;
  ASSERT_EQ(d.sequences()[1].last_end, tie);
  for (uint64_t k = 0; k < 13; ++k) {
    feed(d, {100 + k, 200 + k});
    d.boundary(0);
  }
  ASSERT_EQ(d.sequences().size(), 16u);
  feed(d, {300, 400});
  d.boundary(0);
  EXPECT_EQ(d.find(oldest), nullptr);  // older than both: it goes, and one of the two
  int tied = 0;
  for (const Sequence& s : d.sequences()) tied += s.last_end == tie;
  EXPECT_EQ(tied, 1);
  EXPECT_EQ(d.sequences().size(), 15u);
}

}  // namespace
}  // namespace pygraph
