// GraphEngine, a chunk's way out: flushes, its submission as a graph replay (built first where
// new) or eagerly, the timing of a weighed round's chunks, and the graphs' lifetime (the bound,
// module unloads, a context's end). Called per chunk or per op, never per launch: apart from
// graph_engine.cpp, which holds the launch path.
#include "graph/graph_engine.h"
#include "graph/thread_id.h"

namespace pygraph {

void GraphEngine::destroy_graphs() {
  for (auto& [id, plan] : plans_) destroy_chunks(plan);
  program_graphs_.forget_all();
}

uint64_t GraphEngine::destroy_chunks(Plan& plan) {
  uint64_t built = 0;
  for (Chunk& c : plan.chunks.all()) {
    built += c.graph.built();  // a broken one too: it was counted when built
    c.graph.destroy(*api_);
  }
  plan.chunks.clear();
  stats_.graphs_live -= built;
  return built;
}

ChunkWork GraphEngine::chunk_work() const {
  const uint32_t home = fork_.ordinal(chunk_stream_);
  return ChunkWork{pending_,
                   arena_,
                   attrs_,
                   fork_,
                   chunk_raw_stream_,
                   chunk_context_,
                   home == StreamFork::kNone ? 0 : home};
}

void GraphEngine::clear_chunk() {
  pending_.clear();
  fork_.clear();
  arena_used_ = 0;
  attrs_.clear();
}

CUresult GraphEngine::drain_eagerly(EagerReason reason, const GpuTimer::Tag* tag, bool* timed) {
  if (pending_.empty()) return CUDA_SUCCESS;
  const CUresult r = submitter_.drain(chunk_work(), reason, tag ? &timer_ : nullptr,
                                      tag ? *tag : GpuTimer::Tag{}, timed);
  clear_chunk();
  return r;
}

GpuTimer::Tag GraphEngine::round_tag(uint32_t round, size_t start, size_t end,
                                     uint64_t stream) const {
  return GpuTimer::Tag{
      following_id_, round, static_cast<uint32_t>(start), static_cast<uint32_t>(end),
      round && last_timed_.sequence == following_id_ && last_timed_.round == round &&
          last_timed_.end == start && last_timed_stream_ == stream};
}

void GraphEngine::took_time(const GpuTimer::Tag& tag, bool timed, uint64_t stream) {
  if (timed) {
    last_timed_ = tag;  // the next chunk may follow it at once: its idle time is measured
    last_timed_stream_ = stream;
  } else {
    plan_->pauses.lost(tag.round);
  }
}

CUresult GraphEngine::flush(FlushCause cause, Op op) {
  if (pending_.empty()) return CUDA_SUCCESS;
  ++stats_.flushes_by_cause[static_cast<int>(cause)];
  if (cause == FlushCause::kOp && op < Op::kCount) ++stats_.flushes_by_op[static_cast<int>(op)];
  if (observer_) observer_->flushed(cause, op, pending_.size());
  return submit();
}

CUresult GraphEngine::flush_all(FlushCause cause) {
  return flush(cause, Op::kCount);
}

bool GraphEngine::flush_if_stalled(uint64_t* mark) {
  const uint64_t now = recorded_entries();
  const bool pending = !pending_.empty();
  if (pending && now == *mark) defer_error(flush(FlushCause::kStall, Op::kCount));
  *mark = now;
  return pending;
}

void GraphEngine::make_room(const Chunk* keep) {
  Plan* victim = nullptr;
  for (auto& [id, plan] : plans_) {
    if (&plan == plan_ || plan.chunks.empty()) continue;
    if (!victim || plan.last_used < victim->last_used) victim = &plan;
  }
  if (victim) stats_.graphs_evicted += destroy_chunks(*victim);
  if (stats_.graphs_live < options_.max_graphs) return;
  // The sequence being replayed holds the rest: its least recently replayed goes, if not in
  // this occurrence recorded as graphs or the one before. Where its cuts vary, windows it has
  // seen add up without end; a schedule it replays every time stays, beyond the bound (else
  // each graph would be built again at its next turn), and so do its graphs through a
  // measurement's eager arms.
  const uint64_t before = plan_->graph_arms ? plan_->graph_arms - 1 : 0;
  if (plan_->chunks.evict_least_recent(*api_, keep, before)) {
    --stats_.graphs_live;
    ++stats_.graphs_evicted;
  }
}

void GraphEngine::forget_graphs(const ModuleUnload& unload) {
  auto launches_its_kernel = [&](const FunctionInfo& f) { return may_belong(f, unload); };
  for (auto& [id, plan] : plans_) {
    bool holds = false;
    for (const Chunk& c : plan.chunks.all())
      holds = holds || c.graph.launches_any(launches_its_kernel);
    if (!holds) continue;
    stats_.graphs_unloaded += destroy_chunks(plan);
    // The sequence's tokens name the kernel by its id, which no launch has again (the handle is
    // described anew): it could only mismatch where the kernel was.
    plan.disabled = true;
  }
}

void GraphEngine::drop_all_graphs() {
  for (auto& [id, plan] : plans_) stats_.graphs_context_ended += destroy_chunks(plan);
}

CUresult GraphEngine::submit(bool at_peers) {
  if (pending_.empty()) return CUDA_SUCCESS;
  if (following_periodic_ && plan_ && plan_->args.learning()) learn_arg_period();
  // The next chunk of this occurrence is `chunk_growth` times as large, up to max_chunk
  // (chunk_policy.h).
  const size_t start = chunk_.start();
  // Filled, not cut short: a chunk of one launch that weighs its size (a program's graph
  // weighing its nodes) is no reason to stop deferring. The occurrence's last launch alone is cut
  // short (a copy the program syncs right after). A chunk that a kernel its peers wait for ended
  // (`at_peers`) never is: a loop of collectives makes one of those per collective, and counted
  // as cut short they would stop the whole sequence's deferral.
  const size_t extra = pending_.extra_weight();
  const bool full = chunk_.filled(position_, extra) || at_peers;
  const bool head = chunk_.head();  // a segment's head (chunk_policy.h, early heads)
  // A restart's pace lasts to the next cut, however the chunk ends there (a flush too). Where
  // nothing is pending at the cut (an event issued in place, a lone entry) it lasts to the cut
  // after, growing more slowly than chunk_growth meanwhile: more launches, never less order.
  if (chunk_.paced() && plan_ && plan_->pauses.before(position_ % plan_->length)) {
    chunk_.unpace();
  }
  chunk_.submitted(position_, extra);
  // A head is a graph even of one node, and the program's graph after it goes out alone, as the
  // program launched it.
  if (head) {
    ++stats_.early_heads;
    chunk_.begin_alone(position_);
  }
  if (plan_ && plan_->names_left) name_nodes(*plan_);
  // While its pauses are weighed, every chunk of a round (pause_places.h) is timed: its GPU
  // time, and the GPU's idle time before it where it follows the chunk timed before at once.
  // Not at a graph's first launch, which uploads the graph on the stream, inside the timing.
  const uint32_t round =
      plan_ && plan_->pauses.weighing() ? plan_->pauses.round(start, position_) : 0;
  GpuTimer::Tag tag = round_tag(round, start, position_, chunk_stream_);
  if (round && chunk_begun_ns_) tag.record_ns = now_ns() - chunk_begun_ns_;
  last_timed_ = GpuTimer::Tag{};
  const size_t entries = graph_work(pending_);
  // Only a chunk of one entry, and only with the option or as a head, asks what it holds.
  const bool one_launch = options_.one_launch_graphs || head;
  const size_t kernels = one_launch && entries == 1 ? kernel_work(pending_) : 0;
  if (!worth_a_graph(entries, kernels, one_launch) || !plan_ || plan_->disabled) {
    // Too little for a graph (chunk_policy.h): it goes out as the program made it.
    if (plan_ && !plan_->disabled && !full) {
      if (plan_->short_chunks.cut_short()) ++stats_.cut_short;
      plan_->lone_starts.cut_short(start, following_tokens_.size());
    }
    // Timed as a replay is: its launches' GPU time is work waiting at a pause too.
    bool timed = false;
    const CUresult r = drain_eagerly(EagerReason::kShortChunk, round ? &tag : nullptr, &timed);
    if (round) took_time(tag, timed, chunk_stream_);
    end_of_occurrence();
    return r;
  }
  const ChunkWork work = chunk_work();
  submitter_.prepare(work);
  // Its window's graph, or one of the same work (chunk_windows.h); a new one within
  // max_graphs (make_room: no window moves, so `chunk` stays put).
  const WindowGraph g =
      plan_->chunks.find(static_cast<uint32_t>(start), static_cast<uint32_t>(position_),
                         following_tokens_, work.fork.shape(), work.context, plan_->occurrences);
  if (g.fresh && !g.chunk->graph.built() && stats_.graphs_live >= options_.max_graphs) {
    make_room(g.chunk);
  }

  stats_.replays_borrowed += g.borrowed;
  const Replayed done = submitter_.replay(work, *g.chunk, g.fresh, following_id_,
                                          round && !g.fresh ? &timer_ : nullptr, tag);
  if (round) took_time(tag, done.timed, chunk_stream_);
  if (timer_.busy()) poll_timer();
  if (done.error != CUDA_SUCCESS) {
    // The graph could not carry this chunk: the launches go out as the program made them, and
    // this sequence stays eager from now on.
    destroy_chunks(*plan_);
    plan_->disabled = true;
    const CUresult eager = drain_eagerly(EagerReason::kGraphFailure);
    stop_following();
    return eager;
  }
  ++plan_->graph_replays;
  plan_->graph_launches += done.launches;
  plan_->short_chunks.replayed();
  plan_->lone_starts.replayed(start);
  if (options_.measure) {
    // The policy re-measures when replays change (fewer launches, more patches per replay).
    plan_->replayed_nodes += done.nodes;
    plan_->patched += done.patched;
    if (++plan_->replays == 32) {
      plan_->policy.replay_figures(double(plan_->patched) / 32, double(plan_->replayed_nodes) / 32);
      plan_->restart_replay_figures();
    }
  }
  plan_->last_used = ++clock_;
  g.chunk->last_used = clock_;
  g.chunk->replayed_in = plan_->graph_arms;
  clear_chunk();
  end_of_occurrence();
  return done.join_error;
}

void GraphEngine::poll_timer() {
  timer_.poll([this](const GpuTimer::Tag& t, uint64_t gpu_ns, uint64_t idle_ns, uint64_t host_ns) {
    weighed(t, gpu_ns, idle_ns, host_ns);
  });
}

void GraphEngine::weighed(const GpuTimer::Tag& tag, uint64_t gpu_ns, uint64_t idle_ns,
                          uint64_t host_ns) {
  auto it = plans_.find(tag.sequence);
  if (it != plans_.end()) {
    it->second.pauses.weighed(
        {tag.round, tag.start, tag.end, gpu_ns, idle_ns, host_ns, tag.record_ns});
  }
}

void GraphEngine::defer_error(CUresult r) {
  if (r != CUDA_SUCCESS && deferred_error_ == CUDA_SUCCESS) deferred_error_ = r;
}

CUresult GraphEngine::end_segment(Op op) {
  const CUresult r = flush(FlushCause::kOp, op);
  if (expected_period_ && !(following_id_ && following_periodic_)) {
    // The loop's period was completed by the last launch but not yet followed: it goes on at
    // the next segment's start too (stop_following remembers one that was followed).
    resume_.remember(expected_period_, expected_phase_, thread_id());
  }
  // Cut short (the occurrence was not complete): no sample of its iteration.
  if (following_id_ && (following_periodic_ || position_ != 0)) interrupt_occurrence();
  stop_following();
  if (observer_) observer_->segment_ended(op);
  detector_.boundary(static_cast<uint64_t>(op) + 1);  // tags are nonzero
  stats_.sequences_known = detector_.sequences().size();
  at_segment_start_ = true;
  expected_period_ = 0;
  return r;
}

}  // namespace pygraph
