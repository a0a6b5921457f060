#include "recording/trace_observer.h"

#include <algorithm>
#include <cstring>

#include "trace/trace_writer.h"

namespace pygraph {
namespace {

uint32_t u32(size_t n) {
  return static_cast<uint32_t>(std::min<size_t>(n, 0xffffffffu));
}

// Writes one fixed-size record; its seq is taken last, so that it sorts after anything the
// caller wrote before (a call site announced for a flush).
template <class R>
void write(trace::RecordType type, R r) {
  TraceWriter& w = trace_writer();
  uint8_t* p = w.begin(type, sizeof(trace::RecordHeader) + sizeof(R));
  if (!p) return;
  r.seq = w.next_seq();
  std::memcpy(p, &r, sizeof(r));
  w.commit();
}

}  // namespace

void TraceObserver::eager(bool memop, EagerReason reason) {
  trace::EagerRecord r{};
  r.reason = static_cast<uint8_t>(reason);
  r.memop = memop ? 1 : 0;
  r.count = 1;
  write(trace::RecordType::kEager, r);
}

void TraceObserver::flushed(FlushCause cause, Op op, size_t pending) {
  trace::FlushRecord r{};
  r.cause = static_cast<uint8_t>(cause);
  r.op = static_cast<uint16_t>(op);
  r.pending = u32(pending);
  // The op's call site, captured here because the hook records it only after the call; the
  // shim's own frames are left out, so it is the same site (and id) as the op record's.
  if (cause == FlushCause::kOp && op < Op::kCount) r.callsite_id = recorder_->callsite();
  write(trace::RecordType::kFlush, r);
}

void TraceObserver::followed(uint32_t sequence, bool periodic, size_t length) {
  trace::FollowedRecord r{};
  r.sequence = sequence;
  r.length = u32(length);
  r.periodic = periodic ? 1 : 0;
  write(trace::RecordType::kFollowed, r);
}

void TraceObserver::chunk_built(uint32_t sequence, uint32_t start, uint32_t end, size_t nodes) {
  trace::ChunkRecord r{};
  r.sequence = sequence;
  r.start = start;
  r.end = end;
  r.nodes = u32(nodes);
  write(trace::RecordType::kChunk, r);
}

void TraceObserver::replayed(uint32_t sequence, size_t nodes, uint32_t patched) {
  trace::ReplayRecord r{};
  r.sequence = sequence;
  r.nodes = u32(nodes);
  r.patched = patched;
  write(trace::RecordType::kReplay, r);
}

void TraceObserver::decided(uint32_t sequence, const std::string& signature,
                            const SequencePolicy& policy, size_t length) {
  trace::DecisionRecord r{};
  r.sequence = sequence;
  switch (policy.phase()) {
    case SequencePolicy::Phase::kMeasuring:
      r.verdict = static_cast<uint8_t>(trace::DecisionVerdict::kMeasuring);
      break;
    case SequencePolicy::Phase::kGraph:
      r.verdict = static_cast<uint8_t>(trace::DecisionVerdict::kGraph);
      break;
    case SequencePolicy::Phase::kEager:
      r.verdict = static_cast<uint8_t>(trace::DecisionVerdict::kEager);
      break;
  }
  const std::string& source = policy.source();
  r.source = static_cast<uint8_t>(source == "cached"   ? trace::DecisionSource::kCached
                                  : source == "config" ? trace::DecisionSource::kConfig
                                                       : trace::DecisionSource::kMeasured);
  r.eager_ns = policy.eager_ns();
  r.graph_ns = policy.graph_ns();
  r.launches = u32(length);
  // A signature longer than the length field holds is cut: it still names the sequence here.
  r.signature_len = static_cast<uint16_t>(std::min<size_t>(signature.size(), 0xffff));
  TraceWriter& w = trace_writer();
  uint8_t* p = w.begin(trace::RecordType::kDecision,
                       sizeof(trace::RecordHeader) + sizeof(r) + r.signature_len);
  if (!p) return;
  r.seq = w.next_seq();
  std::memcpy(p, &r, sizeof(r));
  std::memcpy(p + sizeof(r), signature.data(), r.signature_len);
  w.commit();
}

}  // namespace pygraph
