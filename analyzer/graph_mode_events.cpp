#include "graph_mode_events.h"

#include <algorithm>

#include "graph/engine_observer.h"
#include "simulate.h"

namespace pygraph::analyze {
namespace {

uint64_t since_start(const Trace& t, uint64_t mono_ns) {
  return mono_ns > t.header.start_mono_ns ? mono_ns - t.header.start_mono_ns : 0;
}

uint64_t seq_of(const Trace& t, const TraceEvent& e) {
  return e.is_launch ? t.launches[e.index].seq : t.ops[e.index].seq;
}

// Graph mode's records placed at the call it was handling: the first call with a higher seq.
class Placer {
 public:
  explicit Placer(const Trace& t) : t_(t) {}
  size_t at(uint64_t seq) const {
    auto it = std::upper_bound(t_.events.begin(), t_.events.end(), seq,
                               [&](uint64_t s, const TraceEvent& e) { return s < seq_of(t_, e); });
    return static_cast<size_t>(it - t_.events.begin());
  }

 private:
  const Trace& t_;
};

std::vector<GraphEvent> recorded(const Trace& t) {
  const Placer place(t);
  std::vector<GraphEvent> out;
  const TraceEngineEvents& r = t.engine;
  // Each record of `records` as an event of `kind`, its fields filled in by `fill`.
  auto add = [&](GraphEventKind kind, const auto& records, auto fill) {
    for (const auto& x : records) {
      GraphEvent e{kind, place.at(x.seq)};
      fill(x, e);
      out.push_back(e);
    }
  };
  add(GraphEventKind::kFollowed, r.followed, [](const TraceFollowed& f, GraphEvent& e) {
    e.sequence = f.sequence;
    e.length = f.length;
    e.periodic = f.periodic;
  });
  add(GraphEventKind::kChunk, r.chunks, [](const TraceChunk& c, GraphEvent& e) {
    e.sequence = c.sequence;
    e.start = c.start;
    e.end = c.end;
    e.nodes = c.nodes;
  });
  add(GraphEventKind::kReplay, r.replays, [](const TraceReplay& x, GraphEvent& e) {
    e.sequence = x.sequence;
    e.nodes = x.nodes;
    e.patched = x.patched;
  });
  add(GraphEventKind::kFlush, r.flushes, [](const TraceFlush& f, GraphEvent& e) {
    e.cause = static_cast<FlushCause>(std::min<uint8_t>(f.cause, uint8_t(FlushCause::kCount)));
    e.op = f.op;
    e.pending = f.pending;
    e.callsite_id = f.callsite_id;
  });
  add(GraphEventKind::kEager, r.eager, [](const TraceEager& x, GraphEvent& e) {
    e.reason = static_cast<EagerReason>(std::min<uint8_t>(x.reason, uint8_t(EagerReason::kCount)));
    e.memop = x.memop;
    e.count = x.count;
  });
  add(GraphEventKind::kDecision, r.decisions, [](const TraceDecision& d, GraphEvent& e) {
    e.sequence = d.sequence;
    e.decision = d;
  });
  // Each kind is in seq order already; a stable sort by place keeps that within a call.
  std::stable_sort(out.begin(), out.end(),
                   [](const GraphEvent& a, const GraphEvent& b) { return a.at < b.at; });
  return out;
}

}  // namespace

TraceDecision decision_record(uint32_t sequence, const std::string& signature,
                              const SequencePolicy& policy, size_t length) {
  TraceDecision d;
  d.sequence = sequence;
  d.signature = signature;
  d.launches = static_cast<uint32_t>(length);
  d.verdict = policy.phase() == SequencePolicy::Phase::kGraph ? trace::DecisionVerdict::kGraph
              : policy.phase() == SequencePolicy::Phase::kEager
                  ? trace::DecisionVerdict::kEager
                  : trace::DecisionVerdict::kMeasuring;
  d.source = policy.source() == "cached"   ? trace::DecisionSource::kCached
             : policy.source() == "config" ? trace::DecisionSource::kConfig
                                           : trace::DecisionSource::kMeasured;
  d.eager_ns = policy.eager_ns();
  d.graph_ns = policy.graph_ns();
  return d;
}

namespace {

// The engine run offline tells this what it does; the replay of the trace says where it is.
class Collector : public EngineObserver {
 public:
  explicit Collector(const Trace& t) : t_(t) {}
  void before(const TraceEvent& e) { at_ = e.index == ~0u ? t_.events.size() : next_++; }

  void eager(bool memop, EagerReason reason) override {
    // One call per launch: consecutive ones of a call and reason are counted together.
    if (!out_.empty()) {
      GraphEvent& last = out_.back();
      if (last.kind == GraphEventKind::kEager && last.at == at_ && last.reason == reason &&
          last.memop == memop) {
        ++last.count;
        return;
      }
    }
    GraphEvent e = event(GraphEventKind::kEager);
    e.reason = reason;
    e.memop = memop;
    e.count = 1;
    out_.push_back(e);
  }
  void flushed(FlushCause cause, Op op, size_t pending) override {
    GraphEvent e = event(GraphEventKind::kFlush);
    e.cause = cause;
    e.op = cause == FlushCause::kOp ? op : Op::kCount;
    e.pending = static_cast<uint32_t>(pending);
    // The op being handled is the one that flushed: its call site, as graph mode records it.
    if (cause == FlushCause::kOp && at_ < t_.events.size() && !t_.events[at_].is_launch) {
      e.callsite_id = t_.ops[t_.events[at_].index].callsite_id;
    }
    out_.push_back(e);
  }
  void followed(uint32_t sequence, bool periodic, size_t length) override {
    GraphEvent e = event(GraphEventKind::kFollowed);
    e.sequence = sequence;
    e.periodic = periodic;
    e.length = static_cast<uint32_t>(length);
    out_.push_back(e);
  }
  void chunk_built(uint32_t sequence, uint32_t start, uint32_t end, size_t nodes) override {
    GraphEvent e = event(GraphEventKind::kChunk);
    e.sequence = sequence;
    e.start = start;
    e.end = end;
    e.nodes = static_cast<uint32_t>(nodes);
    out_.push_back(e);
  }
  void replayed(uint32_t sequence, size_t nodes, uint32_t patched) override {
    GraphEvent e = event(GraphEventKind::kReplay);
    e.sequence = sequence;
    e.nodes = static_cast<uint32_t>(nodes);
    e.patched = patched;
    out_.push_back(e);
  }

  void decided(uint32_t sequence, const std::string& signature, const SequencePolicy& policy,
               size_t length) override {
    GraphEvent e = event(GraphEventKind::kDecision);
    e.sequence = sequence;
    e.decision = decision_record(sequence, signature, policy, length);
    out_.push_back(e);
  }

  std::vector<GraphEvent> take() { return std::move(out_); }

 private:
  GraphEvent event(GraphEventKind kind) const { return GraphEvent{kind, at_}; }

  const Trace& t_;
  size_t next_ = 0, at_ = 0;
  std::vector<GraphEvent> out_;
};

}  // namespace

GraphEvents graph_mode_events(const Trace& trace, const EngineOptions& options) {
  GraphEvents out;
  if (!trace.engine.empty()) {
    out.events = recorded(trace);
    return out;
  }
  out.simulated = true;
  Collector collect(trace);
  replay_trace(trace, options, &collect, [&](const TraceEvent& e) { collect.before(e); });
  out.events = collect.take();
  return out;
}

bool acts_on_stream(Op op) {
  switch (op_info(op).cls) {
    case OpClass::kLaunch:
    case OpClass::kHostFunc:
    case OpClass::kGraphLaunch:
    case OpClass::kEvent:
    case OpClass::kStreamOrder:
    case OpClass::kCapture:
      return true;
    default:
      break;
  }
  const std::string_view name = op_info(op).name;
  return op == Op::StreamSynchronize || op == Op::StreamQuery || op == Op::StreamDestroy ||
         name.ends_with("Async");
}

CallPlace call_place(const Trace& t, size_t at) {
  CallPlace p;
  if (at >= t.events.size()) {
    p.t_ns = trace_duration_ns(t);
    return p;
  }
  const TraceEvent& e = t.events[at];
  if (e.is_launch) {
    const TraceLaunch& l = t.launches[e.index];
    p = {since_start(t, l.ts_ns), l.dur_ns, l.tid, l.stream, true, true};
  } else {
    const TraceOp& o = t.ops[e.index];
    p = {since_start(t, o.ts_ns), o.dur_ns, o.tid, o.stream, false, acts_on_stream(o.op)};
  }
  return p;
}

uint64_t trace_duration_ns(const Trace& t) {
  uint64_t end = t.has_end ? t.end.dur_ns : 0;
  for (const auto& l : t.launches) end = std::max(end, since_start(t, l.ts_ns + l.dur_ns));
  for (const auto& o : t.ops) end = std::max(end, since_start(t, o.ts_ns + o.dur_ns));
  return std::max<uint64_t>(end, 1);
}

}  // namespace pygraph::analyze
