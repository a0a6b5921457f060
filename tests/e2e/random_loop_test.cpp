// Randomized differential test of loops without syncs (random_loop_program.cpp): short and
// nested periods, breaks at random launches or on a schedule, odd launches, changing and
// alternating arguments;
// the same digests with and without the shim, while graph mode really follows the loops.
#include <gtest/gtest.h>
#include <unistd.h>

#include "differential.h"
#include "run_program.h"

namespace pygraph::test {
namespace {

constexpr int kSeeds = 2000;

TEST(RandomLoops, GraphModeChangesNoResult) {
  const nlohmann::json s = expect_same_digests(RANDOM_LOOP_PROGRAM, kSeeds, "graph");
  ASSERT_TRUE(s.is_object()) << "no PYGRAPH_STATS written";
  const auto& l = s["launches"];
  EXPECT_EQ(l["seen_by_engine"].get<int>(),
            l["replayed_in_graphs"].get<int>() + l["eager"].get<int>());
  // The loops run as graphs: most launches, many per graph launch, patched where arguments
  // change; breaks and odd launches end loops that are then found again.
  EXPECT_GT(l["replayed_in_graphs"].get<double>(), 0.8 * l["seen_by_engine"].get<double>());
  EXPECT_GT(s["graphs"]["launches_per_replay"].get<double>(), 16.0);
  EXPECT_GT(s["graphs"]["patched_nodes"].get<int>(), 0);
  EXPECT_GT(s["graphs"]["mismatches"].get<int>(), 100);
  EXPECT_GT(s["memops"]["replayed_in_graphs"].get<int>(), 1000);
  // Loops with a scalar in a ring of three are unrolled anew for it (arg_period.h).
  EXPECT_GT(s["graphs"]["loops_unrolled_by_arguments"].get<int>(), 10);
  // Seeds that read on a schedule: a followed segment ended before the program's, and the loop
  // it is made of went on (loop_resume.h, loop_after_segment).
  EXPECT_GT(s["graphs"]["loops_past_segments"].get<int>(), 10);
}

TEST(RandomLoops, MeasuredDecisionsChangeNoResult) {
  // Windows of 2 occurrences, so that sequences switch between graphs and eager runs often
  // (and reach verdicts, timed by the real clock, either way).
  // A fresh decision cache: verdicts of an earlier run (or the user's) would be adopted.
  const std::string cache = temp_path("random-loop-decisions.json");
  const nlohmann::json s = expect_same_digests(RANDOM_LOOP_PROGRAM, kSeeds, "graph",
                                               {{"PYGRAPH_MEASURE_WINDOWS", "1"},
                                                {"PYGRAPH_MEASURE_ITERATIONS", "2"},
                                                {"PYGRAPH_CACHE", cache}});
  unlink(cache.c_str());
  unlink((cache + ".lock").c_str());
  ASSERT_TRUE(s.is_object());
  EXPECT_GT(s["decisions"]["measurements"].get<int>(), 100);
  EXPECT_GT(s["decisions"]["graph"].get<int>() + s["decisions"]["eager"].get<int>(), 10);
  EXPECT_GT(s["eager_launches_by_reason"].value("measuring", 0), 0);
  EXPECT_GT(s["launches"]["replayed_in_graphs"].get<int>(), 0);
}

TEST(RandomLoops, TraceModeChangesNoResult) {
  expect_same_digests(RANDOM_LOOP_PROGRAM, kSeeds, "trace");
}

}  // namespace
}  // namespace pygraph::test
