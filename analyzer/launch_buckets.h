// The run over time, for `plot`: per time bucket, the launches graph mode ran in graphs and the
// eager ones, and when it flushed (its breaks), by cause and, for ops, by call site. What graph
// mode did comes from graph_mode_events.h: its own records in a graph-mode trace, else its
// engine run offline over the trace (what `simulate` counts).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/engine_stats.h"
#include "graph/graph_engine.h"
#include "trace/trace_reader.h"

namespace pygraph::analyze {

struct Bucket {
  uint64_t in_graphs = 0, eager = 0, flushes = 0;
};

// Where flushes came from: a cause, and for cause "op" the op and its call site.
struct FlushSite {
  FlushCause cause;
  Op op;                            // Op::kCount unless cause is kOp
  std::vector<std::string> frames;  // innermost first; empty when none was recorded
  uint64_t count = 0;
};

struct FlushMark {
  uint64_t t_ns;  // from the trace's start
  FlushCause cause;
  uint32_t site;  // index into LaunchBuckets::sites
};

struct LaunchBuckets {
  bool simulated = false;    // the engine run offline (a trace-mode trace)
  uint64_t duration_ns = 0;  // the trace's, or up to its last call when it has no end record
  uint64_t bucket_ns = 0;
  uint64_t launches = 0, in_graphs = 0, eager = 0;
  std::vector<Bucket> buckets;   // the first starts at the trace's start
  std::vector<FlushSite> sites;  // most frequent first
  std::vector<FlushMark> marks;  // in call order
};

// More buckets than this make an unreadable chart (and a huge file).
inline constexpr uint64_t kMaxBuckets = 10000;

// `bucket_ns` 0: a round width that cuts the run into about 100 buckets. `options`: the
// engine's, for a trace-mode trace. Returns false (and leaves *out incomplete) when the width
// gives more than kMaxBuckets.
bool bucket_launches(const Trace& trace, const EngineOptions& options, uint64_t bucket_ns,
                     LaunchBuckets* out);

// The series as `plot --json` prints it.
nlohmann::json buckets_json(const Trace& trace, const LaunchBuckets& b);

}  // namespace pygraph::analyze
