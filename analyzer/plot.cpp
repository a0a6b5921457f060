#include "plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include "cli.h"
#include "json_text.h"
#include "launch_buckets.h"
#include "simulate.h"
#include "svg.h"

namespace pygraph::analyze {

const char* const kPlotUsage =
    "usage: pygraph-analyze plot [--out OUT.svg] [--bucket-ms N] [--min-repeats N] [--json] "
    "TRACE\n"
    "\n"
    "Draws the run over time as an SVG chart: launches per second in each time bucket, split\n"
    "into those graph mode ran in graphs and the eager ones, with its flushes (where graphs\n"
    "stop: a sync or other op, a change of stream, the exit...) as ticks above the chart,\n"
    "coloured by cause, and a legend naming their most frequent ops and call sites. A trace\n"
    "written in graph mode is drawn from graph mode's own records; a trace-mode trace from\n"
    "graph mode's engine run offline over it (what `simulate` counts).\n"
    "\n"
    "options:\n"
    "  --out OUT.svg     where to write the chart (default: TRACE without .trace, plus .svg)\n"
    "  --bucket-ms N     bucket width in milliseconds, e.g. 0.5 (default: about 100 buckets)\n"
    "  --min-repeats N   the engine's occurrences before a sequence is followed, for a\n"
    "                    trace-mode trace (default 2, graph mode's)\n"
    "  --json            print the bucket series as JSON instead of a sentence\n"
    "\n"
    "example:\n"
    "  pygraph-analyze plot --out run.svg run.trace   # then open run.svg in a browser\n";

namespace {

// Layout, in SVG pixels.
constexpr double kWidth = 960, kLeft = 80, kRight = 24;
constexpr double kRugTop = 64, kRugHeight = 14;
constexpr double kPlotTop = 84, kPlotHeight = 260;
constexpr double kRow = 18;
constexpr size_t kLegendSites = 5;  // flush sites named in the legend; the rest summed
constexpr size_t kMaxText = 110;    // characters of a frame in the legend

constexpr const char* kGraphColor = "#2a9d5c";
constexpr const char* kEagerColor = "#e76f51";
// By FlushCause: op, stream change, context change, exit, fork, stall; then out of range.
constexpr const char* kCauseColors[] = {"#1d4e89", "#8e44ad", "#c2185b", "#6d4c41",
                                        "#0097a7", "#b8860b", "#8a8a8a"};
static_assert(std::size(kCauseColors) == size_t(FlushCause::kCount) + 1);

const char* cause_colour(FlushCause c) {
  return kCauseColors[std::min<size_t>(size_t(c), size_t(FlushCause::kCount))];
}

// The first of 1, 2, 5 x 10^k that is >= v.
double round_step(double v) {
  const double decade = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * decade >= v * (1 - 1e-9)) return m * decade;
  }
  return 10 * decade;
}

// A tick label with as many decimals as the step needs.
std::string tick_label(double v, double step) {
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// 0, 950, 20k, 1.5M: rates with a unit prefix, one decimal at most.
std::string si(double v) {
  const char* suffix = v >= 999950 ? "M" : v >= 999.95 ? "k" : "";
  v /= *suffix == 'M' ? 1e6 : *suffix == 'k' ? 1e3 : 1;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  return s + suffix;
}

// Up to six significant digits, no trailing zeros: 0.05, 2.5, 1000.
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string duration_text(uint64_t ns) {
  char buf[32];
  if (ns >= 1000000000) {
    std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  }
  return buf;
}

std::string percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", whole ? 100.0 * part / whole : 0.0);
  return buf;
}

// Long Python paths keep their end, where file, line and function are.
std::string shorten(const std::string& s) {
  return s.size() <= kMaxText ? s : "..." + s.substr(s.size() - (kMaxText - 3));
}

std::string site_text(const FlushSite& s) {
  if (s.cause != FlushCause::kOp) return std::to_string(s.count) + "x " + flush_cause_name(s.cause);
  std::string text = std::to_string(s.count) + "x op " + op_info(s.op).name;
  if (!s.frames.empty()) text += " at " + shorten(s.frames[0]);
  return text;
}

std::string render(const Trace& t, const LaunchBuckets& b, const std::string& trace_name) {
  const size_t legend_sites = std::min(b.sites.size(), kLegendSites);
  const bool other_sites = b.sites.size() > kLegendSites;
  const double legend_top = kPlotTop + kPlotHeight + 56;
  const size_t legend_rows = 3 + std::max<size_t>(legend_sites + other_sites, 1);
  Svg svg(kWidth, legend_top + legend_rows * kRow + 8);
  svg.rect(0, 0, kWidth, legend_top + legend_rows * kRow + 8, "white", "");

  const uint64_t eager = b.eager;
  svg.text(kLeft, 26,
           "Launches over time: " + trace_name + " (pid " + std::to_string(t.header.pid) + "), " +
               duration_text(b.duration_ns) + (t.has_end ? "" : ", trace incomplete"),
           "font-size=\"16\" font-weight=\"bold\"");
  svg.text(kLeft, 46,
           std::to_string(b.launches) + " launches: " + std::to_string(b.in_graphs) + " (" +
               percent(b.in_graphs, b.launches) + ") in graphs, " + std::to_string(eager) +
               " eager; " + std::to_string(b.marks.size()) + " flushes; buckets of " +
               tick_label(b.bucket_ns / 1e6, b.bucket_ns / 1e6) + " ms; " +
               (b.simulated ? "graph mode simulated offline (trace-mode trace)"
                            : "from graph mode's records"),
           "font-size=\"12\" fill=\"#444\"");

  // Axes: time from the trace's start (ms, or s for long runs), launches per second.
  const double plot_w = kWidth - kLeft - kRight, bottom = kPlotTop + kPlotHeight;
  const uint64_t domain_ns = b.buckets.size() * b.bucket_ns;
  const bool in_s = domain_ns >= 10000000000ull;
  const double unit_ns = in_s ? 1e9 : 1e6;
  const double px_per_ns = plot_w / domain_ns;
  const double bucket_s = b.bucket_ns / 1e9;
  double max_rate = 0;
  for (const Bucket& k : b.buckets)
    max_rate = std::max(max_rate, (k.in_graphs + k.eager) / bucket_s);
  const double y_step = round_step(std::max(max_rate, 1.0) / 5);
  const double y_max = std::ceil(std::max(max_rate, 1.0) / y_step) * y_step;
  for (double v = 0; v <= y_max * (1 + 1e-9); v += y_step) {
    const double y = bottom - v / y_max * kPlotHeight;
    svg.line(kLeft, y, kLeft + plot_w, y, v == 0 ? "#333" : "#e4e4e4", "class=\"grid\"");
    svg.text(kLeft - 6, y + 4, si(v), "font-size=\"11\"", "end");
  }
  const double x_step = round_step(domain_ns / unit_ns / 8);
  for (double v = 0; v * unit_ns <= domain_ns * (1 + 1e-9); v += x_step) {
    const double x = kLeft + v * unit_ns * px_per_ns;
    svg.line(x, bottom, x, bottom + 5, "#333", "class=\"tick\"");
    svg.text(x, bottom + 18, tick_label(v, x_step), "font-size=\"11\"", "middle");
  }
  svg.line(kLeft, kPlotTop, kLeft, bottom, "#333", "");
  svg.text(kLeft + plot_w / 2, bottom + 36,
           std::string("time since the trace started (") + (in_s ? "s" : "ms") + ")",
           "font-size=\"12\"", "middle");
  const double mid = kPlotTop + kPlotHeight / 2;
  svg.text(22, mid, "launches per second",
           "font-size=\"12\" transform=\"rotate(-90 22 " + Svg::num(mid) + ")\"", "middle");

  // Bars: in graphs at the bottom, eager stacked on top; a gap when there is room.
  const double bar_w = b.bucket_ns * px_per_ns;
  const double gap = bar_w >= 4 ? 1 : 0;
  svg.open_group("class=\"bars\"");
  for (size_t i = 0; i < b.buckets.size(); ++i) {
    const Bucket& k = b.buckets[i];
    if (k.in_graphs + k.eager == 0) continue;
    const double x = kLeft + i * bar_w;
    const std::string unit = in_s ? " s" : " ms";
    const std::string tip = "from " + short_number(i * b.bucket_ns / unit_ns) + unit + ": " +
                            std::to_string(k.in_graphs + k.eager) + " launches (" +
                            si((k.in_graphs + k.eager) / bucket_s) + "/s), " +
                            std::to_string(k.in_graphs) + " in graphs, " + std::to_string(k.eager) +
                            " eager; " + std::to_string(k.flushes) + " flushes";
    const double hg = k.in_graphs / bucket_s / y_max * kPlotHeight;
    const double he = k.eager / bucket_s / y_max * kPlotHeight;
    if (k.in_graphs)
      svg.rect(x, bottom - hg, bar_w - gap, hg, kGraphColor, "class=\"in-graphs\"", tip);
    if (k.eager)
      svg.rect(x, bottom - hg - he, bar_w - gap, he, kEagerColor, "class=\"eager\"", tip);
  }
  svg.close_group();

  // Flushes as ticks in a strip above the chart, one per pixel column and cause (a trace with
  // a sync per step has millions; more in one column would draw nothing new).
  svg.text(kLeft - 6, kRugTop + 11, "flushes", "font-size=\"11\"", "end");
  svg.open_group("class=\"flushes\"");
  std::set<std::pair<int64_t, size_t>> drawn;
  for (const FlushMark& m : b.marks) {
    const double x = kLeft + m.t_ns * px_per_ns;
    if (!drawn.insert({static_cast<int64_t>(std::floor(x)), size_t(m.cause)}).second) continue;
    svg.line(x, kRugTop, x, kRugTop + kRugHeight, cause_colour(m.cause),
             "class=\"flush\" stroke-width=\"1.5\"");
  }
  svg.close_group();

  // Legend.
  double y = legend_top;
  auto swatch = [&](const char* colour, const std::string& text) {
    svg.rect(kLeft, y - 10, 12, 12, colour, "");
    svg.text(kLeft + 18, y, text, "font-size=\"12\"");
    y += kRow;
  };
  swatch(kGraphColor, std::string(b.simulated ? "would run" : "ran") + " in graph replays (" +
                          std::to_string(b.in_graphs) + " launches)");
  swatch(kEagerColor,
         "eager, when they went to the driver (" + std::to_string(eager) + " launches)");
  svg.text(kLeft, y,
           "Flushes (ticks above the chart: graph mode submitted a chunk early), by cause:",
           "font-size=\"12\" font-weight=\"bold\"");
  y += kRow;
  auto site_row = [&](const char* colour, const std::string& text) {
    svg.line(kLeft + 6, y - 11, kLeft + 6, y + 2, colour, "stroke-width=\"3\"");
    svg.text(kLeft + 18, y, text, "font-size=\"12\" class=\"site\"");
    y += kRow;
  };
  for (size_t i = 0; i < legend_sites; ++i)
    site_row(cause_colour(b.sites[i].cause), site_text(b.sites[i]));
  if (other_sites) {
    uint64_t n = 0;
    for (size_t i = kLegendSites; i < b.sites.size(); ++i) n += b.sites[i].count;
    site_row(kCauseColors[size_t(FlushCause::kCount)],
             std::to_string(n) + "x at " + std::to_string(b.sites.size() - kLegendSites) +
                 " other ops, call sites or causes");
  }
  if (b.sites.empty())
    svg.text(kLeft + 18, y, "none: graph mode never submitted early", "font-size=\"12\"");
  return svg.finish();
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string default_out(const std::string& trace_path) {
  const std::string ext = ".trace";
  std::string stem = trace_path;
  if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0) {
    stem.resize(stem.size() - ext.size());
  }
  return stem + ".svg";
}

}  // namespace

int run_plot(const std::vector<std::string>& args) {
  std::string out_path, path;
  uint64_t bucket_ns = 0, min_repeats = 2;
  bool as_json = false;
  const std::vector<Option> accepted = {flag_option("--json", &as_json),
                                        file_option("--out", &out_path),
                                        {"--bucket-ms", true,
                                         [&](const std::string& v) {
                                           char* end = nullptr;
                                           const double ms = std::strtod(v.c_str(), &end);
                                           if (*end || !(ms > 0 && ms <= 1e9)) return false;
                                           bucket_ns =
                                               static_cast<uint64_t>(std::llround(ms * 1e6));
                                           return bucket_ns > 0;
                                         },
                                         "--bucket-ms needs a number of milliseconds > 0"},
                                        count_option("--min-repeats", 1, 1000000, &min_repeats)};
  if (int status = parse_options(args, accepted, kPlotUsage, &path); status >= 0) return status;
  if (out_path.empty()) out_path = default_out(path);

  Trace trace;
  ReadResult read;
  if (int status = load_trace(path, &trace, &read)) return status;
  EngineOptions engine = default_engine_options();  // as `simulate` runs it without a config
  engine.min_repeats = static_cast<uint32_t>(min_repeats);
  LaunchBuckets b;
  if (!bucket_launches(trace, engine, bucket_ns, &b)) {
    return usage_error("--bucket-ms cuts this trace's " + duration_text(b.duration_ns) +
                           " into more than " + std::to_string(kMaxBuckets) +
                           " buckets: choose a wider one",
                       kPlotUsage);
  }
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out << render(trace, b, base_name(path));
  out.close();
  if (!out) {
    std::cerr << "pygraph-analyze: cannot write " << out_path << "\n";
    return 2;
  }
  if (as_json) {
    nlohmann::json j = buckets_json(trace, b);
    j["out"] = out_path;
    std::cout << json_text(j, 2) << "\n";
  } else {
    std::cout << "Wrote " << out_path << ": " << b.launches << " launches in " << b.buckets.size()
              << " buckets of " << b.bucket_ns / 1e6 << " ms, " << b.in_graphs << " ("
              << percent(b.in_graphs, b.launches) << ") in graphs ("
              << (b.simulated ? "graph mode simulated offline" : "graph mode's records") << "); "
              << b.marks.size() << " flushes at " << b.sites.size()
              << " op(s), call site(s) or cause(s).\n";
  }
  return finish(path, read);
}

}  // namespace pygraph::analyze
