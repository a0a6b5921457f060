// pygraph-analyze: reads traces written by libpygraph.so (PYGRAPH_TRACE) and explains them.
//
// Exit status: 0 done; 1 usage error; 2 the trace could not be read; 3 the trace was read only
// in part (the process died or the file was cut), the output covers what was read.
#include <cstring>
#include <iostream>
#include <string>

#include "sequences.h"
#include "summary.h"
#include "trace/trace_reader.h"

namespace {

constexpr const char* kUsage =
    "usage: pygraph-analyze summary [--json] [--top N] TRACE\n"
    "       pygraph-analyze sequences [--json] [--top N] [--min-repeats N] TRACE\n"
    "\n"
    "commands:\n"
    "  summary     launches per interception door, top kernels, syncs and other boundary ops\n"
    "              ranked by count with their call sites\n"
    "  sequences   launch sequences (with the memsets and copies graph mode holds as nodes)\n"
    "              that repeat, what ends them (op and call site), and how many launches\n"
    "              graphs could carry\n"
    "options:\n"
    "  --json            machine-readable output\n"
    "  --top N           rows per ranking (default 20)\n"
    "  --min-repeats N   occurrences before a sequence counts as found (default 2)\n";

int usage_error(const std::string& message) {
  std::cerr << "pygraph-analyze: " << message << "\n" << kUsage;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error("no command given");
  std::string command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command != "summary" && command != "sequences") {
    return usage_error("unknown command '" + command + "'");
  }

  bool as_json = false;
  pygraph::analyze::SummaryOptions options;
  pygraph::DetectorOptions detector;
  std::string path;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json") {
      as_json = true;
    } else if (a == "--top") {
      if (i + 1 >= argc) return usage_error("--top needs a number");
      char* end = nullptr;
      long n = std::strtol(argv[++i], &end, 10);
      if (!end || *end || n < 1 || n > 100000) return usage_error("--top needs a number >= 1");
      options.top = static_cast<int>(n);
    } else if (a == "--min-repeats" && command == "sequences") {
      if (i + 1 >= argc) return usage_error("--min-repeats needs a number");
      char* end = nullptr;
      long n = std::strtol(argv[++i], &end, 10);
      if (!end || *end || n < 1 || n > 1000000) {
        return usage_error("--min-repeats needs a number >= 1");
      }
      detector.min_repeats = static_cast<uint32_t>(n);
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option '" + a + "'");
    } else if (path.empty()) {
      path = a;
    } else {
      return usage_error("more than one trace given");
    }
  }
  if (path.empty()) return usage_error("no trace file given");

  pygraph::Trace trace;
  pygraph::ReadResult r = pygraph::read_trace(path, &trace);
  if (r.status == pygraph::ReadStatus::kError) {
    std::cerr << "pygraph-analyze: " << path << ": " << r.message << "\n";
    return 2;
  }
  nlohmann::json s = command == "summary"
                         ? pygraph::analyze::summarize(trace, options)
                         : pygraph::analyze::find_sequences(trace, detector, options.top);
  if (as_json) {
    std::cout << s.dump(2) << "\n";
  } else if (command == "summary") {
    std::cout << pygraph::analyze::summary_text(s);
  } else {
    std::cout << pygraph::analyze::sequences_text(s);
  }
  if (r.status == pygraph::ReadStatus::kIncomplete) {
    std::cerr << "pygraph-analyze: " << path << ": " << r.message << "\n";
    return 3;
  }
  return 0;
}
