// `pygraph-analyze simulate` against graph mode itself: stand-in programs run in graph mode
// with a trace; the engine run offline over that trace must do what graph mode did.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_program.h"

namespace pygraph::test {
namespace {

struct Compared {
  nlohmann::json live, simulated;
};

// `kernel_ns`: the simulated GPU time of each kernel in the live run (STANDIN_KERNEL_NS).
Compared run_and_simulate(const std::vector<std::string>& program,
                          const std::string& kernel_ns = "1000") {
  const std::string trace = temp_path("simulate.trace");
  const std::string stats = temp_path("simulate-stats.json");
  RunResult r = run_program(program, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                      {"LD_LIBRARY_PATH", STANDIN_DIR},
                                      {"STANDIN_KERNEL_NS", kernel_ns},
                                      {"PYGRAPH_MODE", "graph"},
                                      {"PYGRAPH_TRACE", trace},
                                      {"PYGRAPH_STATS", stats}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Compared c;
  c.live = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  RunResult s = run_program({ANALYZER, "simulate", "--json", trace}, {});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  c.simulated = nlohmann::json::parse(s.out, nullptr, false);
  unlink(trace.c_str());
  unlink(stats.c_str());
  return c;
}

TEST(AnalyzerSimulate, PredictsExactlyWhatGraphModeDidOnDeterministicPrograms) {
  for (const std::vector<std::string>& program : {std::vector<std::string>{LOOP_PROGRAM},
                                                  {THREAD_PROGRAM},
                                                  {RANDOM_LOOP_PROGRAM, "0", "60"}}) {
    const Compared c = run_and_simulate(program);
    ASSERT_TRUE(c.live.is_object() && c.simulated.is_object()) << program[0];
    EXPECT_EQ(c.simulated["mode"], "simulate");
    if (c.live["flushes"]["by_reason"].contains("stall") || c.live["graphs"]["pause_places"] != 0 ||
        c.simulated["graphs"]["pause_places"] != 0) {
      // A loaded machine made the live run pause for 2 ms somewhere: its stall watchdog cut a
      // chunk that the offline run (no time) does not. Or it paused 200 us at one place twice
      // (pause_places.h): the offline run learns pauses from the trace's timestamps, taken at
      // other instants than the engine's clock reads. Then only close, not exact.
      EXPECT_NEAR(c.simulated["coverage_percent"].get<double>(),
                  c.live["coverage_percent"].get<double>(), 2.0)
          << program[0];
      continue;
    }
    for (const char* key : {"seen_by_engine", "replayed_in_graphs", "eager"}) {
      EXPECT_EQ(c.simulated["launches"][key], c.live["launches"][key]) << program[0] << " " << key;
    }
    for (const char* key : {"instantiated", "replays", "mismatches", "sequences_followed"}) {
      EXPECT_EQ(c.simulated["graphs"][key], c.live["graphs"][key]) << program[0] << " " << key;
    }
    EXPECT_EQ(c.simulated["eager_launches_by_reason"], c.live["eager_launches_by_reason"])
        << program[0];
    EXPECT_NEAR(c.simulated["coverage_percent"].get<double>(),
                c.live["coverage_percent"].get<double>(), 1e-9)
        << program[0];
  }
}

TEST(AnalyzerSimulate, ThePausesOfTheRunAreLearnedFromTheTracesTimes) {
  // Steps of 8 launches, the host pausing 1 ms before the 6th: graph mode learns that place
  // from its clock, the offline engine from the trace's timestamps, and both cut the chunk
  // there (the first chunks of 2 and 4 would end at the 7th). Live, the pause is weighed: the
  // 5 kernels before it take 500 us on the stand-in's GPU, which never idles, so it stays (the
  // offline engine has no GPU time and keeps every pause).
  const Compared c = run_and_simulate({LOOP_PROGRAM, "pause"}, "100000");
  ASSERT_TRUE(c.live.is_object() && c.simulated.is_object());
  EXPECT_EQ(c.live["graphs"]["pause_places"], 1);
  EXPECT_EQ(c.simulated["graphs"]["pause_places"], 1);
  EXPECT_GE(c.live["graphs"]["pause_cuts"].get<int>(), 2);
  EXPECT_EQ(c.simulated["graphs"]["pause_cuts"], c.live["graphs"]["pause_cuts"]);
  EXPECT_EQ(c.simulated["launches"]["replayed_in_graphs"],
            c.live["launches"]["replayed_in_graphs"]);
}

TEST(AnalyzerSimulate, ContextsAndUnloadsTheTraceLacksAreApproximated) {
  // A format-2 trace holds each copy's source, each memset's value and the memory kinds the
  // driver reported, so memops are classified as graph mode classified them. It still holds no
  // current context (the random programs switch contexts: graph mode flushes at those switches,
  // the one-context offline driver does not) and not which kernels a module holds (an unload
  // offline drops every graph that may hold one of its kernels). So the prediction still
  // drifts: 60 programs, 6.1 % predicted against 11.2 % measured (6.2 against 11.6 with
  // format 1). Launches and memops are all seen, every memop with its detail.
  const Compared c = run_and_simulate({RANDOM_PROGRAM, "0", "60"});
  ASSERT_TRUE(c.live.is_object() && c.simulated.is_object());
  EXPECT_EQ(c.simulated["launches"]["seen_by_engine"], c.live["launches"]["seen_by_engine"]);
  EXPECT_EQ(c.simulated["memops"]["seen_by_engine"], c.live["memops"]["seen_by_engine"]);
  // Which sequences are followed drifts with the flushes the offline run misses (per program,
  // 10 of these 60 differ): close, not equal (133 live, 135 offline once the programs gained a
  // registered bounce buffer in session 9; 101 and 100 before, run one program at a time).
  EXPECT_NEAR(c.simulated["graphs"]["sequences_followed"].get<double>(),
              c.live["graphs"]["sequences_followed"].get<double>(),
              0.05 * c.live["graphs"]["sequences_followed"].get<double>());
  EXPECT_GT(c.simulated["launches"]["replayed_in_graphs"].get<int>(), 0);
}

TEST(AnalyzerSimulate, EventRecordsAndWaitsJoinChunksAsInGraphMode) {
  // Programs on several streams ordered by events: the offline engine takes the trace's event
  // records and waits as the hooks hand them to graph mode (event records as nodes, waits as
  // edges, side streams forked). Before, it passed them through as plain ops: 60 programs,
  // 19.6 % predicted against 49.4 % measured, and no event in a graph. Streams' flags are not
  // in the trace (every stream is taken as blocking), so the legacy stream's joins are not
  // predicted, and the prediction stays close, not exact: 48.4 % against 49.4 %.
  const Compared c = run_and_simulate({RANDOM_STREAMS_PROGRAM, "0", "60"});
  ASSERT_TRUE(c.live.is_object() && c.simulated.is_object());
  EXPECT_EQ(c.simulated["launches"]["seen_by_engine"], c.live["launches"]["seen_by_engine"]);
  EXPECT_NEAR(c.simulated["coverage_percent"].get<double>(),
              c.live["coverage_percent"].get<double>(), 4.0);
  for (const char* key : {"event_records_in_graphs", "waits_as_edges", "side_streams_forked"}) {
    const double live = c.live["streams"][key].get<double>();
    EXPECT_GT(live, 100) << key;
    EXPECT_NEAR(c.simulated["streams"][key].get<double>(), live, 0.1 * live) << key;
  }
  EXPECT_GT(c.simulated["driver_calls"]["eager_event_ops"].get<int>(), 0);
}

TEST(AnalyzerSimulate, HumanSummaryAndBadInput) {
  RunResult r = run_program({ANALYZER, "simulate", GOLDEN_DIR "/loop_program.trace"}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("62.5 % would run in graphs"), std::string::npos) << r.out;
  RunResult help = run_program({ANALYZER, "simulate", "--help"}, {});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("example:"), std::string::npos);
  RunResult bad =
      run_program({ANALYZER, "simulate", "--config", "/nonexistent.json", "x.trace"}, {});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("/nonexistent.json"), std::string::npos) << bad.err;
  RunResult missing = run_program({ANALYZER, "simulate", "/nonexistent.trace"}, {});
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(AnalyzerSimulate, NamesTheKernelsWhoseNodesArePatchedMost) {
  // MLP training's window patches 24 nodes of 5 kernels: each patched node is counted for its
  // kernel, the most first, and together they are the stats' patched nodes.
  RunResult r = run_program({ANALYZER, "simulate", "--json", GOLDEN_DIR "/mlp-train.trace"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  const nlohmann::json& most = j["patched_most"];
  ASSERT_TRUE(most.is_array());
  ASSERT_GT(most.size(), 1u);
  ASSERT_LT(most.size(), 10u);  // all of them: their sum is every patched node
  uint64_t sum = 0, previous = ~0ull;
  for (const auto& p : most) {
    EXPECT_FALSE(p["node"].get<std::string>().empty());
    EXPECT_LE(p["patched"].get<uint64_t>(), previous);
    previous = p["patched"].get<uint64_t>();
    sum += previous;
  }
  EXPECT_EQ(sum, j["graphs"]["patched_nodes"].get<uint64_t>());
  RunResult text = run_program({ANALYZER, "simulate", GOLDEN_DIR "/mlp-train.trace"}, {});
  const size_t at = text.out.find("nodes patched most:");
  ASSERT_NE(at, std::string::npos) << text.out;
  EXPECT_NE(text.out.find(most[0]["node"].get<std::string>(), at), std::string::npos) << text.out;
}

TEST(AnalyzerSimulate, TwoConfigurationsSideBySide) {
  // The checked-in defaults against chunks of 16: the same program, other graphs.
  const std::string big = temp_path("big-chunks.json");
  std::ofstream(big) << R"({"first_chunk": 16, "max_chunk": 256})";
  RunResult r = run_program({ANALYZER, "simulate", "--json", "--compare",
                             CONFIG_DIR "/pygraph.json", big, GOLDEN_DIR "/loop_program.trace"},
                            {});
  unlink(big.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  RunResult plain =
      run_program({ANALYZER, "simulate", "--json", GOLDEN_DIR "/loop_program.trace"}, {});
  const nlohmann::json d = nlohmann::json::parse(plain.out, nullptr, false);
  EXPECT_EQ(j["A"]["launches"], d["launches"]);  // the checked-in file is the defaults
  EXPECT_EQ(j["A"]["graphs"]["instantiated"], 5);
  EXPECT_EQ(j["B"]["graphs"]["instantiated"], 1);  // one chunk of 16 per step
  RunResult text = run_program({ANALYZER, "simulate", "--compare", CONFIG_DIR "/pygraph.json",
                                CONFIG_DIR "/pygraph.json", GOLDEN_DIR "/loop_program.trace"},
                               {});
  EXPECT_NE(text.out.find("coverage %"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace pygraph::test
