// `pygraph-analyze plot`: a golden chart of a checked-in trace, an SVG whose tags balance and
// whose bars and boundary ticks match the trace, bucket totals that agree with `sequences`,
// and clear errors for bad options.
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
  EXPECT_NE(p.run.out.find("48 launches in 66 buckets of 0.01 ms, 16 (33.3 %) could be in graphs; "
                           "7 boundaries at 2 call site(s)"),
            std::string::npos)
      << p.run.out;
}

TEST(AnalyzerPlot, BarsAndTicksMatchTheTraceAndSequences) {
  Plotted p = plot(kLoopTrace, {"--json"});
  ASSERT_EQ(p.run.exit_code, 0) << p.run.err;
  EXPECT_EQ(tag_problem(p.svg), "");
  const json series = json::parse(p.run.out);
  RunResult sequences = run_program({ANALYZER, "sequences", "--json", kLoopTrace}, {});
  ASSERT_EQ(sequences.exit_code, 0);
  Trace t;
  ASSERT_EQ(read_trace(kLoopTrace, &t).status, ReadStatus::kOk);

  uint64_t graphable = 0, eager = 0, boundaries = 0, graphable_bars = 0, eager_bars = 0;
  for (const json& b : series["buckets"]) {
    graphable += b["graphable"].get<uint64_t>();
    eager += b["eager"].get<uint64_t>();
    boundaries += b["boundaries"].get<uint64_t>();
    graphable_bars += b["graphable"] > 0;
    eager_bars += b["eager"] > 0;
  }
  // Every launch in one bucket; those that could be in graphs are the what-if of `sequences`.
  EXPECT_EQ(graphable + eager, t.launches.size());
  EXPECT_EQ(graphable, json::parse(sequences.out)["graphable_launches"].get<uint64_t>());
  EXPECT_EQ(graphable, 16u);
  // The loop's only boundaries are its 7 syncs (6 steps, the odd last step).
  EXPECT_EQ(boundaries, 7u);
  ASSERT_EQ(series["boundary_sites"].size(), 2u);
  EXPECT_EQ(series["boundary_sites"][0]["count"], 6);
  EXPECT_EQ(series["boundary_sites"][0]["op"], "cuStreamSynchronize");
  // A bar per bucket and kind that has launches; in this trace the syncs are each at least a
  // pixel apart, so each has its own tick.
  EXPECT_EQ(count(p.svg, "class=\"graphable\""), graphable_bars);
  EXPECT_EQ(count(p.svg, "class=\"eager\""), eager_bars);
  EXPECT_GT(graphable_bars, 0u);
  EXPECT_EQ(count(p.svg, "class=\"boundary\""), 7u);
  EXPECT_NE(p.svg.find("6x cuStreamSynchronize at loop_program!main+0x249"), std::string::npos);
  EXPECT_NE(p.svg.find("launches per second"), std::string::npos);
  EXPECT_NE(p.svg.find("time since the trace started (ms)"), std::string::npos);
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
  EXPECT_EQ(series["boundaries"], 48);
  // Ticks: at most one per pixel column and call site, at least one per call site.
  const size_t ticks = count(p.svg, "class=\"boundary\"");
  EXPECT_LE(ticks, 48u);
  EXPECT_GE(ticks, series["boundary_sites"].size());
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
