// Trace format 2 from a real run: graph mode writes its own events into the trace, and they
// add up to the stats it writes (PYGRAPH_STATS); memops carry their source, value and kinds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "graph/engine_stats.h"
#include "run_program.h"
#include "trace/trace_reader.h"

namespace pygraph::test {
namespace {

TEST(TraceEngineEvents, GraphModeEventsAddUpToItsStats) {
  const std::string trace = temp_path("events.trace");
  const std::string stats = temp_path("events-stats.json");
  RunResult r = run_program({RANDOM_PROGRAM, "0", "20"}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                          {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                          {"PYGRAPH_MODE", "graph"},
                                                          {"PYGRAPH_TRACE", trace},
                                                          {"PYGRAPH_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  Trace t;
  ASSERT_EQ(read_trace(trace, &t).status, ReadStatus::kOk);
  ASSERT_EQ(t.header.version, trace::kTraceVersion);
  const TraceEngineEvents& e = t.engine;
  ASSERT_GT(e.replays.size(), 0u);
  EXPECT_EQ(e.followed.size(), s["graphs"]["sequences_followed"].get<size_t>());
  EXPECT_EQ(e.chunks.size(), s["graphs"]["instantiated"].get<size_t>());
  EXPECT_EQ(e.replays.size(), s["graphs"]["replays"].get<size_t>());
  uint64_t patched = 0;
  for (const TraceReplay& x : e.replays) patched += x.patched;
  EXPECT_EQ(patched, s["graphs"]["patched_nodes"].get<uint64_t>());

  std::map<std::string, uint64_t> launches, memops;
  for (const TraceEager& x : e.eager) {
    (x.memop ? memops : launches)[eager_reason_name(EagerReason(x.reason))] += x.count;
  }
  EXPECT_EQ(nlohmann::json(launches), s["eager_launches_by_reason"]);
  EXPECT_EQ(nlohmann::json(memops), s["memops"]["eager_by_reason"]);

  std::map<std::string, uint64_t> flushes;
  for (const TraceFlush& f : e.flushes) {
    const bool by_op = f.cause == uint8_t(FlushCause::kOp);
    flushes[by_op ? op_info(f.op).name : flush_cause_name(FlushCause(f.cause))]++;
    // The op that caused it was made somewhere in the program: its call site is named.
    if (by_op) {
      EXPECT_NE(t.callsite(f.callsite_id), nullptr) << op_info(f.op).name;
    }
  }
  EXPECT_EQ(e.flushes.size(), s["flushes"]["total"].get<size_t>());
  EXPECT_EQ(nlohmann::json(flushes), s["flushes"]["by_reason"]);

  size_t detailed = 0;
  for (const TraceOp& o : t.ops) {
    if (!o.has_detail) continue;
    ++detailed;
    EXPECT_NE(o.dst_kind, trace::MemoryKind::kUnknown);
  }
  EXPECT_EQ(detailed, s["memops"]["seen_by_engine"].get<size_t>());

  RunResult summary = run_program({ANALYZER, "summary", trace}, {});
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("Graph mode did:"), std::string::npos) << summary.out;
  unlink(trace.c_str());
  unlink(stats.c_str());
}

// Measured decisions (decision_program: 40 steps of 3 launches and a sync): every verdict the
// stats count is in the trace with its sequence's signature, verdict and source.
TEST(TraceEngineEvents, EveryDecisionIsInTheTraceWithItsSignatureAndFigures) {
  const std::string trace = temp_path("decisions.trace");
  const std::string stats = temp_path("decisions-stats.json");
  const std::string cache = temp_path("decisions-cache.json");  // empty: the verdict is measured
  RunResult r = run_program({DECISION_PROGRAM}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                 {"PYGRAPH_CACHE", cache},
                                                 {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                 {"PYGRAPH_MODE", "graph"},
                                                 {"PYGRAPH_MEASURE_WINDOWS", "1"},
                                                 {"PYGRAPH_MEASURE_ITERATIONS", "2"},
                                                 {"PYGRAPH_TRACE", trace},
                                                 {"PYGRAPH_STATS", stats}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = nlohmann::json::parse(std::ifstream(stats), nullptr, false);
  Trace t;
  ASSERT_EQ(read_trace(trace, &t).status, ReadStatus::kOk);
  const auto& d = s["decisions"];
  size_t verdicts = 0;
  for (const TraceDecision& x : t.engine.decisions) {
    verdicts += x.verdict != trace::DecisionVerdict::kMeasuring;
    EXPECT_EQ(x.launches, 3u);
  }
  EXPECT_EQ(verdicts, d["graph"].get<size_t>() + d["eager"].get<size_t>());
  ASSERT_GT(verdicts, 0u);
  const TraceDecision& last = t.engine.decisions.back();
  ASSERT_EQ(d["sequences"].size(), 1u);
  EXPECT_EQ(last.signature, d["sequences"][0]["signature"].get<std::string>());
  EXPECT_EQ(trace::decision_verdict_name(last.verdict), d["sequences"][0]["verdict"]);
  EXPECT_EQ(trace::decision_source_name(last.source), d["sequences"][0]["source"]);
  EXPECT_GT(last.eager_ns, 0.0);  // measured: the eager and graph windows' medians
  EXPECT_GT(last.graph_ns, 0.0);
  unlink(trace.c_str());
  unlink(stats.c_str());
  unlink(cache.c_str());
  unlink((cache + ".lock").c_str());
}

TEST(TraceEngineEvents, TraceModeWritesNoEngineEvents) {
  const std::string trace = temp_path("trace-mode.trace");
  RunResult r = run_program({RANDOM_PROGRAM, "0", "3"}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                         {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                         {"PYGRAPH_MODE", "trace"},
                                                         {"PYGRAPH_TRACE", trace}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace t;
  ASSERT_EQ(read_trace(trace, &t).status, ReadStatus::kOk);
  EXPECT_TRUE(t.engine.empty());
  size_t detailed = 0;
  for (const TraceOp& o : t.ops) detailed += o.has_detail;
  EXPECT_GT(detailed, 0u);  // trace mode asks the driver about memops too
  unlink(trace.c_str());
}

}  // namespace
}  // namespace pygraph::test
