// `pygraph-analyze breaks`: every eager launch graph mode would leave is put down to one cause,
// and the causes are what the stand-in programs do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_program.h"

namespace pygraph::test {
namespace {

nlohmann::json breaks_of(const std::string& trace) {
  RunResult r = run_program({ANALYZER, "breaks", "--json", "--top", "100000", trace}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

TEST(AnalyzerBreaks, EveryEagerLaunchHasOneCause) {
  for (const std::vector<std::string>& program : {std::vector<std::string>{THREAD_PROGRAM},
                                                  {RANDOM_PROGRAM, "0", "40"},
                                                  {RANDOM_LOOP_PROGRAM, "0", "40"}}) {
    const std::string trace = temp_path("breaks.trace");
    RunResult run = run_program(program, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                          {"LD_LIBRARY_PATH", STANDIN_DIR},
                                          {"PYGRAPH_MODE", "trace"},
                                          {"PYGRAPH_TRACE", trace}});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json b = breaks_of(trace);
    unlink(trace.c_str());
    ASSERT_TRUE(b.is_object()) << program[0];
    uint64_t attributed = 0;
    double last_cost = 1e300;
    for (const auto& row : b["breaks"]) {
      attributed += row["eager_launches"].get<uint64_t>();
      EXPECT_LE(row["cost_ms"].get<double>(), last_cost) << "ranked by cost";
      last_cost = row["cost_ms"].get<double>();
    }
    EXPECT_EQ(attributed, b["eager_launches"].get<uint64_t>()) << program[0];
    EXPECT_GT(b["breaks"].size(), 0u) << program[0];
  }
}

TEST(AnalyzerBreaks, TheSyncAfterTheOddStepComesFirstWithItsCallSite) {
  const nlohmann::json b = breaks_of(GOLDEN_DIR "/loop_program.trace");
  ASSERT_TRUE(b.is_object());
  ASSERT_GE(b["breaks"].size(), 1u);
  const auto& top = b["breaks"][0];
  EXPECT_EQ(top["kind"], "ends_segment");
  EXPECT_EQ(top["op"], "cuStreamSynchronize");
  EXPECT_EQ(top["times"], 1);
  // The odd step [a b b a] and the first launches of the loop before it was found.
  EXPECT_EQ(top["eager_launches"], 10);
  ASSERT_FALSE(top["frames"].empty());
  EXPECT_NE(top["frames"][0].get<std::string>().find("loop_program"), std::string::npos);
  RunResult text = run_program({ANALYZER, "breaks", GOLDEN_DIR "/loop_program.trace"}, {});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("18 of 48 launches stay eager"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  1. cuStreamSynchronize ends a sequence"), std::string::npos)
      << text.out;
  RunResult bad = run_program({ANALYZER, "breaks", "--launch-us", "-1", "x.trace"}, {});
  EXPECT_EQ(bad.exit_code, 1);
}

// Graph mode's own trace: its records are read, not simulated. decision_program with dec_b denied:
// its sequence is decided eager by the config and the row says so, with the launches it keeps.
TEST(AnalyzerBreaks, AGraphModeTraceShowsItsSequenceDecidedEager) {
  const std::string trace = temp_path("breaks-decided.trace");
  RunResult run = run_program({DECISION_PROGRAM}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                   {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                   {"PYGRAPH_MODE", "graph"},
                                                   {"PYGRAPH_DENY_KERNELS", "dec_b"},
                                                   {"PYGRAPH_TRACE", trace}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json b = breaks_of(trace);
  RunResult text = run_program({ANALYZER, "breaks", trace}, {});
  unlink(trace.c_str());
  ASSERT_TRUE(b.is_object());
  EXPECT_EQ(b["source"], "graph_mode");
  ASSERT_GE(b["breaks"].size(), 1u);
  const auto& top = b["breaks"][0];
  EXPECT_EQ(top["kind"], "decision");
  EXPECT_EQ(top["verdict"], "eager");
  EXPECT_EQ(top["source"], "config");
  EXPECT_EQ(top["launches_per_step"], 3);
  EXPECT_EQ(top["eager_launches"], 37 * 3);  // steps 4 to 40 (decision_cache_e2e_test)
  EXPECT_FALSE(top["signature"].get<std::string>().empty());
  uint64_t attributed = 0;
  for (const auto& row : b["breaks"]) attributed += row["eager_launches"].get<uint64_t>();
  EXPECT_EQ(attributed, b["eager_launches"].get<uint64_t>());
  EXPECT_NE(text.out.find("graph mode's own records"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("decided eager: kept eager by the config's kernel patterns, 3 launches "
                          "a step stay eager"),
            std::string::npos)
      << text.out;
}

// Launches an op sends out of a chunk it cut short are that op's doing (a sync's, at its call
// site); no row
// blames "kernel #0" (the function of an op), in graph mode's records or simulated.
TEST(AnalyzerBreaks, LaunchesACutChunkSendsOutArePutDownToTheOpThatCutIt) {
  bool drained = false;
  for (const char* mode : {"graph", "trace"}) {
    for (const std::vector<std::string>& program :
         {std::vector<std::string>{RANDOM_PROGRAM, "0", "40"},
          {RANDOM_PROGRAM, "1", "40"},
          {RANDOM_LOOP_PROGRAM, "0", "40"}}) {
      const std::string trace = temp_path("breaks-cut.trace");
      RunResult run = run_program(program, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                            {"LD_LIBRARY_PATH", STANDIN_DIR},
                                            {"PYGRAPH_MODE", mode},
                                            {"PYGRAPH_TRACE", trace}});
      ASSERT_EQ(run.exit_code, 0) << run.err;
      const nlohmann::json b = breaks_of(trace);
      unlink(trace.c_str());
      ASSERT_TRUE(b.is_object());
      EXPECT_EQ(b["source"], std::string(mode) == "graph" ? "graph_mode" : "simulated");
      uint64_t attributed = 0;
      for (const auto& row : b["breaks"]) {
        attributed += row["eager_launches"].get<uint64_t>();
        if (row.contains("kernel")) {
          EXPECT_NE(row["kernel"], "kernel #0") << row.dump();
        }
        // Boundary ops (syncs, queries, ...) carry call sites; others name only the op.
        if (row["kind"] == "drains" && !row["frames"].empty()) drained = true;
      }
      EXPECT_EQ(attributed, b["eager_launches"].get<uint64_t>()) << mode << " " << program[0];
    }
  }
  EXPECT_TRUE(drained) << "no chunk cut short at a call site in these programs";
}

TEST(AnalyzerBreaks, AQueryInAGraphModeTraceEndsNoSequence) {
  // Queries carry call sites in the trace (the host observes GPU work there) but are no
  // boundary (ops.h): graph mode goes on across them, and `breaks` must not put launches down
  // to them as ends of sequences. random_streams_program queries events and streams, and polls.
  const std::string trace = temp_path("breaks-query.trace");
  RunResult run =
      run_program({RANDOM_STREAMS_PROGRAM, "0", "40"}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                        {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                        {"STANDIN_ASYNC", "1"},
                                                        {"PYGRAPH_MODE", "graph"},
                                                        {"PYGRAPH_TRACE", trace}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json b = breaks_of(trace);
  RunResult summary = run_program({ANALYZER, "summary", "--json", trace}, {});
  unlink(trace.c_str());
  ASSERT_TRUE(b.is_object());
  EXPECT_EQ(b["source"], "graph_mode");
  const nlohmann::json s = nlohmann::json::parse(summary.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << summary.err;
  int queries = 0;
  for (const auto& op : s["ops"]) {
    if (op["op"] == "cuEventQuery" || op["op"] == "cuStreamQuery")
      queries += op["count"].get<int>();
  }
  ASSERT_GT(queries, 0) << "no query in these programs";
  int ends = 0;
  for (const auto& row : b["breaks"]) {
    if (row["kind"] != "ends_segment") continue;
    ++ends;
    EXPECT_NE(row["op"], "cuEventQuery") << row.dump();
    EXPECT_NE(row["op"], "cuStreamQuery") << row.dump();
  }
  EXPECT_GT(ends, 0) << "the programs' syncs end sequences";
}

// A trace-mode trace is simulated with the engine a config file sets up, as `simulate --config`:
// with kernel b denied, loop_program's loop [a b c d] is kept eager by the config, and says so.
TEST(AnalyzerBreaks, ConfigSetsUpTheSimulatedEngine) {
  const std::string config = temp_path("breaks-deny.json");
  {
    std::ofstream out(config);
    out << R"({"deny_kernels": ["b"]})";
  }
  RunResult r = run_program(
      {ANALYZER, "breaks", "--json", "--config", config, GOLDEN_DIR "/loop_program.trace"}, {});
  unlink(config.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json b = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(b.is_object()) << r.out;
  EXPECT_EQ(b["source"], "simulated");
  EXPECT_EQ(b["eager_launches"], 30);  // 18 with the default options
  ASSERT_GE(b["breaks"].size(), 1u);
  EXPECT_EQ(b["breaks"][0]["kind"], "decision");
  EXPECT_EQ(b["breaks"][0]["source"], "config");
  EXPECT_EQ(b["breaks"][0]["launches_per_step"], 4);
  RunResult missing = run_program(
      {ANALYZER, "breaks", "--config", "/nonexistent/x.json", GOLDEN_DIR "/loop_program.trace"},
      {});
  EXPECT_NE(missing.exit_code, 0);
}

// Kernel names are shown as source text: the BERT trace's kernels are mangled C++ templates.
TEST(AnalyzerBreaks, KernelNamesAreDemangled) {
  const nlohmann::json b = breaks_of(GOLDEN_DIR "/bert-b1.trace");
  ASSERT_TRUE(b.is_object());
  size_t kernels = 0;
  for (const auto& row : b["breaks"]) {
    if (!row.contains("kernel")) continue;
    ++kernels;
    EXPECT_EQ(row["kernel"].get<std::string>().rfind("_Z", 0), std::string::npos) << row.dump();
  }
  EXPECT_GT(kernels, 0u);
}

}  // namespace
}  // namespace pygraph::test
