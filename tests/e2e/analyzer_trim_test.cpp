// `pygraph-analyze trim`: the whole trace cut reads back the same to every subcommand; a
// window keeps exactly its launches, the calls and graph-mode events between them, and the
// kernels, call sites and threads they refer to; bad input gets one clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analyzer_test_files.h"
#include "trace/trace_reader.h"

namespace pygraph::test {
namespace {

using nlohmann::json;

// loop_program in graph mode: format 2 with memop details and graph mode's own events.
std::string graph_mode_trace() {
  const std::string path = temp_path("trim-graph.trace");
  RunResult r = run_program({LOOP_PROGRAM, "memset"}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                       {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                       {"PYGRAPH_MODE", "graph"},
                                                       {"PYGRAPH_TRACE", path}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

RunResult trim(const std::string& in, const std::string& out, std::vector<std::string> options) {
  std::vector<std::string> argv = {ANALYZER, "trim", "--out", out};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(in);
  return run_program(argv, {});
}

std::string analyze(const std::string& command, const std::string& trace) {
  RunResult r = run_program({ANALYZER, command, "--json", trace}, {});
  EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
  return r.out;
}

void expect_same_launch(const TraceLaunch& a, const TraceLaunch& b) {
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.ts_ns, b.ts_ns);
  EXPECT_EQ(a.dur_ns, b.dur_ns);
  EXPECT_EQ(a.tid, b.tid);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(0, std::memcmp(a.grid, b.grid, sizeof a.grid));
  EXPECT_EQ(0, std::memcmp(a.block, b.block, sizeof a.block));
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.args, b.args);
  EXPECT_EQ(a.attrs.size(), b.attrs.size());
}

void expect_same_op(const TraceOp& a, const TraceOp& b) {
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.ptr, b.ptr);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.has_detail, b.has_detail);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.dst_kind, b.dst_kind);
}

TEST(AnalyzerTrim, TheWholeTraceReadsTheSameToEveryCommand) {
  const std::string graph = graph_mode_trace();
  for (const std::string& in : {std::string(GOLDEN_DIR "/loop_program.trace"), graph}) {
    SCOPED_TRACE(in);
    const std::string out = temp_path("trim-all.trace");
    RunResult r = trim(in, out, {});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* command : {"summary", "sequences", "simulate", "breaks"}) {
      EXPECT_EQ(analyze(command, out), analyze(command, in)) << command;
    }
    Trace a, b;
    ASSERT_EQ(read_trace(in, &a).status, ReadStatus::kOk);
    ASSERT_EQ(read_trace(out, &b).status, ReadStatus::kOk);
    unlink(out.c_str());
    ASSERT_EQ(a.launches.size(), b.launches.size());
    ASSERT_EQ(a.ops.size(), b.ops.size());
    for (size_t i = 0; i < a.events.size(); ++i) {
      const TraceEvent& x = a.events[i];
      ASSERT_EQ(x.is_launch, b.events[i].is_launch);
      if (x.is_launch) {
        expect_same_launch(a.launches[x.index], b.launches[b.events[i].index]);
      } else {
        expect_same_op(a.ops[x.index], b.ops[b.events[i].index]);
      }
    }
    EXPECT_EQ(a.engine.replays.size(), b.engine.replays.size());
    EXPECT_EQ(a.engine.flushes.size(), b.engine.flushes.size());
    EXPECT_EQ(a.end.dur_ns, b.end.dur_ns);
    EXPECT_EQ(a.header.start_mono_ns, b.header.start_mono_ns);
  }
  unlink(graph.c_str());
}

TEST(AnalyzerTrim, AWindowKeepsItsLaunchesTheCallsBetweenAndWhatTheyReferTo) {
  const std::string in = graph_mode_trace();
  const std::string out = temp_path("trim-window.trace");
  RunResult r = trim(in, out, {"--skip", "5", "--launches", "10", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace a, b;
  ASSERT_EQ(read_trace(in, &a).status, ReadStatus::kOk);
  ASSERT_EQ(read_trace(out, &b).status, ReadStatus::kOk);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["first_launch"], 6);
  EXPECT_EQ(j["last_launch"], 15);
  EXPECT_EQ(j["launches_in_trace"], a.launches.size());
  EXPECT_TRUE(j["complete"].get<bool>());

  // The events of the original from just after launch 5 up to launch 16.
  std::vector<TraceEvent> window;
  size_t launches = 0;
  uint64_t lo = 0, hi = 0;
  for (const TraceEvent& e : a.events) {
    if (e.is_launch && ++launches == 16) break;
    const uint64_t seq = e.is_launch ? a.launches[e.index].seq : a.ops[e.index].seq;
    if (launches == 5 && e.is_launch) lo = seq;
    if (launches >= 6) {
      window.push_back(e);
      hi = seq;
    }
  }
  ASSERT_EQ(b.events.size(), window.size());
  ASSERT_EQ(b.launches.size(), 10u);
  EXPECT_EQ(j["other_calls"], b.ops.size());
  EXPECT_GT(b.ops.size(), 0u);  // the loop's syncs and memsets
  for (size_t i = 0; i < window.size(); ++i) {
    const TraceEvent& x = window[i];
    const TraceEvent& y = b.events[i];
    ASSERT_EQ(x.is_launch, y.is_launch);
    if (x.is_launch) {
      const TraceLaunch& l = a.launches[x.index];
      const TraceLaunch& m = b.launches[y.index];
      expect_same_launch(l, m);
      ASSERT_NE(b.function(m.function_id), nullptr);  // numbered anew, still described
      EXPECT_EQ(b.function(m.function_id)->name, a.function(l.function_id)->name);
    } else {
      const TraceOp& o = a.ops[x.index];
      const TraceOp& p = b.ops[y.index];
      expect_same_op(o, p);
      if (o.callsite_id) {
        ASSERT_NE(b.callsite(p.callsite_id), nullptr);
        EXPECT_EQ(b.callsite(p.callsite_id)->frames, a.callsite(o.callsite_id)->frames);
      }
    }
  }
  // Only what the window uses is described, numbered from 1.
  EXPECT_EQ(j["kernels"], b.functions.size());
  for (size_t i = 0; i < b.functions.size(); ++i) EXPECT_EQ(b.functions[i].id, i + 1);
  for (size_t i = 0; i < b.callsites.size(); ++i) EXPECT_EQ(b.callsites[i].id, i + 1);

  // Graph mode's events between the call before the window and the window's last call.
  size_t replays = 0;
  for (const TraceReplay& e : a.engine.replays) replays += e.seq > lo && e.seq < hi;
  EXPECT_GT(replays, 0u);
  EXPECT_EQ(b.engine.replays.size(), replays);
  for (const TraceFlush& f : b.engine.flushes) {
    if (f.callsite_id) {
      EXPECT_NE(b.callsite(f.callsite_id), nullptr);
    }
  }

  // The clock starts at the window's first call; the end record spans the window.
  const TraceEvent& first = window.front();
  const uint64_t first_ts =
      first.is_launch ? a.launches[first.index].ts_ns : a.ops[first.index].ts_ns;
  EXPECT_EQ(b.header.start_mono_ns, first_ts);
  EXPECT_EQ(b.header.start_real_ns - a.header.start_real_ns,
            b.header.start_mono_ns - a.header.start_mono_ns);
  EXPECT_LT(b.end.dur_ns, a.end.dur_ns);
  unlink(in.c_str());
  unlink(out.c_str());
}

TEST(AnalyzerTrim, TheLastLaunchesKeepWhatFollowsThem) {
  // A window to the end keeps the calls after the last launch and graph mode's events at exit.
  const std::string in = graph_mode_trace();
  const std::string out = temp_path("trim-tail.trace");
  RunResult r = trim(in, out, {"--skip", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace a, b;
  ASSERT_EQ(read_trace(in, &a).status, ReadStatus::kOk);
  ASSERT_EQ(read_trace(out, &b).status, ReadStatus::kOk);
  EXPECT_EQ(b.launches.size(), a.launches.size() - 20);
  EXPECT_EQ(b.launches.back().seq, a.launches.back().seq);
  EXPECT_EQ(b.ops.back().seq, a.ops.back().seq);
  EXPECT_EQ(b.header.start_mono_ns + b.end.dur_ns, a.header.start_mono_ns + a.end.dur_ns);
  EXPECT_NE(r.out.find("launches 21 to 28 of 28"), std::string::npos) << r.out;
  unlink(in.c_str());
  unlink(out.c_str());
}

TEST(AnalyzerTrim, DefinitionsAreNumberedAnewInOrderOfUse) {
  // loop_program's last step [a b b a] ends in a sync at a call site of its own, the trace's
  // second: alone in the cut, it is the first.
  const std::string in = GOLDEN_DIR "/loop_program.trace";
  const std::string out = temp_path("trim-last-step.trace");
  RunResult r = trim(in, out, {"--skip", "44"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace a, b;
  ASSERT_EQ(read_trace(in, &a).status, ReadStatus::kOk);
  ASSERT_EQ(read_trace(out, &b).status, ReadStatus::kOk);
  unlink(out.c_str());
  ASSERT_EQ(a.launches.size(), 48u);
  ASSERT_EQ(b.launches.size(), 4u);
  ASSERT_EQ(b.ops.size(), 1u);
  ASSERT_EQ(a.ops.back().callsite_id, 2u);
  EXPECT_EQ(b.ops[0].callsite_id, 1u);
  ASSERT_EQ(b.callsites.size(), 1u);
  EXPECT_EQ(b.callsites[0].frames, a.callsite(2)->frames);
  ASSERT_EQ(b.functions.size(), 2u);
  EXPECT_EQ(b.functions[0].name, "a");
  EXPECT_EQ(b.functions[1].name, "b");
  for (const TraceLaunch& l : b.launches) EXPECT_NE(b.function(l.function_id), nullptr);
}

TEST(AnalyzerTrim, BadInputGetsOneClearError) {
  const std::string golden = GOLDEN_DIR "/loop_program.trace";
  const std::string out = temp_path("trim-bad.trace");
  struct Case {
    std::vector<std::string> argv;
    int exit_code;
    const char* message;
  };
  const std::string garbage = temp_path("trim-garbage.trace");
  std::ofstream(garbage) << "not a trace\n";
  const std::string bytes = slurp(golden);
  const std::string killed = temp_path("trim-killed.trace");  // the end record cut off
  std::ofstream(killed, std::ios::binary)
      << bytes.substr(0, bytes.size() - sizeof(trace::RecordHeader) - sizeof(trace::EndRecord));
  const Case cases[] = {
      {{ANALYZER, "trim", golden}, 1, "--out OUT.trace is needed"},
      {{ANALYZER, "trim", "--out"}, 1, "--out needs a file name"},
      {{ANALYZER, "trim", "--out", out, "--launches", "0", golden}, 1, "--launches needs"},
      {{ANALYZER, "trim", "--out", out, "--skip", "-1", golden}, 1, "--skip needs"},
      {{ANALYZER, "trim", "--out", out, "--skip", "48", golden}, 1, "leaves none of"},
      {{ANALYZER, "trim", "--out", out, "/nonexistent.trace"}, 2, "cannot open"},
      {{ANALYZER, "trim", "--out", out, garbage}, 2, "not a pygraph trace"},
      {{ANALYZER, "trim", "--out", "/nonexistent/dir/x.trace", golden}, 2, "cannot write"},
      {{ANALYZER, "trim", "--out", out, killed}, 3, "trace has no end record"},
  };
  for (const Case& c : cases) {
    RunResult r = run_program(c.argv, {});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.argv.back() << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  // A cut of a trace without an end record has none either, and says so.
  Trace t;
  EXPECT_EQ(read_trace(out, &t).status, ReadStatus::kIncomplete);
  EXPECT_FALSE(t.has_end);
  EXPECT_EQ(t.launches.size(), 48u);
  RunResult help = run_program({ANALYZER, "trim", "--help"}, {});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("example:"), std::string::npos);
  unlink(out.c_str());
  unlink(garbage.c_str());
  unlink(killed.c_str());
}

}  // namespace
}  // namespace pygraph::test
