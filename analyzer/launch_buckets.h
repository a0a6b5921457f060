// The run over time, for `plot`: per time bucket, the launches that repeated sequences could
// carry in graphs (sequence_walk.h, the what-if of `sequences`) and the eager ones, and when
// the boundaries (syncs and other ops that end what a graph holds) came, by call site.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/sequence_detector.h"
#include "trace/trace_reader.h"

namespace pygraph::analyze {

struct Bucket {
  uint64_t graphable = 0, eager = 0, boundaries = 0;
};

struct BoundarySite {
  Op op;
  std::vector<std::string> frames;  // innermost first; empty when none was recorded
  uint64_t count = 0;
};

struct BoundaryMark {
  uint64_t t_ns;  // from the trace's start
  uint32_t site;  // index into LaunchBuckets::sites
};

struct LaunchBuckets {
  uint64_t duration_ns = 0;  // the trace's, or up to its last call when it has no end record
  uint64_t bucket_ns = 0;
  uint32_t min_repeats = 0;
  uint64_t launches = 0, graphable = 0;
  std::vector<Bucket> buckets;      // the first starts at the trace's start
  std::vector<BoundarySite> sites;  // most frequent first
  std::vector<BoundaryMark> marks;  // in call order
};

// More buckets than this make an unreadable chart (and a huge file).
inline constexpr uint64_t kMaxBuckets = 10000;

// `bucket_ns` 0: a round width that cuts the run into about 100 buckets. Returns false (and
// leaves *out incomplete) when the width gives more than kMaxBuckets.
bool bucket_launches(const Trace& trace, const DetectorOptions& options, uint64_t bucket_ns,
                     LaunchBuckets* out);

// The series as `plot --json` prints it.
nlohmann::json buckets_json(const Trace& trace, const LaunchBuckets& b);

}  // namespace pygraph::analyze
