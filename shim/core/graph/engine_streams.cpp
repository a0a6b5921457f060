// GraphEngine, the streams and events of a chunk: which streams a chunk sees and which may join
// it (stream_fork.h), whether an event record or wait can be a node or an edge of it, and the
// spare events that keep a program's record where the program put it (own_events.h). Called
// when work of another stream or an event op arrives, never per launch on the chunk's own
// stream: graph_engine.cpp holds the launch path.
#include <algorithm>

#include "graph/flush_rules.h"
#include "graph/graph_engine.h"
#include "graph/thread_id.h"

namespace pygraph {

bool GraphEngine::chunk_sees(uint64_t s) const {
  if (pending_.empty()) return false;
  return fork_.holds_stream(s) || is_legacy_stream(s) || is_legacy_stream(chunk_stream_);
}

bool GraphEngine::may_join(uint64_t stream, bool same_thread) const {
  // The fork makes the graph wait for the side stream's earlier work and the join makes the
  // side stream's later work wait for the graph (which waits for everything before it on L):
  // order the program did not ask for. Safe only where no stream may wait for the host: no
  // host function, memory wait, external semaphore or program graph but a plain one (kernels,
  // copies and sets, program_graphs.h) was ever put on a stream (waits between streams would carry
  // the wait, blocking streams inherit the legacy stream's), so none at all (a kernel that polls
  // host memory stays a known limit). And only from the chunk's thread (another thread's work cuts
  // the chunk), not a per-thread stream; beside a chunk on the legacy stream only a non-blocking
  // stream (PyTorch's default stream is the legacy one, its side streams are non-blocking): a
  // blocking one's work is ordered after the legacy stream's earlier work, which no edge in the
  // graph would say. A side stream needs the engine's own events and the driver's wait. The legacy
  // stream itself joins a chunk begun on another stream only where every stream of the chunk is
  // non-blocking: the graph then goes out on the legacy stream (leads_from_legacy), which orders it
  // after the legacy and blocking streams' earlier work, as a chunk begun on the legacy stream is
  // (PyTorch's two-stream step: a chunk that began on the side stream was cut at the main stream's
  // next launch).
  if (!options_.multi_stream || !same_thread || host_waits_ || is_per_thread_stream(stream) ||
      fork_.streams() >= 8 || !api_->stream_wait_event || !api_->event_record ||
      !api_->event_create) {
    return false;
  }
  if (is_legacy_stream(stream)) {
    if (is_legacy_stream(chunk_stream_)) return false;  // (it holds it: not asked)
    for (uint32_t i = 0; i < fork_.streams(); ++i) {
      if (!non_blocking(fork_.stream(i))) return false;
    }
    return true;
  }
  return !is_legacy_stream(chunk_stream_) || non_blocking(stream);
}

bool GraphEngine::non_blocking(uint64_t stream) const {
  // Asked of the driver once per stream (at its first join beside a legacy chunk), forgotten at
  // its destruction (a new stream may get its handle).
  for (const auto& [s, nb] : stream_flags_) {
    if (s == stream) return nb;
  }
  unsigned int flags = 0;
  const bool nb =
      api_->stream_get_flags &&
      api_->stream_get_flags(reinterpret_cast<CUstream>(stream), &flags) == CUDA_SUCCESS &&
      (flags & CU_STREAM_NON_BLOCKING);
  if (stream_flags_.size() >= 64) stream_flags_.erase(stream_flags_.begin());
  stream_flags_.emplace_back(stream, nb);
  return nb;
}

bool GraphEngine::event_recordable(const EventCall& e, uint64_t stream, bool same_thread) const {
  if (e.flags != 0 || !e.event || is_per_thread_stream(stream)) return false;
  const uint64_t event = reinterpret_cast<uint64_t>(e.event);
  if (e.op != Op::StreamWaitEvent) {
    // Another process may wait for it: recorded in place, after what it follows.
    if (!interprocess_events_.empty() &&
        std::ranges::find(interprocess_events_, event) != interprocess_events_.end()) {
      return false;
    }
    // A record: of work in the chunk (or starting it, or a stream joining it). An event
    // recorded twice in one chunk would leave which record is its latest to the graph's order,
    // unless the second runs after the first (StreamFork::record_follows).
    if (fork_.holds_event(event)) return fork_.record_follows(stream, event);
    return pending_.empty() || fork_.holds_stream(stream) || may_join(stream, same_thread);
  }
  if (!fork_.holds_event(event)) return false;  // recorded outside the chunk: as today
  return fork_.holds_stream(stream) || may_join(stream, same_thread);
}

CUresult GraphEngine::issue_event_in_place(const Work& w, uint64_t stream) {
  // It stays out of the chunk: what it orders or observes goes first (a wait or record on a
  // stream the chunk holds, an event the chunk records, the legacy stream), then it is issued
  // where the program made it, and the sequence goes on past it.
  CUresult r = CUDA_SUCCESS;
  const uint64_t event = reinterpret_cast<uint64_t>(w.event->event);
  if (chunk_sees(stream) || fork_.holds_event(event)) r = flush(FlushCause::kOp, w.op());
  fork_.forget_event(event);
  const CUresult e = issue(w);
  ++stats_.events_eager;
  ++position_;
  if (pending_.empty()) chunk_.move_start(position_);
  if (!pending_.empty() && position_ == following_tokens_.size()) {
    // The occurrence's last entry, issued in place after work the chunk still holds (work of
    // a stream it neither orders nor observes): that work goes now. Left pending past the
    // occurrence's end, it was overtaken by the stream's next launch, which nothing followed
    // then (a review found it, session 20). submit() ends the occurrence.
    const CUresult s = submit();
    if (r == CUDA_SUCCESS) r = s;
  } else {
    end_of_occurrence();
  }
  return r != CUDA_SUCCESS ? r : e;
}

bool GraphEngine::spare_earlier_record(const EventCall& e) {
  const uint64_t event = reinterpret_cast<uint64_t>(e.event);
  if (e.op == Op::StreamWaitEvent || !fork_.holds_event(event)) return true;
  // Recorded again, after its earlier record (event_recordable): that one records a spare
  // instead, so that the graph holds one record of the program's event, its latest, however
  // the driver orders two. Nothing outside the chunk can have waited for the earlier one (a
  // sync or outside wait of it submits the chunk first, a query too or is answered "not ready":
  // answers_query), and the chunk's own waits on it are edges, or waits on the spare where the
  // chunk goes out eagerly.
  if (!spare_for(event)) return false;
  ++stats_.rerecords;
  return true;
}

bool GraphEngine::spare_for(uint64_t event) {
  CUevent spare = nullptr;
  {
    ContextScope scope(*api_, chunk_context_, current_context());
    spare = spare_event();
  }
  if (!spare) return false;
  for (Pending* p = pending_.data(); p != pending_.data() + pending_.size(); ++p) {
    if (is_event_op(p->kind) && reinterpret_cast<uint64_t>(p->event.event) == event) {
      p->event.event = spare;
    }
  }
  fork_.forget_event(event);
  return true;
}

CUevent GraphEngine::spare_event() {
  // One per destroyed event of the chunk: two sharing one, drained eagerly in the order
  // record A, record B, wait A, would let the wait see B's record. Reused once no pending node
  // names it (a wait takes the latest record made before it, a graph's record node included).
  return own_events_.spare(chunk_context_, [this](CUevent e) {
    bool named = false;
    for (const Pending& p : pending_) {
      named |= is_event_op(p.kind) && p.event.event == e;
    }
    return named;
  });
}

}  // namespace pygraph
