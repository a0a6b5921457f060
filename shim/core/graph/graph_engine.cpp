#include "graph/graph_engine.h"

#include <algorithm>
#include <cstring>
#include <ctime>

#include "driver/launch_attributes.h"
#include "driver/packed_args.h"
#include "graph/flush_rules.h"
#include "graph/thread_id.h"
#include "graph/token.h"

namespace pygraph {

namespace {

uint64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1'000'000'000u + uint64_t(t.tv_nsec);
}

// The engine's one clock, chosen once: the injected one, else the monotonic clock.
EngineOptions with_clock(EngineOptions o) {
  if (!o.clock_ns) o.clock_ns = &monotonic_ns;
  return o;
}

}  // namespace

GraphEngine::GraphEngine(const DriverApi* api, EngineOptions options)
    : api_(api),
      options_(with_clock(options)),
      detector_(DetectorOptions{options.min_repeats, 2, 4096, options.max_sequences}),
      staging_(api, options.staging_bytes),
      own_events_(api),
      program_graphs_(api, &stats_.program_graphs_takeable),
      submitter_(api, &stats_, &staging_, &own_events_),
      timer_(api, options_.clock_ns),
      kinds_(api),
      chunk_(options.first_chunk, options.max_chunk, options.chunk_growth),
      turn_(4 * uint64_t(std::max<uint32_t>(options.policy.window, 8)) + 32) {
  options_.min_repeats = std::max<uint32_t>(options_.min_repeats, 1);
}

GraphEngine::~GraphEngine() {
  destroy_graphs();
}

EagerReason GraphEngine::packed_args(const EngineLaunch& l, Work* w) const {
  // The largest parameter block a kernel may have (CUDA 12.1 and later).
  constexpr size_t kMaxParamBytes = 32764;
  PackedArgs packed;
  switch (parse_extra(l.extra, &packed)) {
    case ExtraForm::kNone:
      return EagerReason::kCount;  // the arguments are in kernelParams
    case ExtraForm::kOther:
      return EagerReason::kPackedArgs;
    case ExtraForm::kBuffer:
      break;
  }
  // The driver refuses kernelParams and a buffer together (measured): it does so eagerly.
  if (l.params) return EagerReason::kPackedArgs;
  // The driver refuses a block larger than the kernel's parameters and takes a smaller one
  // (NCCL passes less than its kernels' 4 KiB parameter). With a known layout, a block of
  // exactly the parameters' size is the parameter block: an ordinary node. Any other block
  // the driver takes goes to the node as it is, through `extra`, as the driver takes it (a
  // node built from the layout would hold zeros where the driver puts bytes of its own).
  const bool known = l.info->params_known;
  const bool exact = known && packed.size == l.info->arg_bytes;
  const size_t limit = known ? l.info->arg_bytes : kMaxParamBytes;
  if (!exact && (packed.size == 0 || packed.size > limit)) return EagerReason::kPackedArgsSize;
  if (!known && packed.size != l.info->packed_size_ok) {
    // Not yet seen to launch at this size: eagerly, where the driver can refuse it (refuse()
    // remembers the size once it did not). A known layout's limit is the driver's own.
    w->packed_size = static_cast<uint32_t>(packed.size);
    return EagerReason::kPackedArgsSize;
  }
  w->packed = packed.data;
  w->packed_size = static_cast<uint32_t>(packed.size);
  w->packed_node = !exact;
  return EagerReason::kCount;
}

EagerReason GraphEngine::unrecordable(const EngineLaunch& l, Work* w) const {
  if (!l.info) return EagerReason::kUnknownLayout;
  if (l.extra) {
    const EagerReason reason = packed_args(l, w);
    if (reason != EagerReason::kCount) return reason;
  }
  if (!w->packed && (!l.params || !l.info->params_known)) return EagerReason::kUnknownLayout;
  if (is_per_thread_stream(normalized_stream(l.stream, l.per_thread))) {
    // Its meaning depends on the calling thread; a graph replay could run it on another's.
    return EagerReason::kPerThreadStream;
  }
  if (l.attr_count > kMaxRecordedAttrs) return EagerReason::kAttributes;
  for (uint32_t i = 0; i < l.attr_count; ++i) {
    if (attr_use(l.attrs[i].id) == AttrUse::kEager) return EagerReason::kAttributes;
  }
  return EagerReason::kCount;
}

uint64_t GraphEngine::hash_node_attrs(const EngineLaunch& l, const CUlaunchAttribute* attrs) const {
  // Attributes the node carries are part of the shape: a node is never patched for them.
  uint64_t h = 0;
  for (uint32_t i = 0; i < l.attr_count; ++i) {
    if (attr_use(attrs[i].id) != AttrUse::kNode) continue;
    h = attr_hash_add(h, attrs[i].id, reinterpret_cast<const uint8_t*>(&attrs[i].value));
  }
  if (!options_.patch_grid) {
    // Not an attribute id: a tag that folds grid and shared memory into the same hash.
    uint8_t value[sizeof(CUlaunchAttributeValue)] = {};
    std::memcpy(value, l.grid, sizeof l.grid);
    std::memcpy(value + sizeof l.grid, &l.shared_mem, sizeof l.shared_mem);
    h = attr_hash_add(h, 0x80000000u, value);
  }
  return h;
}

uint64_t GraphEngine::token(const EngineLaunch& l) const {
  LaunchShape shape{l.info->id,
                    {l.block[0], l.block[1], l.block[2]},
                    normalized_stream(l.stream, l.per_thread),
                    static_cast<uint16_t>(l.op),
                    node_attrs(l, l.attrs)};
  return launch_token(shape);
}

EagerReason GraphEngine::unrecordable(const MemopCall& m, MemKind* src) const {
  if (is_per_thread_stream(normalized_stream(m.stream, m.per_thread))) {
    return EagerReason::kPerThreadStream;
  }
  if (m.count == 0) return EagerReason::kMemopOperands;  // nodes refuse empty operations
  const MemKind dst = kinds_.of(m.dst);
  if (memset_element_size(m.op))
    return dst == MemKind::kDevice ? EagerReason::kCount : EagerReason::kMemopOperands;
  // A copy into pageable memory returns only once it is done: the host observes it.
  if (dst != MemKind::kDevice && dst != MemKind::kPinned) return EagerReason::kMemopOperands;
  *src = kinds_.of(m.src);
  if (*src == MemKind::kOther) return EagerReason::kMemopOperands;
  if (*src == MemKind::kPageable && m.op != Op::MemcpyHtoDAsync && m.op != Op::MemcpyAsync) {
    return EagerReason::kMemopOperands;  // not a host source by the op's contract
  }
  return EagerReason::kCount;
}

uint64_t GraphEngine::token(const MemopCall& m, MemKind src) const {
  // Whether a copy reads a staged snapshot, pinned or device memory is fixed in its node.
  return memop_token(static_cast<uint16_t>(m.op), memset_element_size(m.op),
                     static_cast<uint32_t>(src), normalized_stream(m.stream, m.per_thread));
}

uint64_t GraphEngine::token(const EventCall& e) const {
  // A wait's token says how far back (in work seen) its event was recorded, so that one token
  // sequence has one cross-stream shape; the chunk's shape is checked at replay anyway.
  uint32_t back = 0;
  if (e.op == Op::StreamWaitEvent) {
    auto it = event_tick_.find(reinterpret_cast<uint64_t>(e.event));
    if (it != event_tick_.end())
      back = static_cast<uint32_t>(std::min<uint64_t>(tick_ - it->second, 1u << 20));
  }
  return memop_token(static_cast<uint16_t>(e.op), back, e.flags,
                     normalized_stream(e.stream, e.per_thread));
}

void GraphEngine::leads_from_legacy(uint64_t stream, CUstream raw) {
  // The legacy stream joined (may_join; its work is recorded, so it is in the fork): from now on
  // the chunk is on it, as if it began there (chunk_sees, may_join), and its graph goes out on it
  // (ChunkWork::home).
  if (!is_legacy_stream(stream) || is_legacy_stream(chunk_stream_)) return;
  chunk_stream_ = stream;
  chunk_raw_stream_ = raw;
  ++stats_.legacy_joins;
}

uint64_t GraphEngine::now_ns() const {
  return options_.clock_ns();
}

bool GraphEngine::record(const Work& w) {
  if (w.graph) {
    // It came within a segment's first chunk, after work that can be a graph of its own: that
    // work is the head of the segment's next occurrences (early_head, chunk_policy.h).
    if (options_.early_head && plan_ && !following_periodic_ && chunk_.start() == 0 &&
        position_ > 0 && position_ < options_.first_chunk &&
        (!plan_->head || position_ < plan_->head) &&
        worth_a_graph(graph_work(pending_), kernel_work(pending_), true)) {
      plan_->head = static_cast<uint32_t>(position_);
    }
    Pending& p = pending_.add();
    p.kind = NodeKind::kChildGraph;
    p.graph = *w.graph;
    p.position = static_cast<uint32_t>(position_);
    pending_.add_weight(w.graph->weight - 1);  // at least 1 (program_graphs.cpp)
    fork_.node(normalized_stream(w.graph->stream, w.graph->per_thread));
    ++position_;
    ++stats_.program_graphs_recorded;
    return true;
  }
  if (w.event) {
    const EventCall& e = *w.event;
    const uint64_t stream = normalized_stream(e.stream, e.per_thread);
    const uint64_t event = reinterpret_cast<uint64_t>(e.event);
    Pending& p = pending_.add();
    p.event = e;
    p.position = static_cast<uint32_t>(position_);
    if (e.op == Op::StreamWaitEvent) {
      p.kind = NodeKind::kEventWait;
      fork_.wait(stream, event);
      ++stats_.event_waits;
    } else {
      p.kind = NodeKind::kEventRecord;
      fork_.record(stream, event);
      ++stats_.events_recorded;
    }
    ++position_;
    return true;
  }
  if (w.memop) {
    MemopCall m = *w.memop;
    if (w.src == MemKind::kPageable) {
      void* snapshot = staging_.stage(reinterpret_cast<const void*>(m.src), m.count);
      if (!snapshot) return false;
      m.src = reinterpret_cast<uint64_t>(snapshot);
      stats_.staged_bytes += m.count;
    }
    const NodeKind kind = memset_element_size(m.op) ? NodeKind::kMemset : NodeKind::kCopy;
    Pending& p = pending_.add();
    p.kind = kind;
    p.memop = m;
    p.src = w.src;
    p.position = static_cast<uint32_t>(position_);
    fork_.node(normalized_stream(m.stream, m.per_thread));
    ++position_;
    ++stats_.memops_recorded;
    return true;
  }
  const EngineLaunch& l = *w.launch;
  const size_t offset = arena_used_;
  const size_t bytes = w.packed ? w.packed_size : l.info->arg_bytes;
  arena_used_ = offset + bytes;
  if (__builtin_expect(arena_used_ > arena_.size(), 0)) {
    arena_.resize(std::max(arena_used_, 2 * arena_.size()));
  }
  if (w.packed) {
    // The block the driver would read (for a known layout, the packed parameters themselves).
    std::memcpy(arena_.data() + offset, w.packed, w.packed_size);
  } else {
    l.info->pack_args(l.params, arena_.data() + offset);
  }
  const size_t attrs_offset = attrs_.size();
  if (l.attr_count) attrs_.insert(attrs_.end(), l.attrs, l.attrs + l.attr_count);
  Pending& p = pending_.add();
  p.kind = NodeKind::kKernel;
  p.launch = l;
  p.args_offset = static_cast<uint32_t>(offset);
  p.attrs_offset = static_cast<uint32_t>(attrs_offset);
  p.packed_size = w.packed_node ? w.packed_size : 0;
  p.launch.params = nullptr;
  p.launch.extra = nullptr;
  p.launch.attrs = nullptr;
  p.position = static_cast<uint32_t>(position_);
  fork_.node(normalized_stream(l.stream, l.per_thread));
  ++position_;
  ++stats_.recorded;
  return true;
}

void GraphEngine::count_eager(bool memop, EagerReason reason) {
  submitter_.count_eager(memop, reason);
}

void GraphEngine::count_eager(const Work& w, EagerReason reason) {
  if (w.graph) return;  // counted as a program graph launch, not a launch or memop
  count_eager(w.memop != nullptr, reason);
}

CUresult GraphEngine::issue(const Work& w) {
  if (w.event) return call_event(*w.event);
  if (w.graph) return call_graph(*w.graph);
  if (w.memop) return call_memop(*w.memop);
  return call_launch(*w.launch, w.launch->params, w.launch->extra, w.launch->attrs);
}

CUresult GraphEngine::issue_lone(const Work& w) {
  const size_t at = position_;
  const uint32_t round = plan_->pauses.weighing() ? plan_->pauses.round(at, at + 1) : 0;
  if (!round) return issue(w);  // no round open (round() left one whose chunks went back)
  // Timed as a chunk cut short is (submit): its GPU time is work waiting at a pause too. Left
  // untimed, it spoiled its round, and where a place turned lone while the sequence was still
  // weighed, every round after (DDP's step, session 28: 4 of 6 rounds left).
  const uint64_t stream = normalized_stream(w.stream(), w.per_thread());
  const CUstream on = reinterpret_cast<CUstream>(stream);  // the one it goes to, by any door
  const GpuTimer::Tag tag = round_tag(round, at, at + 1, stream);
  last_timed_ = GpuTimer::Tag{};
  const bool timing = timer_.start(current_context(), on);
  const CUresult r = issue(w);
  took_time(tag, timing && timer_.end(on, tag, r == CUDA_SUCCESS), stream);  // failed: lost
  if (timer_.busy()) poll_timer();
  return r;
}

CUresult GraphEngine::refuse(const Work& w, EagerReason reason) {
  // It cannot be a node: what was recorded goes first, and the sequence ends here.
  const CUresult flushed = end_segment(w.op());
  count_eager(w, reason);
  const CUresult r = issue(w);
  if (r == CUDA_SUCCESS && w.launch && w.packed_size && !w.packed && w.launch->info) {
    w.launch->info->packed_size_ok = w.packed_size;  // this size launches: record it next time
  }
  return flushed != CUDA_SUCCESS ? flushed : r;
}

CUresult GraphEngine::launch(const EngineLaunch& l) {
  ++stats_.launches;
  Work w;
  w.launch = &l;
  return admit(w);
}

CUresult GraphEngine::memop(const MemopCall& m) {
  ++stats_.memops;
  Work w;
  w.memop = &m;
  const CUresult r = admit(w);
  stats_.kind_queries = kinds_.asked();
  return r;
}

CUresult GraphEngine::event_op(const EventCall& e) {
  Work w;
  w.event = &e;
  if (!capturing_.empty()) return issue(w);  // the program's capture: untouched
  const uint64_t tok = token(e);
  ++tick_;
  if (e.op != Op::StreamWaitEvent) {
    if (event_tick_.size() > 65536) event_tick_.clear();
    event_tick_[reinterpret_cast<uint64_t>(e.event)] = tick_;
  }
  return take(w, tok);
}

CUresult GraphEngine::admit(Work& w) {
  ++tick_;
  if (!capturing_.empty()) {
    // The program captures a graph itself: its work belongs to that capture, untouched.
    count_eager(w, EagerReason::kCapture);
    return issue(w);
  }
  const EagerReason reason = w.memop ? unrecordable(*w.memop, &w.src) : unrecordable(*w.launch, &w);
  if (reason != EagerReason::kCount) return refuse(w, reason);
  return take(w, w.memop ? token(*w.memop, w.src) : token(*w.launch));
}

CUresult GraphEngine::take(const Work& w, uint64_t tok) {
  CUresult result = CUDA_SUCCESS;
  if (following_id_ &&
      !(position_ < following_tokens_.size() && following_tokens_[position_] == tok) &&
      !switch_variant(tok)) {
    // Not what the sequence has next: what was recorded goes first, as it came.
    ++stats_.mismatches;
    if (resume_.guessing()) ++stats_.resume_mismatches;
    result = drain_eagerly(EagerReason::kMismatch);
    interrupt_occurrence();
    stop_following();
  }
  if (!following_id_) {
    if (at_segment_start_) {
      // A segment seen min_repeats times first (its exact launches, its natural end), else the
      // loop that stopped last, where it stopped: a loop found before (in a warm-up without
      // syncs, or in the previous segment) goes on from the first launch after a sync, instead
      // of being found again two whole periods into the segment, and a segment of several
      // iterations needs not occur twice first. A wrong guess ends as any mismatch does.
      // Only on the thread the loop ran on: another thread's launch after the sync is no part
      // of it (and a chunk's context is its thread's).
      const ResumePoint resume = resume_.take(thread_id());  // tried once
      const Sequence* segment = candidate(tok, false, 0, 0);
      if (segment && resume.loop && options_.measure &&
          made_of_loop(*segment, detector_.find(resume.loop), resume.phase)) {
        // With measured decisions, a segment that is only the loop again (a training loop's
        // iterations between two syncs) is no sequence of its own: it would measure from
        // nothing, eager windows of whole segments, what the loop has decided or is measuring.
        segment = nullptr;
      }
      if (segment) {
        follow(*segment, 0);
        start_occurrence();
      } else if (resume.loop && start_following(tok, true, resume.loop, resume.phase)) {
        ++stats_.loops_resumed;
        resume_.resumed();  // until its first wrap: a mismatch before it was a wrong guess
        start_occurrence();
      }
    } else if (completed_segment_ && start_loop_after_segment(tok)) {
      ++stats_.loops_past_segments;
      start_occurrence();
    } else if (expected_period_) {
      // A loop whose graphs failed is not looked up again at every period (up to every second
      // launch) once its plan is disabled.
      auto plan = plans_.find(expected_period_);
      if ((plan == plans_.end() || !plan->second.disabled) &&
          start_following(tok, true, expected_period_, expected_phase_)) {
        start_occurrence();
      }
    }
    // Set only where following stopped (end_of_occurrence): the launch after it comes here.
    completed_segment_ = 0;
  }
  at_segment_start_ = false;
  expected_period_ = 0;
  if (following_id_ && !following_periodic_) {
    detector_.push_in_segment(tok);  // the launch path while a step replays: no period search
  } else if (const Sequence* done = detector_.push(tok);
             done && done->periodic && done->occurrences >= options_.min_repeats) {
    // The next launch may go on with the loop, at this place in its canonical rotation.
    expected_period_ = done->id;
    expected_phase_ = detector_.periodic_phase();
  }

  // A place where a chunk starting there is cut short every time (chunk_policy.h).
  const bool lone = following_id_ && !eager_arm_ && !w.event && pending_.empty() &&
                    plan_->lone_starts.lone(position_);
  if (following_id_ && (eager_arm_ || lone)) {
    // Followed but not recorded: this occurrence runs as the program made it (an eager window
    // of a measurement, or a sequence whose graphs do not pay), or this work does (lone), and
    // the occurrence's end is still seen.
    plan_->pauses.interrupt();  // no gap of a recorded occurrence spans this
    const CUresult r = lone ? issue_lone(w) : issue(w);
    if (w.event) {
      ++stats_.events_eager;
      ++position_;
      end_of_occurrence();
      return result != CUDA_SUCCESS ? result : r;
    }
    if (r != CUDA_SUCCESS) {
      count_eager(w, EagerReason::kLaunchError);
      interrupt_occurrence();
      end_segment(w.op());
      resume_.forget();  // a retry of the failing launch is no place to take the loop up
      return result != CUDA_SUCCESS ? result : r;
    }
    count_eager(w, lone ? EagerReason::kShortChunk : eager_arm_reason_);
    ++position_;
    if (pending_.empty()) chunk_.move_start(position_);
    end_of_occurrence();
    return result;
  }
  if (following_id_) {
    // While the sequence's pauses are learned: when this entry arrived, and when the engine was
    // done with it if it submitted a chunk (what the program does between is its own time).
    Plan* learner = plan_->pauses.learning() ? plan_ : nullptr;
    if (learner) {
      learner->pauses.arrived(position_ % plan_->length, now_ns());
      if (!learner->pauses.learning()) learner = nullptr;  // learning ends only here
    }
    const uint64_t stream = normalized_stream(w.stream(), w.per_thread());
    CUresult r = CUDA_SUCCESS;
    const bool same_thread = thread_id() == chunk_thread_;
    if (!pending_.empty() && !same_thread) {
      // Another thread continues the chunk: fine on the same context (PyTorch's backward
      // thread), a new chunk on another.
      if (current_context() != chunk_context_) r = flush(FlushCause::kContextChange, w.op());
      chunk_thread_ = thread_id();
    }
    if (r != CUDA_SUCCESS && result == CUDA_SUCCESS) result = r;
    if (w.event &&
        (!event_recordable(*w.event, stream, same_thread) || !spare_earlier_record(*w.event))) {
      r = issue_event_in_place(w, stream);
      return result != CUDA_SUCCESS ? result : r;
    }
    if (!w.event && !pending_.empty() && !fork_.holds_stream(stream) &&
        !may_join(stream, same_thread)) {
      // Work of a stream the chunk cannot hold: a new chunk. A stream that may join starts
      // as a side stream with no edge into the chunk: at the launch it waits for the graph's
      // start, as every side stream does (more order than the program asked for, never less).
      r = flush(FlushCause::kStreamChange, w.op());
      if (r != CUDA_SUCCESS && result == CUDA_SUCCESS) result = r;
    }
    if (following_id_) {
      const bool begins = pending_.empty();
      if (begins) {
        chunk_stream_ = stream;
        chunk_raw_stream_ = w.stream();
        chunk_context_ = current_context();
        chunk_thread_ = thread_id();
        chunk_begun_ns_ = plan_ && plan_->pauses.weighing() ? now_ns() : 0;
      }
      if (!record(w)) {
        r = refuse(w, EagerReason::kStagingFull);
        return result != CUDA_SUCCESS ? result : r;
      }
      // Only once recorded: the stream is in the fork then (a refused copy never joined it).
      if (!begins) leads_from_legacy(stream, w.stream());
      // Complete (filled, or at the occurrence's end, or a kernel its peers wait for:
      // chunk_policy.h), or a pause comes next (pause_places.h).
      const bool peers = w.launch && w.launch->info->waits_for_peers;
      const bool full =
          chunk_.full(position_, following_tokens_.size(), pending_.extra_weight()) || peers;
      const uint8_t cut =
          !full && plan_->pauses.any() ? plan_->pauses.before(position_ % plan_->length) : 0;
      if (full || cut) {
        stats_.pause_cuts += cut == PausePlaces::kPause;
        stats_.peer_cuts += peers;
        // Only a segment restarts (pause_places.h): its place is its position.
        const PausePlaces::Restart restart = plan_->pauses.restart_at(position_);
        const bool head = chunk_.head();  // the program's graph goes out alone after it
        r = submit(peers);
        if (learner) learner->pauses.done_at(now_ns());
        // Where the GPU drained before the next chunk, it starts small, sized as weighed.
        // Chunks ended at that place by a flush (an event issued in place, another stream) do
        // not restart.
        if (restart && !head && following_id_ && chunk_.start() == position_) {
          chunk_.begin_paced(position_, restart.first, restart.pace);
          ++stats_.restarted_chunks;
        }
      }
      return result != CUDA_SUCCESS ? result : r;
    }
  }
  if (w.event) {
    // Not followed: issued after what it orders or observes (nothing is pending then, as a rule).
    const uint64_t stream = normalized_stream(w.stream(), w.per_thread());
    CUresult r = CUDA_SUCCESS;
    if (chunk_sees(stream) || fork_.holds_event(reinterpret_cast<uint64_t>(w.event->event))) {
      r = flush(FlushCause::kOp, w.op());
    }
    const CUresult e = issue(w);
    if (result != CUDA_SUCCESS) return result;
    return r != CUDA_SUCCESS ? r : e;
  }
  const CUresult r = issue(w);
  if (r != CUDA_SUCCESS) {
    // Failing work is never recorded later: the segment ends at it (nothing is recorded when
    // the work was issued, so ending it submits nothing).
    count_eager(w, EagerReason::kLaunchError);
    end_segment(w.op());
    resume_.forget();  // a retry of the failing launch is no place to take the loop up
  } else {
    count_eager(w, EagerReason::kNotRepeating);
  }
  return result != CUDA_SUCCESS ? result : r;
}

}  // namespace pygraph
