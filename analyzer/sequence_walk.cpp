#include "sequence_walk.h"

#include <unordered_set>

#include "driver/memop_call.h"
#include "graph/token.h"

namespace pygraph::analyze {
namespace {

uint64_t token_of(const TraceLaunch& l) {
  uint64_t attrs = 0;
  for (const auto& a : l.attrs) attrs = attr_hash_add(attrs, a.id, a.value);
  return launch_token({l.function_id,
                       {l.block[0], l.block[1], l.block[2]},
                       l.stream,
                       static_cast<uint16_t>(l.op),
                       attrs});
}

}  // namespace

// Graph mode refuses empty memops, which end the sequence there. The trace does not hold a
// copy's source memory kind, so copies from pinned and pageable memory share a token here.
bool op_is_token(const TraceOp& o) {
  return engine_memop(o.op) && o.bytes != 0;
}

bool op_ends_sequence(const TraceOp& o) {
  return !op_is_token(o) && (op_is_boundary(o.op) || engine_memop(o.op));
}

uint64_t boundary_tag(const TraceOp& o) {
  return (uint64_t(static_cast<uint16_t>(o.op)) << 32) | o.callsite_id;
}

SequenceWalk walk_sequences(const Trace& t, const DetectorOptions& options) {
  SequenceWalk w(options);
  SequenceDetector& d = w.detector;
  w.in_graph.assign(t.events.size(), 0);
  size_t segment_start = 0;  // first event since the last boundary
  // Each event is counted once, whether a segment or a loop (or both: a loop's last periods
  // are also the segment that ends with them) carries it.
  auto mark = [&](size_t i) {
    if (w.in_graph[i]) return;
    w.in_graph[i] = 1;
    ++(t.events[i].is_launch ? w.graphable_launches : w.graphable_memops);
  };
  // A segment is known to be an occurrence only at its end: mark its tokens then.
  auto end_segment = [&](uint64_t tag, size_t end) {
    const Sequence* s = d.boundary(tag);
    if (s && !s->periodic && s->occurrences > d.options().min_repeats) {
      for (size_t i = segment_start; i < end; ++i) {
        const TraceEvent& e = t.events[i];
        if (e.is_launch || op_is_token(t.ops[e.index])) mark(i);
      }
    }
    segment_start = end + 1;
  };
  // The events of the latest tokens (a ring as long as the longest period), so that a loop's
  // occurrence, known when its last token is pushed, can be marked.
  std::vector<size_t> token_events(size_t(options.max_length) + 1);
  uint64_t pushed = 0;
  // Loops found at an earlier launch. Graph mode follows a loop from the launch after the one
  // that made it found: a loop of one kernel is found with many occurrences at once (a run of
  // min_run), and none of them is recorded.
  std::unordered_set<uint32_t> loops_found;
  auto push = [&](uint64_t tok, size_t i) {
    token_events[pushed++ % token_events.size()] = i;
    const Sequence* s = d.push(tok);
    if (!s || s->occurrences < d.options().min_repeats) return;  // push() returns loops only
    if (loops_found.insert(s->id).second) return;
    for (size_t k = 1; k <= s->tokens.size() && k <= pushed; ++k) {
      mark(token_events[(pushed - k) % token_events.size()]);
    }
  };
  for (size_t i = 0; i < t.events.size(); ++i) {
    const TraceEvent& e = t.events[i];
    if (e.is_launch) {
      const TraceLaunch& l = t.launches[e.index];
      const uint64_t tok = token_of(l);
      w.tokens.emplace(tok, TokenInfo{false, l.function_id});
      push(tok, i);
      ++w.launches;
      continue;
    }
    const TraceOp& o = t.ops[e.index];
    if (op_is_token(o)) {
      const uint64_t tok =
          memop_token(static_cast<uint16_t>(o.op), memset_element_size(o.op), 0, o.stream);
      w.tokens.emplace(tok, TokenInfo{true, static_cast<uint32_t>(o.op)});
      push(tok, i);
      ++w.memops;
    } else if (op_ends_sequence(o)) {
      end_segment(boundary_tag(o), i);
    }
  }
  end_segment(0, t.events.size());  // the end of the trace ends the last segment
  return w;
}

}  // namespace pygraph::analyze
