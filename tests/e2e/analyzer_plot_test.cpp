// `pygraph-analyze plot`: a golden chart of a checked-in trace, an SVG whose tags balance and
// whose bars and flush ticks match what graph mode did (its records in a graph-mode trace, its
// engine run offline as `simulate` runs it otherwise), and clear errors for bad options.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "analyzer_test_files.h"
#include "trace/trace_reader.h"

namespace pygraph::test {
namespace {

using nlohmann::json;

constexpr const char* kLoopTrace = GOLDEN_DIR "/loop_program.trace";

struct Plotted {
  RunResult run;
  std::string svg;
};

Plotted plot(const std::string& trace, std::vector<std::string> extra = {}) {
  const std::string out = temp_path("plot.svg");
  std::vector<std::string> argv = {ANALYZER, "plot", "--out", out};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(trace);
  Plotted p{run_program(argv, {}), ""};
  p.svg = slurp(out);
  unlink(out.c_str());
  return p;
}

// "" when every tag is closed in order and attribute quotes pair up, else what is wrong.
std::string tag_problem(const std::string& svg) {
  std::vector<std::string> open;
  for (size_t i = svg.find('<'); i != std::string::npos; i = svg.find('<', i)) {
    const size_t end = svg.find('>', i);
    if (end == std::string::npos) return "a tag without '>' at " + std::to_string(i);
    const std::string tag = svg.substr(i + 1, end - i - 1);
    i = end + 1;
    if (std::count(tag.begin(), tag.end(), '"') % 2) return "odd quotes in <" + tag + ">";
    if (tag.starts_with("?")) continue;  // the XML declaration
    if (tag.starts_with("/")) {
      if (open.empty() || open.back() != tag.substr(1)) return "unexpected <" + tag + ">";
      open.pop_back();
    } else if (!tag.ends_with("/")) {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  for (size_t i = svg.find('&'); i != std::string::npos; i = svg.find('&', i + 1)) {
    bool entity = false;
    for (std::string e : {"&amp;", "&lt;", "&gt;", "&quot;"})
      entity |= svg.compare(i, e.size(), e) == 0;
    if (!entity) return "a bare '&' at " + std::to_string(i);
  }
  return "";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t i = text.find(what); i != std::string::npos; i = text.find(what, i + 1)) ++n;
  return n;
}

TEST(AnalyzerPlot, Golden) {
  // A checked-in trace, so the chart never changes unless the plot does.
  Plotted p = plot(kLoopTrace);
  EXPECT_EQ(p.run.exit_code, 0) << p.run.err;
  EXPECT_EQ(p.svg, slurp(GOLDEN_DIR "/loop_program.plot.svg"));
  EXPECT_NE(p.run.out.find("48 launches in 66 buckets of 0.01 ms, 30 (62.5 %) in graphs (graph "
                           "mode simulated offline); 0 flushes"),
            std::string::npos)
      << p.run.out;
}

// The buckets' totals and the ticks against what graph mode did.
void expect_series_matches(const Plotted& p, const json& series, uint64_t launches,
                           uint64_t in_graphs, uint64_t flushes) {
  uint64_t graphs = 0, eager = 0, flush_count = 0, graph_bars = 0, eager_bars = 0;
  for (const json& b : series["buckets"]) {
    graphs += b["in_graphs"].get<uint64_t>();
    eager += b["eager"].get<uint64_t>();
    flush_count += b["flushes"].get<uint64_t>();
    graph_bars += b["in_graphs"] > 0;
    eager_bars += b["eager"] > 0;
  }
  EXPECT_EQ(graphs + eager, launches);
  EXPECT_EQ(graphs, in_graphs);
  EXPECT_EQ(series["in_graphs"], in_graphs);
  EXPECT_EQ(flush_count, flushes);
  EXPECT_EQ(series["flushes"], flushes);
  EXPECT_EQ(count(p.svg, "class=\"in-graphs\""), graph_bars);
  EXPECT_EQ(count(p.svg, "class=\"eager\""), eager_bars);
  EXPECT_LE(count(p.svg, "class=\"flush\""), flushes);
  EXPECT_GE(count(p.svg, "class=\"flush\""), flushes ? 1u : 0u);
}

TEST(AnalyzerPlot, TraceModeBarsAreWhatSimulateCounts) {
  Plotted p = plot(kLoopTrace, {"--json"});
  ASSERT_EQ(p.run.exit_code, 0) << p.run.err;
  EXPECT_EQ(tag_problem(p.svg), "");
  const json series = json::parse(p.run.out);
  RunResult sim = run_program({ANALYZER, "simulate", "--json", kLoopTrace}, {});
  ASSERT_EQ(sim.exit_code, 0);
  const json stats = json::parse(sim.out);
  EXPECT_EQ(series["graph_mode"], "simulated");
  // The loop [b c] without syncs is followed by the engine (the `sequences` what-if says 16).
  expect_series_matches(p, series, 48, stats["launches"]["replayed_in_graphs"].get<uint64_t>(),
                        stats["flushes"]["total"].get<uint64_t>());
  EXPECT_EQ(series["in_graphs"], 30);
  EXPECT_DOUBLE_EQ(series["coverage_percent"].get<double>(),
                   stats["coverage_percent"].get<double>());
  EXPECT_NE(p.svg.find("launches per second"), std::string::npos);
  EXPECT_NE(p.svg.find("time since the trace started (ms)"), std::string::npos);
}

TEST(AnalyzerPlot, GraphModeTraceIsDrawnFromItsRecords) {
  // random_program in graph mode on the stand-in with a trace (syncs, copies and frees that
  // flush): the chart's counts are the trace's own records of graph mode.
  const std::string path = temp_path("graph-plot.trace");
  RunResult r = run_program({RANDOM_PROGRAM, "0", "20"}, {{"LD_PRELOAD", PYGRAPH_SHIM},
                                                          {"LD_LIBRARY_PATH", STANDIN_DIR},
                                                          {"PYGRAPH_MODE", "graph"},
                                                          {"PYGRAPH_TRACE", path}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Trace t;
  ASSERT_EQ(read_trace(path, &t).status, ReadStatus::kOk);
  Plotted p = plot(path, {"--json"});
  unlink(path.c_str());
  ASSERT_EQ(p.run.exit_code, 0) << p.run.err;
  EXPECT_EQ(tag_problem(p.svg), "");
  const json series = json::parse(p.run.out);
  EXPECT_EQ(series["graph_mode"], "recorded");
  uint64_t eager = 0;
  for (const TraceEager& x : t.engine.eager) eager += x.memop ? 0 : x.count;
  ASSERT_FALSE(t.engine.flushes.empty());
  expect_series_matches(p, series, t.launches.size(), t.launches.size() - eager,
                        t.engine.flushes.size());
  EXPECT_NE(p.svg.find("from graph mode's records"), std::string::npos);
  // Flushes by an op are named with the op and the call site in the legend.
  const json* by_op = nullptr;
  for (const json& site : series["flush_sites"]) {
    if (site["cause"] == "op" && !by_op) by_op = &site;
  }
  ASSERT_NE(by_op, nullptr) << series["flush_sites"].dump();
  EXPECT_NE(p.svg.find("x op " + (*by_op)["op"].get<std::string>() + " at "), std::string::npos);
}

TEST(AnalyzerPlot, BucketWidthAndManyBoundaries) {
  // thread_program: 24 steps, each ending in a sync and a host read (48 boundaries).
  const std::string path = traced_run({THREAD_PROGRAM}, "plot.trace");
  Plotted p = plot(path, {"--json", "--bucket-ms", "0.25"});
  Plotted tiny = plot(path, {"--bucket-ms", "0.0001"});
  // The default output: beside the trace, .trace replaced by .svg.
  RunResult beside = run_program({ANALYZER, "plot", path}, {});
  const std::string default_svg = path.substr(0, path.size() - 6) + ".svg";
  const std::string beside_svg = slurp(default_svg);
  unlink(default_svg.c_str());
  unlink(path.c_str());
  ASSERT_EQ(p.run.exit_code, 0) << p.run.err;
  EXPECT_EQ(tag_problem(p.svg), "");
  const json series = json::parse(p.run.out);
  const double duration = series["duration_ms"];
  EXPECT_EQ(series["bucket_ms"], 0.25);
  EXPECT_EQ(series["buckets"].size(), static_cast<size_t>(std::ceil(duration / 0.25)));
  EXPECT_EQ(series["launches"], 480);
  // Ticks: at most one per pixel column and cause, at least one per cause.
  const size_t ticks = count(p.svg, "class=\"flush\"");
  EXPECT_LE(ticks, series["flushes"].get<size_t>());
  EXPECT_GE(ticks, series["flushes_by_cause"].size());
  // 100 ns buckets would be tens of thousands for this run: refused with the reason.
  EXPECT_EQ(tiny.run.exit_code, 1);
  EXPECT_NE(tiny.run.err.find("into more than 10000 buckets"), std::string::npos) << tiny.run.err;
  EXPECT_EQ(beside.exit_code, 0) << beside.err;
  EXPECT_NE(beside.out.find(default_svg), std::string::npos) << beside.out;
  EXPECT_EQ(tag_problem(beside_svg), "");
}

TEST(AnalyzerPlot, UsageErrorsAndHelp) {
  EXPECT_EQ(run_program({ANALYZER, "plot"}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "plot", "--bucket-ms", "0", kLoopTrace}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "plot", "--bucket-ms", "fast", kLoopTrace}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "plot", "--min-repeats", "0", kLoopTrace}, {}).exit_code, 1);
  EXPECT_EQ(run_program({ANALYZER, "plot", "--top", "3", kLoopTrace}, {}).exit_code, 1);
  RunResult missing = run_program({ANALYZER, "plot", "--out", "/tmp/x.svg", "/nonexistent"}, {});
  EXPECT_EQ(missing.exit_code, 2);
  RunResult unwritable =
      run_program({ANALYZER, "plot", "--out", "/nonexistent-dir/x.svg", kLoopTrace}, {});
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_EQ(unwritable.err, "pygraph-analyze: cannot write /nonexistent-dir/x.svg\n");
  RunResult help = run_program({ANALYZER, "plot", "--help"}, {});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("example:"), std::string::npos);
  RunResult usage = run_program({ANALYZER, "--help"}, {});
  EXPECT_NE(usage.out.find("pygraph-analyze plot"), std::string::npos);
  EXPECT_NE(usage.out.find("pygraph-analyze export --perfetto"), std::string::npos);
}

}  // namespace
}  // namespace pygraph::test
