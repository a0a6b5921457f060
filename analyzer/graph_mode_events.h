// What graph mode did with a trace's calls, placed among them, for `export` and `plot`: taken
// from the trace's own records when graph mode wrote it (format 2, records 7 to 12), else from
// graph mode's engine run offline over it, as `simulate` runs it (simulate.h). Either way the
// same events, so that a timeline or chart of a trace-mode run shows what graph mode would do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/engine_stats.h"
#include "graph/graph_engine.h"
#include "trace/trace_reader.h"

namespace pygraph::analyze {

enum class GraphEventKind : uint8_t { kFollowed, kChunk, kReplay, kFlush, kEager, kDecision };

struct GraphEvent {
  GraphEventKind kind;
  // Index into Trace::events of the call graph mode was handling (its record comes after the
  // event's, docs/trace-format.md); events.size(): after the last call (the exit's submission).
  size_t at = 0;
  uint32_t sequence = 0;                     // followed, chunk, replay
  uint32_t length = 0;                       // followed: one occurrence or period
  bool periodic = false;                     // followed
  uint32_t start = 0, end = 0;               // chunk: positions in the sequence
  uint32_t nodes = 0, patched = 0;           // chunk, replay
  FlushCause cause = FlushCause::kCount;     // flush
  Op op = Op::kCount;                        // flush, cause "op"
  uint32_t pending = 0, callsite_id = 0;     // flush
  EagerReason reason = EagerReason::kCount;  // eager
  bool memop = false;                        // eager
  uint32_t count = 0;                        // eager
  TraceDecision decision = {};               // decision: the sequence's verdict as it changed
};

// A sequence's decision as the engine's observer hears it, in the trace's terms (record 12).
TraceDecision decision_record(uint32_t sequence, const std::string& signature,
                              const SequencePolicy& policy, size_t length);

struct GraphEvents {
  bool simulated = false;          // true: the engine run offline (a trace-mode trace)
  std::vector<GraphEvent> events;  // in order of `at`
};

// `options`: the engine's, for the offline run only.
GraphEvents graph_mode_events(const Trace& trace, const EngineOptions& options);

// Where a call (or the end, `at` == events.size()) lies: start and duration in ns since the
// trace's start, the thread, and the stream it acted on (0 when it names none).
struct CallPlace {
  uint64_t t_ns = 0, dur_ns = 0;
  uint16_t tid = 0;
  uint64_t stream = 0;
  bool is_launch = false, has_stream = false;
};
CallPlace call_place(const Trace& trace, size_t at);

// OpRecord::stream is 0 both for the default stream and for an op without a stream argument;
// true for the ops that have one.
bool acts_on_stream(Op op);

// The trace's length in ns: its end record's, or up to its last call's end when longer or absent.
uint64_t trace_duration_ns(const Trace& trace);

}  // namespace pygraph::analyze
