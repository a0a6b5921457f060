// Graph mode end to end, under LD_PRELOAD on the stand-in driver: programs compute exactly what
// they compute without the shim, while their repeating sequences really run as graphs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_program.h"

namespace pygraph::test {
namespace {

struct GraphRun {
  std::string plain, shim;
  nlohmann::json stats;
};

using Env = std::vector<std::pair<std::string, std::string>>;

// Runs `argv` without the shim and under it (graph mode: the default); `inject` (the stand-in's
// STANDIN_INJECT, "name:count:result,...") makes driver calls fail in both runs; `env` is more
// of both runs' environment.
GraphRun run_both(const std::vector<std::string>& argv, const std::string& inject = "",
                  const Env& env = {}) {
  GraphRun g;
  Env plain_env = {{"LD_LIBRARY_PATH", STANDIN_DIR}, {"STANDIN_INJECT", inject}};
  plain_env.insert(plain_env.end(), env.begin(), env.end());
  RunResult plain = run_program(argv, plain_env);
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  const std::string stats = temp_path("graph-stats.json");
  Env shim_env = plain_env;
  shim_env.emplace_back("LD_PRELOAD", PYGRAPH_SHIM);
  shim_env.emplace_back("PYGRAPH_STATS", stats);
  RunResult shim = run_program(argv, shim_env);
  EXPECT_EQ(shim.exit_code, 0) << shim.err;
  EXPECT_EQ(shim.err, "");
  g.plain = plain.out;
  g.shim = shim.out;
  g.stats = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  unlink(stats.c_str());
  return g;
}

TEST(GraphMode, TwoThreadsOnOneStreamAndTheProgramsOwnCapture) {
  GraphRun g = run_both({THREAD_PROGRAM});
  ASSERT_FALSE(g.plain.empty());
  EXPECT_EQ(g.shim, g.plain) << "the host read something else under graph mode";
  ASSERT_TRUE(g.stats.is_object());
  EXPECT_EQ(g.stats["mode"], "graph");
  // 24 steps of 20 launches; 6 of them captured by the program itself (left alone).
  EXPECT_EQ(g.stats["launches"]["intercepted"], 480);
  EXPECT_EQ(g.stats["eager_launches_by_reason"]["program_capture"], 6 * 20);
  // The other 18 steps replay as graphs from the third on, although two threads take turns
  // launching them (chunks of 2, 4, 8 and 6 launches; some span the hand-over between threads).
  EXPECT_EQ(g.stats["launches"]["replayed_in_graphs"], 16 * 20);
  EXPECT_EQ(g.stats["eager_launches_by_reason"]["not_repeating"], 2 * 20);
  EXPECT_EQ(g.stats["graphs"]["mismatches"], 0);
}

TEST(GraphMode, LoopWithSyncsAndPeriodsRunsAsGraphs) {
  GraphRun g = run_both({LOOP_PROGRAM});
  ASSERT_TRUE(g.stats.is_object());
  EXPECT_EQ(g.stats["launches"]["intercepted"], 6 * 4 + 10 * 2 + 4);
  // Steps 3..6 of [a b c a] replay as chunks [a b] and [c a] (the first chunk is 2 launches).
  // The loop [b c] without syncs is found after its third round (a 4-launch pattern seen again
  // and a whole period more); it is followed unrolled to 64 rounds, so its last 14 launches
  // replay as chunks of 2, 4 and 8 before the odd step ends it.
  EXPECT_EQ(g.stats["launches"]["replayed_in_graphs"], 4 * 4 + 14);
  EXPECT_EQ(g.stats["graphs"]["instantiated"], 2 + 3);
  EXPECT_EQ(g.stats["graphs"]["replays"], 4 * 2 + 3);
  // The odd step's first launch is not the loop's next: one mismatch, with nothing to drain.
  EXPECT_EQ(g.stats["graphs"]["mismatches"], 1);
  EXPECT_EQ(g.stats["eager_launches_by_reason"].value("mismatch", 0), 0);
}

TEST(GraphMode, AnInterprocessEventIsRecordedWhereTheProgramRecordsIt) {
  // 8 steps of [a b record c a] and a sync: a plain event's record joins the step's chunk from
  // the step's third occurrence on; one made for another process (CU_EVENT_INTERPROCESS, learnt
  // at cuEventCreate) is recorded where the program records it, every step, after the launches
  // before it.
  GraphRun plain = run_both({LOOP_PROGRAM, "event"});
  ASSERT_TRUE(plain.stats.is_object());
  EXPECT_EQ(plain.stats["streams"]["event_ops_issued"], 0);
  EXPECT_EQ(plain.stats["streams"]["event_records_in_graphs"], 6);
  GraphRun ipc = run_both({LOOP_PROGRAM, "ipc-event"});
  ASSERT_TRUE(ipc.stats.is_object());
  EXPECT_EQ(ipc.stats["streams"]["event_ops_issued"], 6);
  EXPECT_EQ(ipc.stats["streams"]["event_records_in_graphs"], 0);
  EXPECT_EQ(ipc.stats["launches"]["replayed_in_graphs"],
            plain.stats["launches"]["replayed_in_graphs"]);
}

TEST(GraphMode, DebugCountsPygraphsOwnDriverCalls) {
  // PYGRAPH_LOG_LEVEL=debug: the stats say which driver calls graph mode made itself, and how long
  // they took (driver_call_counts.h); each replay is one graph launch, each graph built one
  // instantiation. Without it, no such section.
  const std::string stats = temp_path("debug-stats.json");
  RunResult r = run_program({LOOP_PROGRAM}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                             {"LD_LIBRARY_PATH", STANDIN_DIR},
                                             {"PYGRAPH_LOG_LEVEL", "debug"},
                                             {"PYGRAPH_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  unlink(stats.c_str());
  ASSERT_TRUE(j.is_object());
  ASSERT_TRUE(j.contains("driver_calls")) << j.dump();
  const auto& calls = j["driver_calls"];
  EXPECT_EQ(calls["graph_launch"]["calls"], j["graphs"]["replays"]);
  EXPECT_EQ(calls["graph_instantiate"]["calls"], j["graphs"]["instantiated"]);
  EXPECT_GT(calls["graph_instantiate"]["us"].get<double>(), 0.0);
  EXPECT_FALSE(run_both({LOOP_PROGRAM}).stats.contains("driver_calls"));
}

TEST(GraphMode, AProgramWaitingWithoutCudaCallsGetsItsResults) {
  // The flag kernel is recorded mid-chunk; only the stall watchdog can submit it.
  GraphRun g = run_both({POLL_PROGRAM});
  ASSERT_FALSE(g.plain.empty());
  EXPECT_EQ(g.shim, g.plain);
  ASSERT_TRUE(g.stats.is_object());
  EXPECT_GT(g.stats["launches"]["replayed_in_graphs"].get<int>(), 0);
  EXPECT_GE(g.stats["flushes"]["by_reason"]["stall"].get<int>(), 1);
}

TEST(GraphMode, InjectedGraphFailuresChangeNoResult) {
  // Instantiation, node update and graph launch failing in the driver: the recorded launches go
  // out eagerly in order, the sequence stays eager, and the program sees no error.
  for (const char* inject : {"cuGraphInstantiateWithFlags:1:2", "cuGraphLaunch:1:719",
                             "cuGraphExecKernelNodeSetParams:1:1"}) {
    // 16 steps: the loop's chunk graphs are replayed (and patched) more than once.
    GraphRun g = run_both({POLL_PROGRAM, "16"}, inject);
    EXPECT_EQ(g.shim, g.plain) << inject;
    ASSERT_TRUE(g.stats.is_object()) << inject;
    EXPECT_EQ(g.stats["graphs"]["sequences_disabled"], 1) << inject;
    EXPECT_GT(g.stats["eager_launches_by_reason"]["graph_failure"].get<int>(), 0) << inject;
  }
}

TEST(GraphMode, AModuleUnloadDropsOnlyItsGraphsAndAReusedHandleIsANewKernel) {
  GraphRun g = run_both({UNLOAD_PROGRAM});
  ASSERT_FALSE(g.plain.empty());
  EXPECT_EQ(g.shim, g.plain) << "the host read something else under graph mode";
  EXPECT_NE(g.plain.find("handle reused 1"), std::string::npos) << g.plain;
  ASSERT_TRUE(g.stats.is_object());
  // Steps of 10 launches (graphs of 2, 4 and 4): A's 8, B's 16, C's 8, each step found in its
  // first two rounds and replayed from the third; A's 3 graphs go at its unload, B's replay on.
  EXPECT_EQ(g.stats["launches"]["intercepted"], 32 * 10);
  EXPECT_EQ(g.stats["launches"]["replayed_in_graphs"], (6 + 14 + 6) * 10);
  EXPECT_EQ(g.stats["eager_launches_by_reason"]["not_repeating"], 6 * 10);
  EXPECT_EQ(g.stats["graphs"]["instantiated"], 9);
  EXPECT_EQ(g.stats["graphs"]["unloaded"], 3);
  EXPECT_EQ(g.stats["graphs"]["live"], 6);
  EXPECT_EQ(g.stats["graphs"]["mismatches"], 0);
  // The cuCtxSetCurrent in every step, to the context already current, cut no chunk.
  EXPECT_EQ(g.stats["flushes"]["total"], 0) << g.stats["flushes"].dump();
}

TEST(GraphMode, UnwritableStatsPathIsOneLineAndNothingElseChanges) {
  RunResult plain = run_program({THREAD_PROGRAM}, {{"LD_LIBRARY_PATH", STANDIN_DIR}});
  RunResult shim = run_program({THREAD_PROGRAM}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                  {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                  {"PYGRAPH_STATS", "/nonexistent-dir/s.json"}});
  EXPECT_EQ(shim.exit_code, 0);
  EXPECT_EQ(shim.out, plain.out);
  EXPECT_EQ(shim.err,
            "pygraph: cannot write PYGRAPH_STATS='/nonexistent-dir/s.json': No such file or "
            "directory\n");
}

}  // namespace
}  // namespace pygraph::test

namespace pygraph::test {
namespace {

// The program's own graphs, launched between short stretches of eager work (as reduce-overhead
// does), with and without the shim; `mode` is program_graph_program's argument, `env` more of
// the environment of both runs. The option is on by default, each graph taken from its 16th
// launch (config/README.md); here from its first, unless `env` says otherwise (set later, it
// wins).
GraphRun run_program_graphs(const std::string& mode, Env env = {},
                            const std::vector<std::string>& args = {}) {
  std::vector<std::string> argv = {PROGRAM_GRAPH_PROGRAM};
  if (!mode.empty()) argv.push_back(mode);
  argv.insert(argv.end(), args.begin(), args.end());
  env.insert(env.begin(),
             {{"PYGRAPH_PROGRAM_GRAPHS", "1"}, {"PYGRAPH_PROGRAM_GRAPH_LAUNCHES", "1"}});
  return run_both(argv, "", env);
}

TEST(ProgramGraphs, TheProgramsGraphLaunchesJoinTheChunkAsChildGraphs) {
  // Without early heads: with them, each step's forward graph would go out alone after its
  // step's input launches (the host reads every step, so each step begins a segment).
  const GraphRun g = run_program_graphs("", {{"PYGRAPH_EARLY_HEAD", "0"}});
  ASSERT_FALSE(g.plain.empty());
  EXPECT_EQ(g.shim, g.plain) << "the host read something else with the program's graphs taken";
  ASSERT_TRUE(g.stats.is_object());
  const auto& pg = g.stats["program_graphs"];
  EXPECT_EQ(pg["launches"], 80);
  EXPECT_EQ(pg["instantiated"], 2);
  EXPECT_EQ(pg["takeable"], 2);
  // Every launch of them from the third step on (the step's sequence is known) is taken, in
  // steady state inside the chunk's graph: no graph launch of the program cuts the step.
  EXPECT_EQ(pg["taken_into_chunks"], 2 * 38);
  EXPECT_GE(pg["replayed_in_graphs"].get<int>(), 2 * 36);
  EXPECT_EQ(pg["nodes_replayed"].get<int>(), 5 * pg["replayed_in_graphs"].get<int>());  // 5 each
  EXPECT_EQ(pg["replayed_in_graphs"].get<int>() + pg["issued_with_chunk"].get<int>(), 2 * 38);
  EXPECT_EQ(g.stats["flushes"]["by_reason"].value("cuGraphLaunch", 0), 0);
  EXPECT_GE(g.stats["launches"]["replayed_in_graphs"].get<int>(), 6 * 36);
  EXPECT_EQ(g.stats["eager_launches_by_reason"].value("short_chunk", 0), 0);
}

TEST(ProgramGraphs, OneLaunchBesideTheProgramsGraphJoinsItInAGraphOfOurs) {
  // Each step: an input launch, the program's graph, a read (compiled inference at a large batch
  // under reduce-overhead). The two go out as one graph of ours, the program's graph a child of
  // it (chunk_policy.h, worth_a_graph: session 31 measured no GPU cost for that, and half the
  // host time), where early heads are off. With them (the default) the input launch is each
  // segment's head: AnEarlyHeadRunsBeforeTheProgramLaunchesItsGraphAtEachSegmentsStart.
  const GraphRun g = run_program_graphs("beside", {{"PYGRAPH_EARLY_HEAD", "0"}});
  ASSERT_FALSE(g.plain.empty());
  EXPECT_EQ(g.shim, g.plain);
  ASSERT_TRUE(g.stats.is_object());
  EXPECT_EQ(g.stats["launches"]["intercepted"], 200 + 2 * 5);  // and the captures' launches
  EXPECT_GE(g.stats["graphs"]["replays"].get<int>(), 190);
  EXPECT_GE(g.stats["program_graphs"]["replayed_in_graphs"].get<int>(), 190);
  EXPECT_EQ(g.stats["program_graphs"]["nodes_replayed"].get<int>(),
            5 * g.stats["program_graphs"]["replayed_in_graphs"].get<int>());
  EXPECT_EQ(g.stats["eager_launches_by_reason"].value("short_chunk", 0), 0);
  EXPECT_EQ(g.stats["graphs"]["sequences_cut_short"], 0);
}

TEST(ProgramGraphs, WithFirstChunksOfOneTheInputLaunchGoesOutAheadOfTheProgramsGraph) {
  // Session 50's head arm (design notes): first chunks of one launch and graphs of one node.
  // Each step's input launch is its occurrence's first chunk, complete when it is recorded and
  // replayed at once as a graph of one node, so it runs while the program prepares its graph's
  // launch; the program's graph then goes out as the program launched it, after that chunk.
  const GraphRun g = run_program_graphs(
      "beside", {{"PYGRAPH_FIRST_CHUNK", "1"}, {"PYGRAPH_ONE_LAUNCH_GRAPHS", "1"}});
  ASSERT_FALSE(g.plain.empty());
  EXPECT_EQ(g.shim, g.plain);
  ASSERT_TRUE(g.stats.is_object());
  const auto& pg = g.stats["program_graphs"];
  EXPECT_GE(g.stats["graphs"]["replays"].get<int>(), 190);
  EXPECT_EQ(g.stats["launches"]["replayed_in_graphs"], g.stats["graphs"]["replays"]);
  EXPECT_EQ(pg["replayed_in_graphs"], 0) << "a program's graph went out inside a chunk";
  EXPECT_EQ(pg["issued_with_chunk"], pg["taken_into_chunks"]);
  EXPECT_EQ(g.stats["eager_launches_by_reason"].value("short_chunk", 0), 0);
}

// "beside" with a read every 4 steps and the `ahead` line: (digest, steps whose input launch had
// run before the program launched its graph).
std::pair<std::string, int> beside_ahead(const std::string& out) {
  const size_t nl = out.find('\n');
  const size_t at = out.find("ahead ");
  if (nl == std::string::npos || at == std::string::npos) return {out, -1};
  return {out.substr(0, nl), std::atoi(out.c_str() + at + 6)};
}

TEST(ProgramGraphs, AnEarlyHeadRunsBeforeTheProgramLaunchesItsGraphAtEachSegmentsStart) {
  // Segments of 4 steps (an input launch, the program's graph), a read after each: 50 of them.
  // With early_head, each followed segment's first input launch goes out as a graph of one node
  // when it is recorded, so it has run by the time the program launches its graph (the
  // stand-in runs work as it is submitted); the program's graph follows alone, and the steps
  // after it go out as before, one graph of ours a step. Without it, only the launches of the
  // segments not yet followed had run.
  for (const bool early : {false, true}) {
    const GraphRun g =
        run_program_graphs("beside", {{"PYGRAPH_EARLY_HEAD", early ? "1" : "0"}}, {"4", "ahead"});
    const auto [plain, plain_ahead] = beside_ahead(g.plain);
    const auto [shim, shim_ahead] = beside_ahead(g.shim);
    EXPECT_EQ(plain_ahead, 200) << g.plain;
    EXPECT_EQ(shim, plain) << early;
    ASSERT_TRUE(g.stats.is_object());
    const auto& graphs = g.stats["graphs"];
    const auto& pg = g.stats["program_graphs"];
    const int heads = graphs["early_heads"].get<int>();
    if (!early) {
      EXPECT_EQ(heads, 0);
      EXPECT_LE(shim_ahead, 3 * 4) << "more ran ahead than the segments not followed";
      continue;
    }
    EXPECT_GE(heads, 45);
    // Each head ran ahead; beyond them only the steps of segments not followed.
    EXPECT_GE(shim_ahead, heads);
    EXPECT_LE(shim_ahead, heads + 3 * 4);
    // Heads are graphs of one node, never eager; the program's graph after each went out as
    // the program launched it, the other three of a segment inside graphs of ours.
    EXPECT_EQ(g.stats["eager_launches_by_reason"].value("short_chunk", 0), 0);
    EXPECT_GE(pg["issued_with_chunk"].get<int>(), heads);
    EXPECT_GE(pg["replayed_in_graphs"].get<int>(), 3 * heads);
    EXPECT_EQ(graphs["sequences_cut_short"], 0);
  }
}

TEST(ProgramGraphs, AMemsetBeforeTheProgramsGraphIsNoHead) {
  // The same steps with the input set by a memset: a chunk of one memop is no graph
  // (worth_a_graph), so it would only go out eagerly at the cost of the step's one graph of
  // ours. No head is learned; each step goes out as before, the memset and the program's graph
  // in one graph of ours.
  const GraphRun g =
      run_program_graphs("beside", {{"PYGRAPH_EARLY_HEAD", "1"}}, {"4", "ahead", "memset"});
  const auto [plain, plain_ahead] = beside_ahead(g.plain);
  const auto [shim, shim_ahead] = beside_ahead(g.shim);
  EXPECT_EQ(shim, plain);
  ASSERT_TRUE(g.stats.is_object());
  EXPECT_EQ(g.stats["graphs"]["early_heads"], 0);
  EXPECT_EQ(g.stats["memops"].value("eager", 0),
            g.stats["memops"].value("seen_by_engine", 0) -
                g.stats["memops"].value("replayed_in_graphs", 0));
  EXPECT_GE(g.stats["memops"]["replayed_in_graphs"].get<int>(), 4 * 45);
  EXPECT_GE(g.stats["program_graphs"]["replayed_in_graphs"].get<int>(), 4 * 45);
}

TEST(ProgramGraphs, ACollectiveBesideTheProgramsGraphEndsAGraphOfOurs) {
  // Each step: a launch, the program's graph of one launch, then a kernel its peers wait for
  // (NCCL's), which ends its chunk at once. With first chunks of one launch the step goes out as
  // [launch] [graph, collective]: the second is a graph of ours, replayed as soon as the
  // collective is recorded, and neither counts as cut short.
  const GraphRun g = run_program_graphs("peers", {{"PYGRAPH_FIRST_CHUNK", "1"}});
  ASSERT_FALSE(g.plain.empty());
  EXPECT_EQ(g.shim, g.plain);
  ASSERT_TRUE(g.stats.is_object());
  EXPECT_GE(g.stats["graphs"]["replays"].get<int>(), 190);
  EXPECT_EQ(g.stats["graphs"]["sequences_cut_short"], 0);
  EXPECT_GE(g.stats["graphs"]["peer_cuts"].get<int>(), 190);
  EXPECT_GE(g.stats["program_graphs"]["replayed_in_graphs"].get<int>(), 190);
}

TEST(ProgramGraphs, AGraphIsTakenFromItsSixteenthLaunchOn) {
  // By default (program_graph_launches 16) the program launches each graph itself 15 times;
  // its step, with the graphs in it, is then a new sequence, followed from its third
  // occurrence: 23 of the 40 steps.
  const GraphRun g = run_program_graphs("", {{"PYGRAPH_PROGRAM_GRAPH_LAUNCHES", "16"}});
  EXPECT_EQ(g.shim, g.plain);
  ASSERT_TRUE(g.stats.is_object());
  EXPECT_EQ(g.stats["program_graphs"]["taken_into_chunks"], 2 * (40 - 15 - 2));
}

TEST(ProgramGraphs, ALoopsChunksWeighTheProgramsGraphsByTheirNodes) {
  // A step: 6 launches and the program's graphs of 40 and 5 kernels, 8 positions weighing 51.
  // Counted by positions, the loop's chunks would hold its period unrolled to 64 positions: 16
  // of the program's graphs in each replay. Counted by nodes (up to max_chunk, 128), a chunk
  // ends at the first position where it weighs 128 or more: at most 6 of them (from a graph of
  // 5: 5, 40, 5, 40 and 5 weigh 95, the launches between them 12, and the next graph ends it).
  const GraphRun g = run_program_graphs("loop");
  ASSERT_FALSE(g.plain.empty());
  EXPECT_EQ(g.shim, g.plain);
  ASSERT_TRUE(g.stats.is_object());
  const auto& pg = g.stats["program_graphs"];
  EXPECT_EQ(pg["launches"], 400);
  const int replays = g.stats["graphs"]["replays"].get<int>();
  ASSERT_GT(replays, 0);
  const int children = pg["replayed_in_graphs"].get<int>();
  EXPECT_GE(children, 2 * 180) << "the loop's steps were not replayed as graphs";
  EXPECT_LE(children, 6 * replays)
      << children << " of the program's graphs in " << replays << " replays";
  EXPECT_GE(children, 3 * replays) << "chunks much shorter than max_chunk";
  // Graphs of 40 and 5 nodes in turn: 22.5 a graph, give or take one graph of either.
  EXPECT_NEAR(pg["nodes_replayed"].get<double>(), 22.5 * children, 35.0);
}

TEST(ProgramGraphs, ALoopOfTheProgramsGraphAloneBuildsItsGraphsOnce) {
  // Each step is one launch of the program's graph of 40 kernels: a chunk's first sizes hold
  // one each, which go out eagerly. They are full, not cut short: were they taken for cut
  // short (LoneStarts), each occurrence between two reads would be followed from a later
  // place, in chunks at new places, each a new graph (0.7-1.8 ms on the H200) again and again.
  auto run = [](const char* steps, const char* read_every) {
    return run_program_graphs("alone", {}, {steps, read_every});
  };
  const GraphRun shorter = run("1000", "200"), longer = run("4000", "200");
  EXPECT_EQ(longer.shim, longer.plain);
  ASSERT_TRUE(shorter.stats.is_object() && longer.stats.is_object());
  EXPECT_GT(shorter.stats["graphs"]["instantiated"].get<int>(), 0);
  EXPECT_EQ(longer.stats["graphs"]["instantiated"], shorter.stats["graphs"]["instantiated"])
      << "graphs were still being built after the first occurrences";
  // Read every 37 steps: nearly every launch of the program's graph is in a chunk.
  const GraphRun odd = run("4000", "37");
  EXPECT_EQ(odd.shim, odd.plain);
  ASSERT_TRUE(odd.stats.is_object());
  EXPECT_GE(odd.stats["program_graphs"]["taken_into_chunks"].get<int>(), 4000 * 9 / 10);
}

TEST(ProgramGraphs, OffEachGraphLaunchSubmitsTheChunk) {
  const GraphRun g = run_program_graphs("", {{"PYGRAPH_PROGRAM_GRAPHS", "0"}});
  EXPECT_EQ(g.shim, g.plain);
  ASSERT_TRUE(g.stats.is_object());
  EXPECT_EQ(g.stats["program_graphs"]["taken_into_chunks"], 0);
  EXPECT_GT(g.stats["flushes"]["by_reason"].value("cuGraphLaunch", 0), 0);
}

TEST(ProgramGraphs, AGraphInstantiatedForDeviceLaunchIsNeverTaken) {
  const GraphRun g = run_program_graphs("device");
  EXPECT_EQ(g.shim, g.plain);
  ASSERT_TRUE(g.stats.is_object());
  const auto& pg = g.stats["program_graphs"];
  EXPECT_EQ(pg["takeable"], 0);
  EXPECT_EQ(pg["taken_into_chunks"], 0);
  EXPECT_EQ(pg["last_refusal"], "instantiate flags");
}

TEST(ProgramGraphs, AGraphTheProgramChangesIsNeverTakenAgain) {
  for (const char* async : {"0", "1"}) {
    const GraphRun g = run_program_graphs("change", {{"STANDIN_ASYNC", async}});
    EXPECT_EQ(g.shim, g.plain) << "async " << async;
    ASSERT_TRUE(g.stats.is_object());
    const auto& pg = g.stats["program_graphs"];
    EXPECT_EQ(pg["last_refusal"], "changed by the program");
    EXPECT_EQ(pg["takeable"], 1);  // the backward graph only
    EXPECT_GT(pg["replayed_in_graphs"].get<int>(), 20);
  }
}

TEST(ProgramGraphs, ADestroyedGraphIsForgottenAndItsSuccessorTaken) {
  for (const char* async : {"0", "1"}) {
    const GraphRun g = run_program_graphs("destroy", {{"STANDIN_ASYNC", async}});
    EXPECT_EQ(g.shim, g.plain) << "async " << async;
    ASSERT_TRUE(g.stats.is_object());
    const auto& pg = g.stats["program_graphs"];
    EXPECT_EQ(pg["instantiated"], 3);
    EXPECT_EQ(pg["takeable"], 2);
    // The new graph is a new token: its step is found again two steps after the destroy.
    EXPECT_EQ(pg["taken_into_chunks"], 2 * 36);
  }
}

TEST(ProgramGraphs, AGraphLaunchedOnASecondStreamRunsAfterItsCopiesAndIsNotTakenAgain) {
  for (const char* async : {"0", "1"}) {
    const GraphRun g = run_program_graphs("stream", {{"STANDIN_ASYNC", async}});
    EXPECT_EQ(g.shim, g.plain) << "async " << async;
    ASSERT_TRUE(g.stats.is_object());
    const auto& pg = g.stats["program_graphs"];
    EXPECT_EQ(pg["last_refusal"], "launched on a second stream");
    EXPECT_EQ(pg["takeable"], 1);
  }
}

TEST(ProgramGraphs, AGraphLaunchedOnASecondStreamWhileAChunkHoldsItsCopyIsBuiltFromTheCopy) {
  // The backward graph launched again on a second stream while the chunk still holds its first
  // launch: the chunk goes out first, its graph built with the copy as a child (found by a
  // review, session 20: the copy was destroyed first, and the stand-in now refuses a child
  // graph node of a destroyed graph: a graph failure, the sequence eager from then on).
  for (const char* async : {"0", "1"}) {
    const GraphRun g = run_program_graphs("twice", {{"STANDIN_ASYNC", async}});
    EXPECT_EQ(g.shim, g.plain) << "async " << async;
    ASSERT_TRUE(g.stats.is_object());
    EXPECT_EQ(g.stats["program_graphs"]["last_refusal"], "launched on a second stream");
    EXPECT_EQ(g.stats["eager_launches_by_reason"].value("graph_failure", 0), 0) << async;
  }
}

}  // namespace
}  // namespace pygraph::test
