// pygraph-analyze: reads traces written by libpygraph.so (PYGRAPH_TRACE) and explains them.
//
// Exit status (cli.h): 0 done; 1 usage error; 2 the trace could not be read or the output not
// written; 3 the trace was read only in part (the process died or the file was cut), the output
// covers what was read.
#include <iostream>
#include <string>
#include <vector>

#include "breaks.h"
#include "cli.h"
#include "export.h"
#include "json_text.h"
#include "plot.h"
#include "sequences.h"
#include "simulate.h"
#include "summary.h"
#include "trim.h"

namespace {

using namespace pygraph::analyze;

constexpr const char* kUsage =
    "usage: pygraph-analyze summary [--json] [--top N] TRACE\n"
    "       pygraph-analyze sequences [--json] [--top N] [--min-repeats N] TRACE\n"
    "       pygraph-analyze export --perfetto OUT.json [--limit N] [--json] TRACE\n"
    "       pygraph-analyze plot [--out OUT.svg] [--bucket-ms N] [--min-repeats N] [--json] "
    "TRACE\n"
    "       pygraph-analyze simulate [--config FILE | --compare A.json B.json] [--json] TRACE\n"
    "       pygraph-analyze breaks [--top N] [--launch-us X] [--json] TRACE\n"
    "       pygraph-analyze trim --out OUT.trace [--skip N] [--launches N] [--json] TRACE\n"
    "\n"
    "commands:\n"
    "  summary     launches per interception door, top kernels, syncs and other boundary ops\n"
    "              ranked by count with their call sites\n"
    "  sequences   launch sequences (with the memsets and copies graph mode holds as nodes)\n"
    "              that repeat, what ends them (op and call site), and how many launches\n"
    "              graphs could carry\n"
    "  export      the run as a timeline for Perfetto or chrome://tracing: driver calls per\n"
    "              thread, launches per stream, boundaries with their call sites, and graph\n"
    "              mode's replays, flushes and eager launches (recorded, or simulated offline)\n"
    "  plot        an SVG chart of launches per second over time, split into those graph mode\n"
    "              ran (or would run) in graphs and eager ones, with its flushes marked by cause\n"
    "  simulate    graph mode's own engine run over the trace offline: what it would put in\n"
    "              graphs, with how many launches and patched nodes per replay, and why not\n"
    "  breaks      what keeps launches out of graphs, ranked by the launch time it costs, with\n"
    "              call sites and kernels\n"
    "  trim        a window of the trace's launches written as a smaller trace that every\n"
    "              command reads like the original (for reports and golden tests)\n"
    "options:\n"
    "  --json            machine-readable output\n"
    "  --top N           rows per ranking (default 20)\n"
    "  --min-repeats N   occurrences before a sequence counts as found (default 2)\n"
    "`pygraph-analyze COMMAND --help` says more about each command, with an example.\n";

// summary and sequences: one trace in, one report out.
int run_report(const std::string& command, const std::vector<std::string>& args) {
  bool as_json = false;
  uint64_t top = 20, min_repeats = 2;
  std::vector<Option> accepted = {flag_option("--json", &as_json),
                                  count_option("--top", 1, 100000, &top)};
  if (command == "sequences") {
    accepted.push_back(count_option("--min-repeats", 1, 1000000, &min_repeats));
  }
  std::string path;
  const char* usage = command == "summary" ? kSummaryUsage : kSequencesUsage;
  if (int status = parse_options(args, accepted, usage, &path); status >= 0) return status;

  pygraph::Trace trace;
  pygraph::ReadResult read;
  if (int status = load_trace(path, &trace, &read)) return status;
  pygraph::DetectorOptions detector;
  detector.min_repeats = static_cast<uint32_t>(min_repeats);
  nlohmann::json s = command == "summary" ? summarize(trace, SummaryOptions{static_cast<int>(top)})
                                          : find_sequences(trace, detector, static_cast<int>(top));
  if (as_json) {
    std::cout << pygraph::json_text(s, 2) << "\n";
  } else if (command == "summary") {
    std::cout << summary_text(s);
  } else {
    std::cout << sequences_text(s);
  }
  return finish(path, read);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error("no command given", kUsage);
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "summary" || command == "sequences") return run_report(command, args);
  if (command == "export") return run_export(args);
  if (command == "plot") return run_plot(args);
  if (command == "simulate") return run_simulate(args);
  if (command == "breaks") return run_breaks(args);
  if (command == "trim") return run_trim(args);
  return usage_error("unknown command '" + command + "'", kUsage);
}
