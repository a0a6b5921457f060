// The one walk of a trace through the sequence detector, shared by `sequences` (what repeats,
// what-if totals) and `plot` (which launches over time could be in graphs): launches and the
// memsets and copies graph mode holds as nodes are tokens, as in graph mode; the ops that end
// what a graph can hold are boundaries, tagged with op and call site.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/sequence_detector.h"
#include "trace/trace_reader.h"

namespace pygraph::analyze {

// What a token stands for: a kernel (function id) or a memset/copy (its op).
struct TokenInfo {
  bool memop;
  uint32_t id;  // function id, or Op
};

// Whether an op is a token (a memset or copy graph mode holds as a node) or a boundary.
bool op_is_token(const TraceOp& op);
bool op_ends_sequence(const TraceOp& op);

// A boundary's tag in the detector: op and call site; 0 is the end of the trace.
uint64_t boundary_tag(const TraceOp& op);

struct SequenceWalk {
  explicit SequenceWalk(const DetectorOptions& options) : detector(options) {}

  SequenceDetector detector;
  std::unordered_map<uint64_t, TokenInfo> tokens;
  uint64_t launches = 0, memops = 0;
  // Per entry of Trace::events: 1 for a launch or memop in an occurrence, from the
  // (min_repeats + 1)-th on, of a repeated segment or loop, which is what graph mode records
  // and replays (an event in both counts once).
  std::vector<uint8_t> in_graph;
  uint64_t graphable_launches = 0, graphable_memops = 0;
};

SequenceWalk walk_sequences(const Trace& trace, const DetectorOptions& options);

}  // namespace pygraph::analyze
