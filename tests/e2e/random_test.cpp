// Randomized differential test: thousands of generated programs (random_program.cpp) give the
// same digest of host-observed values with and without the shim.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "differential.h"
#include "run_program.h"

namespace pygraph::test {
namespace {

constexpr int kSeeds = 3000;

nlohmann::json random_programs_in(const char* mode) {
  return expect_same_digests(RANDOM_PROGRAM, kSeeds, mode);
}

TEST(Random, TraceModeChangesNoResult) {
  random_programs_in("trace");
}
TEST(Random, GraphModeChangesNoResult) {
  const nlohmann::json s = random_programs_in("graph");
  ASSERT_TRUE(s.is_object()) << "no PYGRAPH_STATS written";
  // The programs exercise graph mode for real: graphs replayed, sequences broken, early flushes.
  EXPECT_GT(s["graphs"]["replays"].get<int>(), 100);
  EXPECT_GT(s["graphs"]["patched_nodes"].get<int>(), 0);
  EXPECT_GT(s["graphs"]["mismatches"].get<int>(), 0);
  EXPECT_GT(s["flushes"]["total"].get<int>(), 100);
  const auto& l = s["launches"];
  EXPECT_EQ(l["seen_by_engine"], l["intercepted"]);
  EXPECT_EQ(l["seen_by_engine"].get<int>(),
            l["replayed_in_graphs"].get<int>() + l["eager"].get<int>());
  // Packed arguments became nodes (none was refused; an unknown layout's block size goes out
  // eagerly once, the first time it is seen, where the driver could refuse it), module unloads
  // dropped graphs without ending graph mode, switches to another context submitted what was
  // recorded.
  const auto& eager = s["eager_launches_by_reason"];
  EXPECT_FALSE(eager.contains("packed_args")) << eager.dump();
  EXPECT_LE(eager.value("packed_args_size", 0), 2) << eager.dump();
  EXPECT_GT(s["graphs"]["unloaded"].get<int>(), 0);
  EXPECT_GT(s["flushes"]["by_reason"]["cuCtxSetCurrent"].get<int>(), 0);
  // Memsets and copies ran inside graphs too, pageable sources from snapshots.
  const auto& m = s["memops"];
  EXPECT_GT(m["replayed_in_graphs"].get<int>(), 100);
  EXPECT_GT(m["staged_bytes"].get<int>(), 0);
  EXPECT_EQ(m["seen_by_engine"].get<int>(),
            m["replayed_in_graphs"].get<int>() + m["eager"].get<int>());
}
TEST(Random, OneLaunchGraphsChangeNoResult) {
  // Chunks of one kernel launch replayed as graphs of one node (one_launch_graphs).
  const nlohmann::json s =
      expect_same_digests(RANDOM_PROGRAM, kSeeds, "graph", {{"PYGRAPH_ONE_LAUNCH_GRAPHS", "1"}});
  ASSERT_TRUE(s.is_object()) << "no PYGRAPH_STATS written";
  EXPECT_GT(s["graphs"]["replays"].get<int>(), 100);
  const auto& l = s["launches"];
  EXPECT_EQ(l["seen_by_engine"].get<int>(),
            l["replayed_in_graphs"].get<int>() + l["eager"].get<int>());
  // No chunk of one kernel launch went out as it came.
  EXPECT_FALSE(s["eager_launches_by_reason"].contains("short_chunk"))
      << s["eager_launches_by_reason"].dump();
}
TEST(Random, ProgrammaticLaunchesChangeNoResult) {
  // Launches that allow programmatic serialization (in four iterations of five, through
  // cuLaunchKernelEx) become kernel nodes that drop it: full stream order
  // (launch_attributes.h), whether or not the stand-in's asynchronous mode reorders work.
  for (const char* async : {"0", "1"}) {
    const nlohmann::json s =
        expect_same_digests(RANDOM_PROGRAM, kSeeds, "graph",
                            {{"RANDOM_PROGRAM_PROGRAMMATIC", "1"}, {"STANDIN_ASYNC", async}});
    ASSERT_TRUE(s.is_object()) << "no PYGRAPH_STATS written";
    EXPECT_GT(s["graphs"]["programmatic_allowed"].get<int>(), 40) << async;
    // Whether a launch allows it is no part of its shape: no sequence is lost to it.
    EXPECT_EQ(s["graphs"]["sequences_disabled"].get<int>(), 0) << async;
    EXPECT_GT(s["graphs"]["replays"].get<int>(), 100) << async;
    const auto& l = s["launches"];
    EXPECT_EQ(l["seen_by_engine"].get<int>(),
              l["replayed_in_graphs"].get<int>() + l["eager"].get<int>());
    EXPECT_FALSE(s["eager_launches_by_reason"].contains("attributes"))
        << s["eager_launches_by_reason"].dump();
  }
}
TEST(Random, ProgramGraphsChangeNoResult) {
  // The programs launch a graph of their own among their work: taken into chunks as child graphs
  // from its first launch (replayed in our graph, or issued where its chunk went out eagerly:
  // about 380 and 870 of the 3,000 programs' 14,367 graph launches), no longer taken once
  // launched on another stream (most programs: their steps pick streams at random), destroyed at
  // each program's end while graphs of ours hold a copy of it.
  for (const char* async : {"0", "1"}) {
    const nlohmann::json s = expect_same_digests(RANDOM_PROGRAM, kSeeds, "graph",
                                                 {{"RANDOM_PROGRAM_GRAPHS", "1"},
                                                  {"PYGRAPH_PROGRAM_GRAPH_LAUNCHES", "1"},
                                                  {"STANDIN_ASYNC", async}});
    ASSERT_TRUE(s.is_object()) << "no PYGRAPH_STATS written";
    const auto& pg = s["program_graphs"];
    EXPECT_EQ(pg["instantiated"].get<int>(), kSeeds) << async;
    EXPECT_GT(pg["replayed_in_graphs"].get<int>(), 300) << pg.dump();
    EXPECT_GT(pg["issued_with_chunk"].get<int>(), 500) << pg.dump();
    EXPECT_EQ(s["eager_launches_by_reason"]["program_capture"].get<int>(), 3 * kSeeds);
    const auto& l = s["launches"];
    EXPECT_EQ(l["seen_by_engine"].get<int>(),
              l["replayed_in_graphs"].get<int>() + l["eager"].get<int>());
  }
}
TEST(Random, EarlyHeadsChangeNoResult) {
  // Bodies that begin with a launch and the program's graph (RANDOM_PROGRAM_HEADS), with
  // early_head (the default) and without: where a segment begins so, its first launch goes out
  // alone, as a graph of one node, and the program's graph after it (about 410 heads in the
  // 3,000 programs); without, the two wait in one chunk.
  for (const char* early : {"1", "0"}) {
    for (const char* async : {"0", "1"}) {
      const nlohmann::json s = expect_same_digests(RANDOM_PROGRAM, kSeeds, "graph",
                                                   {{"RANDOM_PROGRAM_GRAPHS", "1"},
                                                    {"RANDOM_PROGRAM_HEADS", "1"},
                                                    {"PYGRAPH_PROGRAM_GRAPH_LAUNCHES", "1"},
                                                    {"PYGRAPH_EARLY_HEAD", early},
                                                    {"STANDIN_ASYNC", async}});
      ASSERT_TRUE(s.is_object()) << "no PYGRAPH_STATS written";
      const int heads = s["graphs"]["early_heads"].get<int>();
      if (*early == '1') {
        EXPECT_GT(heads, 200) << async;
      } else {
        EXPECT_EQ(heads, 0) << async;
      }
      EXPECT_GT(s["program_graphs"]["replayed_in_graphs"].get<int>(), 500) << early << async;
      const auto& l = s["launches"];
      EXPECT_EQ(l["seen_by_engine"].get<int>(),
                l["replayed_in_graphs"].get<int>() + l["eager"].get<int>());
    }
  }
}
TEST(Random, TwoThreadsTakingTurnsChangeNoResult) {
  // Each iteration's body ends on a second thread while the first waits (autograd's device
  // thread in a training step), with the stall watchdog flushing every millisecond and pauses
  // learned from the real gaps between launches: chunks cut where timing puts them, on either
  // thread (session 35: the review of session 20's one bitwise difference named this class).
  for (const char* async : {"0", "1"}) {
    const nlohmann::json s = expect_same_digests(RANDOM_PROGRAM, kSeeds, "graph",
                                                 {{"RANDOM_PROGRAM_THREADS", "1"},
                                                  {"RANDOM_PROGRAM_GRAPHS", "1"},
                                                  {"PYGRAPH_PROGRAM_GRAPH_LAUNCHES", "1"},
                                                  {"PYGRAPH_STALL_CHECK_MS", "1"},
                                                  {"PYGRAPH_PAUSE_US", "1"},
                                                  {"PYGRAPH_PAUSE_GPU_US", "4"},
                                                  {"STANDIN_ASYNC", async}});
    ASSERT_TRUE(s.is_object()) << "no PYGRAPH_STATS written";
    EXPECT_GT(s["graphs"]["replays"].get<int>(), 100) << async;
    EXPECT_GT(s["program_graphs"]["replayed_in_graphs"].get<int>(), 0) << async;
    const auto& l = s["launches"];
    EXPECT_EQ(l["seen_by_engine"].get<int>(),
              l["replayed_in_graphs"].get<int>() + l["eager"].get<int>());
  }
}
TEST(Random, OffModeChangesNoResult) {
  random_programs_in("off");
}

TEST(Random, DigestsDependOnTheProgram) {
  // Guards the harness itself: different seeds give different digests, the same seed the same.
  RunResult r = run_program({RANDOM_PROGRAM, "0", "50"}, {{"LD_LIBRARY_PATH", STANDIN_DIR}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult again = run_program({RANDOM_PROGRAM, "0", "50"}, {{"LD_LIBRARY_PATH", STANDIN_DIR}});
  EXPECT_EQ(r.out, again.out);
  std::istringstream in(r.out);
  std::set<std::string> digests;
  std::string seed, digest;
  while (in >> seed >> digest) digests.insert(digest);
  EXPECT_EQ(digests.size(), 50u);
}

}  // namespace
}  // namespace pygraph::test
