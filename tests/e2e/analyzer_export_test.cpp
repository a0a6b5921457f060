// `pygraph-analyze export --perfetto`: the timeline read back as JSON holds every call of the
// trace once, on its thread and in order, with a mark per call on its stream, boundaries with
// their call sites; --limit caps it and says so; bad input never crashes it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "analyzer_test_files.h"
#include "graph/engine_stats.h"
#include "trace/trace_reader.h"

namespace pygraph::test {
namespace {

using nlohmann::json;

// thread_program: two threads taking turns on one stream, syncs and host reads every step,
// captures and graph launches of its own.
std::string two_thread_trace() {
  return traced_run({THREAD_PROGRAM}, "export.trace");
}

struct Exported {
  RunResult run;
  json timeline;  // the file, parsed
};

Exported export_trace(const std::string& trace, std::vector<std::string> extra = {}) {
  const std::string out = temp_path("timeline.json");
  std::vector<std::string> argv = {ANALYZER, "export", "--perfetto", out};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(trace);
  Exported e{run_program(argv, {}), json()};
  const std::string text = slurp(out);
  unlink(out.c_str());
  if (!text.empty()) e.timeline = json::parse(text);  // throws, failing the test, if malformed
  return e;
}

bool is_launch(const json& ev) {
  return ev["cat"] == "launch";
}

// Graph mode's events (its records, or the engine run offline) are in categories "graph_mode,*".
bool is_graph_mode(const json& ev) {
  return ev.contains("cat") && ev["cat"].get<std::string>().starts_with("graph_mode,");
}

uint64_t graph_mode_events(const json& summary) {
  const json& g = summary["graph_mode"];
  return g["sequences_followed"].get<uint64_t>() + g["graphs_built"].get<uint64_t>() +
         g["replays"].get<uint64_t>() + g["flushes"].get<uint64_t>() +
         g["decisions"].get<uint64_t>() + g["eager_samples"].get<uint64_t>();
}

TEST(AnalyzerExport, EveryCallOnceOnItsThreadInOrderAndMarkedOnItsStream) {
  const std::string path = two_thread_trace();
  Trace t;
  ASSERT_EQ(read_trace(path, &t).status, ReadStatus::kOk);
  Exported e = export_trace(path, {"--json"});
  unlink(path.c_str());
  ASSERT_EQ(e.run.exit_code, 0) << e.run.err;
  const json summary = json::parse(e.run.out);
  ASSERT_TRUE(e.timeline["traceEvents"].is_array());
  ASSERT_EQ(t.threads.size(), 2u);

  std::map<uint64_t, const TraceLaunch*> launch_by_seq;
  std::map<uint64_t, const TraceOp*> op_by_seq;
  for (const auto& l : t.launches) launch_by_seq[l.seq] = &l;
  for (const auto& o : t.ops) op_by_seq[o.seq] = &o;
  std::set<int64_t> os_tids;
  for (const auto& th : t.threads) os_tids.insert(th.os_tid);

  std::map<std::pair<int64_t, int64_t>, std::string> track_names;
  std::multiset<uint64_t> launch_seqs, op_seqs;
  std::map<std::pair<int64_t, int64_t>, double> thread_free_at;  // end of the last call
  std::map<std::string, uint64_t> stream_launch_marks;           // by track name
  uint64_t boundaries = 0, marks = 0, metadata = 0;
  std::vector<json> stream_events;
  for (const json& ev : e.timeline["traceEvents"]) {
    const auto track = std::make_pair(ev["pid"].get<int64_t>(), ev["tid"].get<int64_t>());
    if (ev["ph"] == "M") {
      ++metadata;
      if (ev["name"] == "thread_name") track_names[track] = ev["args"]["name"];
      continue;
    }
    ASSERT_TRUE(track_names.count(track)) << "an event before its track's name: " << ev;
    if (is_graph_mode(ev)) continue;  // AnalyzerExport.GraphMode* check those
    if (ev["ph"] == "i") {            // a mark on a stream track
      ++marks;
      stream_events.push_back(ev);
      continue;
    }
    ASSERT_EQ(ev["ph"], "X") << ev;
    // On a thread of the trace, after the previous call of that thread has returned.
    EXPECT_EQ(track.first, t.header.pid);
    EXPECT_TRUE(os_tids.count(track.second)) << ev;
    const double ts = ev["ts"], dur = ev["dur"];
    EXPECT_GE(ts, 0.0);
    EXPECT_GE(ts + 1e-6, thread_free_at[track]) << "calls of one thread out of order: " << ev;
    thread_free_at[track] = ts + dur;
    const uint64_t seq = ev["args"]["seq"];
    if (is_launch(ev)) {
      launch_seqs.insert(seq);
      ASSERT_TRUE(launch_by_seq.count(seq));
      const TraceLaunch& l = *launch_by_seq[seq];
      EXPECT_EQ(ev["name"], "mix");
      EXPECT_EQ(ev["args"]["grid"], json({l.grid[0], l.grid[1], l.grid[2]}));
      EXPECT_EQ(ev["args"]["block"], json({l.block[0], l.block[1], l.block[2]}));
      EXPECT_EQ(ev["args"]["door"], "cuGetProcAddress");
      EXPECT_EQ(ev["args"]["result"], 0);
      EXPECT_NEAR(dur * 1000, double(l.dur_ns), 1e-6);
      continue;
    }
    op_seqs.insert(seq);
    ASSERT_TRUE(op_by_seq.count(seq));
    const TraceOp& o = *op_by_seq[seq];
    EXPECT_EQ(ev["name"], op_info(o.op).name);
    const bool boundary = ev["cat"].get<std::string>().starts_with("boundary,");
    EXPECT_EQ(boundary, op_is_boundary(o.op)) << ev;
    if (boundary) {
      ++boundaries;
      EXPECT_EQ(ev["cname"], "terrible");
      // Its call site: this program's frame, innermost first.
      ASSERT_TRUE(ev["args"].contains("call_site")) << ev;
      EXPECT_TRUE(ev["args"]["call_site"][0].get<std::string>().starts_with("thread_program"))
          << ev;
    }
  }
  // Every launch and every other call exactly once.
  EXPECT_EQ(launch_seqs.size(), t.launches.size());
  EXPECT_EQ(std::set<uint64_t>(launch_seqs.begin(), launch_seqs.end()).size(), t.launches.size());
  EXPECT_EQ(op_seqs.size(), t.ops.size());
  EXPECT_EQ(std::set<uint64_t>(op_seqs.begin(), op_seqs.end()).size(), t.ops.size());
  EXPECT_EQ(thread_free_at.size(), 2u);  // both threads launched
  uint64_t trace_boundaries = 0;
  for (const auto& o : t.ops) trace_boundaries += op_is_boundary(o.op);
  EXPECT_EQ(boundaries, trace_boundaries);
  EXPECT_GE(boundaries, 48u);  // 24 steps, each a sync and a host read

  // One mark per launch on the track of the stream it went to.
  std::map<uint64_t, uint64_t> launches_per_stream;
  for (const auto& l : t.launches) launches_per_stream[l.stream]++;
  for (const json& ev : stream_events) {
    EXPECT_NE(ev["pid"].get<int64_t>(), int64_t(t.header.pid));
    const auto track = std::make_pair(ev["pid"].get<int64_t>(), ev["tid"].get<int64_t>());
    if (is_launch(ev)) stream_launch_marks[track_names[track]]++;
  }
  ASSERT_EQ(stream_launch_marks.size(), launches_per_stream.size());
  for (const auto& [stream, n] : launches_per_stream) {
    char name[40];
    std::snprintf(name, sizeof name, "stream 0x%llx", static_cast<unsigned long long>(stream));
    EXPECT_EQ(stream_launch_marks[name], n) << name;
  }

  // What the command says it wrote is what the file holds.
  EXPECT_EQ(summary["launches"], t.launches.size());
  EXPECT_EQ(summary["other_calls"], t.ops.size());
  EXPECT_EQ(summary["boundaries"], boundaries);
  EXPECT_EQ(summary["stream_marks"], marks);
  EXPECT_EQ(summary["events"],
            t.launches.size() + t.ops.size() + marks + graph_mode_events(summary));
  EXPECT_EQ(summary["metadata_events"], metadata);
  EXPECT_EQ(summary["threads"], 2);
  EXPECT_FALSE(summary["capped"].get<bool>());
  EXPECT_FALSE(e.timeline["otherData"]["capped"].get<bool>());
}

TEST(AnalyzerExport, LimitCapsTheTimelineAndSaysSo) {
  Trace t;
  ASSERT_EQ(read_trace(GOLDEN_DIR "/loop_program.trace", &t).status, ReadStatus::kOk);
  Exported e = export_trace(GOLDEN_DIR "/loop_program.trace", {"--limit", "25"});
  ASSERT_EQ(e.run.exit_code, 0) << e.run.err;
  EXPECT_NE(e.run.out.find("Capped at 25 events (--limit)"), std::string::npos) << e.run.out;
  uint64_t events = 0, notes = 0;
  std::vector<uint64_t> seqs;
  for (const json& ev : e.timeline["traceEvents"]) {
    if (ev["ph"] == "M") continue;
    if (ev.value("s", "") == "g") {  // the note, across the whole timeline
      ++notes;
      EXPECT_NE(ev["name"].get<std::string>().find("capped at 25 events"), std::string::npos);
      continue;
    }
    ++events;
    if (ev["ph"] == "X" && !is_graph_mode(ev)) seqs.push_back(ev["args"]["seq"]);
  }
  EXPECT_EQ(events, 25u);
  EXPECT_EQ(notes, 1u);
  EXPECT_TRUE(e.timeline["otherData"]["capped"].get<bool>());
  EXPECT_NE(e.timeline["otherData"]["note"].get<std::string>().find("--limit"), std::string::npos);
  // The calls kept are the first ones the program made.
  std::vector<uint64_t> first;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const TraceEvent& ev = t.events[i];
    first.push_back(ev.is_launch ? t.launches[ev.index].seq : t.ops[ev.index].seq);
  }
  EXPECT_EQ(seqs, first);

  Exported all = export_trace(GOLDEN_DIR "/loop_program.trace", {"--limit", "100000"});
  EXPECT_EQ(all.run.out.find("Capped"), std::string::npos) << all.run.out;
}

// Graph mode's events of a timeline, by category, and the graph-mode process's name.
struct GraphModeTimeline {
  std::map<std::string, std::vector<json>> by_cat;
  std::string process_name;
};

GraphModeTimeline graph_mode_part(const json& timeline, int64_t pid) {
  GraphModeTimeline g;
  const int64_t graph_pid = pid + (int64_t(2) << 22);
  for (const json& ev : timeline["traceEvents"]) {
    if (ev["pid"] != graph_pid) continue;
    if (ev["ph"] == "M" && ev["name"] == "process_name") g.process_name = ev["args"]["name"];
    if (is_graph_mode(ev)) g.by_cat[ev["cat"]].push_back(ev);
  }
  return g;
}

TEST(AnalyzerExport, GraphModeRecordsBecomeReplaysFlushesAndCounts) {
  // random_program run in graph mode on the stand-in, traced: the trace holds graph mode's own
  // records (format 2), flushes by syncs and other causes among them, which the timeline shows
  // one for one.
  const std::string path = temp_path("graph-mode.trace");
  RunResult r = run_program({RANDOM_PROGRAM, "0", "20"}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                          {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                          {"PYGRAPH_MODE", "graph"},
                                                          {"PYGRAPH_TRACE", path}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace t;
  ASSERT_EQ(read_trace(path, &t).status, ReadStatus::kOk);
  ASSERT_FALSE(t.engine.replays.empty());
  Exported e = export_trace(path, {"--json"});
  unlink(path.c_str());
  ASSERT_EQ(e.run.exit_code, 0) << e.run.err;
  const json summary = json::parse(e.run.out);
  EXPECT_EQ(summary["graph_mode"]["source"], "recorded");
  EXPECT_EQ(e.timeline["otherData"]["graph_mode"], "recorded");
  GraphModeTimeline g = graph_mode_part(e.timeline, t.header.pid);
  EXPECT_NE(g.process_name.find("graph mode (its records)"), std::string::npos) << g.process_name;

  // Every replay, with its nodes and patched nodes, on a graph-mode track of a stream.
  const auto& replays = g.by_cat["graph_mode,replay"];
  ASSERT_EQ(replays.size(), t.engine.replays.size());
  for (size_t i = 0; i < replays.size(); ++i) {
    EXPECT_EQ(replays[i]["ph"], "X");
    EXPECT_EQ(replays[i]["args"]["nodes"], t.engine.replays[i].nodes);
    EXPECT_EQ(replays[i]["args"]["patched"], t.engine.replays[i].patched);
    EXPECT_EQ(replays[i]["args"]["sequence"], t.engine.replays[i].sequence);
  }
  // Every flush with its cause, the op and its call site when an op caused it.
  const auto& flushes = g.by_cat["graph_mode,flush"];
  ASSERT_EQ(flushes.size(), t.engine.flushes.size());
  ASSERT_FALSE(flushes.empty());
  for (size_t i = 0; i < flushes.size(); ++i) {
    const TraceFlush& f = t.engine.flushes[i];
    EXPECT_EQ(flushes[i]["args"]["cause"], flush_cause_name(FlushCause(f.cause)));
    if (f.cause == uint8_t(FlushCause::kOp)) {
      EXPECT_EQ(flushes[i]["args"]["op"], op_info(f.op).name);
      EXPECT_TRUE(flushes[i]["args"].contains("call_site")) << flushes[i];
    }
  }
  EXPECT_EQ(g.by_cat["graph_mode,chunk"].size(), t.engine.chunks.size());
  EXPECT_EQ(g.by_cat["graph_mode,followed"].size(), t.engine.followed.size());
  // Eager launches as running counts by reason; the last sample holds the totals.
  const auto& eager = g.by_cat["graph_mode,eager"];
  ASSERT_FALSE(eager.empty());
  std::map<std::string, uint64_t> totals;
  for (const TraceEager& x : t.engine.eager) {
    totals[std::string(x.memop ? "memops: " : "launches: ") +
           eager_reason_name(EagerReason(x.reason))] += x.count;
  }
  EXPECT_EQ(eager.back()["ph"], "C");
  EXPECT_EQ(eager.back()["args"], json(totals));
  EXPECT_EQ(summary["graph_mode"]["replays"], replays.size());
  EXPECT_EQ(summary["events"], t.launches.size() + t.ops.size() +
                                   summary["stream_marks"].get<uint64_t>() +
                                   graph_mode_events(summary));
}

TEST(AnalyzerExport, DecisionsAreOnTheTimelineAndInTheSummary) {
  // decision_program with dec_b denied: its sequence is decided eager by the config (record 12
  // in graph mode's trace). The timeline shows each decision record with its verdict and
  // source; `summary` lists each sequence's last decision and counts them.
  const std::string path = temp_path("decided.trace");
  RunResult r = run_program({DECISION_PROGRAM}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                 {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                 {"PYGRAPH_MODE", "graph"},
                                                 {"PYGRAPH_DENY_KERNELS", "dec_b"},
                                                 {"PYGRAPH_TRACE", path}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace t;
  ASSERT_EQ(read_trace(path, &t).status, ReadStatus::kOk);
  ASSERT_FALSE(t.engine.decisions.empty());
  Exported e = export_trace(path, {"--json"});
  RunResult summary = run_program({ANALYZER, "summary", "--json", path}, {});
  RunResult text = run_program({ANALYZER, "summary", path}, {});
  unlink(path.c_str());
  ASSERT_EQ(e.run.exit_code, 0) << e.run.err;
  GraphModeTimeline g = graph_mode_part(e.timeline, t.header.pid);
  const auto& decisions = g.by_cat["graph_mode,decision"];
  ASSERT_EQ(decisions.size(), t.engine.decisions.size());
  bool config_eager = false;
  for (size_t i = 0; i < decisions.size(); ++i) {
    const TraceDecision& d = t.engine.decisions[i];
    EXPECT_EQ(decisions[i]["args"]["sequence"], d.sequence);
    EXPECT_EQ(decisions[i]["args"]["verdict"], decision_verdict_name(d.verdict));
    EXPECT_EQ(decisions[i]["args"]["source"], decision_source_name(d.source));
    config_eager |= decisions[i]["args"]["verdict"] == "eager" &&
                    decisions[i]["args"]["source"] == "config" &&
                    !decisions[i]["args"]["signature"].get<std::string>().empty();
  }
  EXPECT_TRUE(config_eager) << json(decisions).dump();
  EXPECT_EQ(json::parse(e.run.out)["graph_mode"]["decisions"], decisions.size());

  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  const json s = json::parse(summary.out);
  const json& d = s["graph_mode"]["decisions"];
  EXPECT_GE(d["counts"]["eager"].get<int>(), 1) << d;
  EXPECT_EQ(d["counts"]["config"], d["counts"]["eager"]) << d;
  std::set<uint32_t> sequences;
  for (const TraceDecision& x : t.engine.decisions) sequences.insert(x.sequence);
  EXPECT_EQ(d["sequences"].size(), sequences.size());
  EXPECT_NE(text.out.find("decisions (each sequence's last): 0 graph, "), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(": eager (config), 3 launches"), std::string::npos) << text.out;
}

TEST(AnalyzerExport, TraceModeGetsTheEngineRunOffline) {
  // A trace-mode trace has no records of graph mode: the timeline shows what `simulate` runs.
  Exported e = export_trace(GOLDEN_DIR "/loop_program.trace", {"--json"});
  ASSERT_EQ(e.run.exit_code, 0) << e.run.err;
  const json summary = json::parse(e.run.out);
  RunResult sim =
      run_program({ANALYZER, "simulate", "--json", GOLDEN_DIR "/loop_program.trace"}, {});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const json stats = json::parse(sim.out);
  Trace t;
  ASSERT_EQ(read_trace(GOLDEN_DIR "/loop_program.trace", &t).status, ReadStatus::kOk);
  GraphModeTimeline g = graph_mode_part(e.timeline, t.header.pid);
  EXPECT_EQ(summary["graph_mode"]["source"], "simulated");
  EXPECT_NE(g.process_name.find("simulated graph mode"), std::string::npos) << g.process_name;
  EXPECT_EQ(g.by_cat["graph_mode,replay"].size(), stats["graphs"]["replays"].get<size_t>());
  EXPECT_EQ(g.by_cat["graph_mode,chunk"].size(), stats["graphs"]["instantiated"].get<size_t>());
  EXPECT_EQ(g.by_cat["graph_mode,flush"].size(), stats["flushes"]["total"].get<size_t>());
  EXPECT_GT(g.by_cat["graph_mode,replay"].size(), 0u);
}

TEST(AnalyzerExport, NamesThatAreNotUtf8AreReplacedNotFatal) {
  // The golden door trace with its kernel's name bytes made invalid UTF-8 (same length, so the
  // record stays well-formed): every command still answers, with valid JSON and SVG text.
  std::string bytes = slurp(GOLDEN_DIR "/door_program.trace");
  const size_t at = bytes.find("axpy");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 4, "\xff\xfe\xc3y");
  const std::string path = temp_path("not-utf8.trace"), svg = temp_path("not-utf8.svg");
  std::ofstream(path, std::ios::binary) << bytes;
  Exported e = export_trace(path);
  EXPECT_EQ(e.run.exit_code, 0) << e.run.err;
  EXPECT_TRUE(e.timeline["traceEvents"].is_array());
  RunResult summary = run_program({ANALYZER, "summary", "--json", path}, {});
  RunResult plot = run_program({ANALYZER, "plot", "--out", svg, path}, {});
  const std::string drawn = slurp(svg);
  unlink(path.c_str());
  unlink(svg.c_str());
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NO_THROW(json::parse(summary.out));
  EXPECT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_EQ(drawn.find('\xff'), std::string::npos);
}

TEST(AnalyzerExport, SimulateWritesAPatchedKernelsNameThatIsNotUtf8) {
  // simulate --json lists the kernels patched most by name: one of mlp-train's, made invalid
  // UTF-8 (same length), is written as U+FFFD, alone and in --compare, never thrown.
  std::string bytes = slurp(GOLDEN_DIR "/mlp-train.trace");
  const size_t at = bytes.find("sm80_xmma_gemm");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 4, "\xff\xfe\xc3m");
  const std::string path = temp_path("not-utf8-sim.trace"), config = temp_path("sim.json");
  std::ofstream(path, std::ios::binary) << bytes;
  std::ofstream(config) << "{}";
  RunResult one = run_program({ANALYZER, "simulate", "--json", path}, {});
  RunResult two =
      run_program({ANALYZER, "simulate", "--json", "--compare", config, config, path}, {});
  unlink(path.c_str());
  unlink(config.c_str());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const json sim = json::parse(one.out);
  bool replaced = false;
  for (const json& p : sim["patched_most"]) {
    replaced |= p["node"].get<std::string>().find("\xef\xbf\xbd") != std::string::npos;
  }
  EXPECT_TRUE(replaced) << sim["patched_most"].dump();
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_TRUE(json::parse(two.out)["B"]["patched_most"].is_array());
}

TEST(AnalyzerExport, BadInputGetsOneClearErrorAndTheExitStatus) {
  EXPECT_EQ(run_program({ANALYZER, "export", GOLDEN_DIR "/loop_program.trace"}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "export", "--perfetto"}, {}).exit_code, 1);
  EXPECT_EQ(
      run_program({ANALYZER, "export", "--perfetto", "x.json", "--limit", "0", "t"}, {}).exit_code,
      1);
  EXPECT_EQ(run_program({ANALYZER, "export", "--perfetto", "x.json", "--bogus", "t"}, {}).exit_code,
            1);
  RunResult missing =
      run_program({ANALYZER, "export", "--perfetto", "/tmp/x.json", "/nonexistent.trace"}, {});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("cannot open /nonexistent.trace"), std::string::npos);
  RunResult unwritable = run_program({ANALYZER, "export", "--perfetto", "/nonexistent-dir/x.json",
                                      GOLDEN_DIR "/loop_program.trace"},
                                     {});
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_EQ(unwritable.err, "pygraph-analyze: cannot write /nonexistent-dir/x.json\n");

  // A trace cut short: the timeline covers what was read, and the status says so.
  const std::string good = two_thread_trace();
  const std::string cut = temp_path("cut.trace");
  const std::string bytes = slurp(good);
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  unlink(good.c_str());
  Exported e = export_trace(cut);
  unlink(cut.c_str());
  EXPECT_EQ(e.run.exit_code, 3);
  EXPECT_NE(e.run.err.find("pygraph-analyze: " + cut + ": "), std::string::npos) << e.run.err;
  EXPECT_FALSE(e.timeline["otherData"]["complete"].get<bool>());
  EXPECT_GT(e.timeline["traceEvents"].size(), 10u);

  RunResult help = run_program({ANALYZER, "export", "--help"}, {});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("example:"), std::string::npos);
}

}  // namespace
}  // namespace pygraph::test
