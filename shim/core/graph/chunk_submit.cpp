#include "graph/chunk_submit.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "driver/launch_attributes.h"
#include "graph/context_scope.h"
#include "graph/program_calls.h"
#include "log.h"

namespace pygraph {
namespace {

// f(stream) for each stream of the chunk but the one its graph goes out on (ChunkWork::home),
// until one fails.
template <class F>
CUresult each_side_stream(const ChunkWork& w, F f) {
  for (uint32_t i = 0; i < w.fork.streams(); ++i) {
    if (i == w.home) continue;
    if (CUresult r = f(reinterpret_cast<CUstream>(w.fork.stream(i)))) return r;
  }
  return CUDA_SUCCESS;
}

}  // namespace

void ChunkSubmitter::prepare(const ChunkWork& w) {
  nodes_.clear();
  uint64_t& memops = memops_;
  uint64_t& events = events_recorded_;
  memops = events = program_graphs_ = program_graph_nodes_ = 0;
  for (const Pending& p : w.pending) {
    if (p.kind == NodeKind::kEventWait) continue;  // an edge (stream_fork.h)
    RecordedNode n;
    n.kind = p.kind;
    if (p.kind == NodeKind::kEventRecord) {
      n.event = p.event.event;
      ++events;
    } else if (p.kind == NodeKind::kChildGraph) {
      n.child = p.graph.copy;
      n.node_priority = p.graph.node_priority;
      ++program_graphs_;
      program_graph_nodes_ += p.graph.weight;
    } else if (p.kind == NodeKind::kKernel) {
      const EngineLaunch& l = p.launch;
      n.function = l.info;
      std::memcpy(n.grid, l.grid, sizeof n.grid);
      std::memcpy(n.block, l.block, sizeof n.block);
      n.shared_mem = l.shared_mem;
      n.args = w.arena.data() + p.args_offset;
      n.packed_size = p.packed_size;
      n.attrs = w.attrs.data() + p.attrs_offset;
      n.attr_count = l.attr_count;
      n.cooperative = l.op == Op::LaunchCooperativeKernel;
    } else {
      n.dst = p.memop.dst;
      n.src = p.memop.src;
      n.count = p.memop.count;
      n.value = p.memop.value;
      n.element_size = memset_element_size(p.memop.op);
      ++memops;
    }
    nodes_.push_back(n);
  }
}

Replayed ChunkSubmitter::replay(const ChunkWork& w, Chunk& chunk, bool fresh, uint32_t sequence,
                                GpuTimer* timer, GpuTimer::Tag tag) {
  ChunkGraph* graph = &chunk.graph;
  Replayed out;
  CUresult& r = out.error;
  {
    ContextScope scope(*api_, w.context, current_context(*api_));
    if (!fresh && chunk.shape != w.fork.shape()) {
      // The same positions with another cross-stream shape (a stream that could not join, an
      // event recorded elsewhere): never replayed with the shape it was built for.
      if (graph->usable()) --stats_->graphs_live;
      graph->destroy(*api_);
      fresh = true;
    }
    if (fresh) {
      chunk.shape = w.fork.shape();
      r = graph->build(*api_, nodes_.data(), nodes_.size(), w.context, &w.fork);
      if (r == CUDA_SUCCESS) {
        ++stats_->graphs_built;
        // Counted once per graph built, not per replay: nothing else asks.
        for (const RecordedNode& n : nodes_) {
          stats_->programmatic_allowed +=
              n.kind == NodeKind::kKernel && allows_programmatic(n.attrs, n.attr_count);
        }
        if (graph->records_events() && std::find(event_sequences_.begin(), event_sequences_.end(),
                                                 sequence) == event_sequences_.end()) {
          event_sequences_.push_back(sequence);
        }
        ++stats_->graphs_live;
        if (observer_) observer_->chunk_built(sequence, chunk.start, chunk.end, nodes_.size());
      }
    }
    const char* failed = r != CUDA_SUCCESS ? graph->failed_call() : nullptr;
    if (r == CUDA_SUCCESS && (r = fork_side_streams(w)) != CUDA_SUCCESS) {
      failed = "side-stream fork";
    }
    if (r == CUDA_SUCCESS) {
      CUevent start = timer ? timer->begin(w.context) : nullptr;
      const bool timing = start != nullptr;
      patched_at_.clear();
      r = graph->replay(*api_, nodes_.data(), nodes_.size(), w.stream, w.context, &out.patched,
                        &start, patches_ ? &patched_at_ : nullptr);
      if (timing) out.timed = timer->end(w.stream, tag, r == CUDA_SUCCESS && start);
      if (r != CUDA_SUCCESS) failed = graph->failed_call();
      // Launched (or not at all): the side streams' later work waits for it. An error here
      // cannot send the work out again; it is the submission's.
      if (r == CUDA_SUCCESS) out.join_error = join_side_streams(w);
    }
    if (r == CUDA_SUCCESS) staging_->fence(w.stream);
    if (r != CUDA_SUCCESS) note_graph_failure(w, failed, r, *graph, sequence);
  }
  if (r != CUDA_SUCCESS) {
    ++stats_->graph_failures;
    return out;
  }
  out.nodes = nodes_.size();
  out.launches = nodes_.size() - memops_ - events_recorded_ - program_graphs_;
  ++stats_->replays;
  if (observer_) {
    observer_->replayed(sequence, nodes_.size(), out.patched);
    for (uint32_t i : patched_at_) observer_->patched(sequence, nodes_[i].kind, nodes_[i].function);
  }
  stats_->replayed += out.launches;
  stats_->program_graphs_replayed += program_graphs_;
  stats_->program_graph_nodes_replayed += program_graph_nodes_;
  stats_->memops_replayed += memops_;
  stats_->patched_nodes += out.patched;
  return out;
}

CUresult ChunkSubmitter::fork_side_streams(const ChunkWork& w) {
  // The graph runs on L; each side stream's work issued before the chunk must come first: L
  // waits for it (one event serves all: a wait takes the record made just before it).
  if (w.fork.streams() < 2) return CUDA_SUCCESS;
  CUevent ev = events_->fork(w.context);
  if (!ev) return CUDA_ERROR_NOT_SUPPORTED;
  return each_side_stream(w, [&](CUstream side) -> CUresult {
    if (CUresult r = api_->event_record(ev, side)) return r;
    return api_->stream_wait_event(w.stream, ev, 0);
  });
}

CUresult ChunkSubmitter::join_side_streams(const ChunkWork& w) {
  if (w.fork.streams() < 2) return CUDA_SUCCESS;
  const CUresult r = join_by_event(w);
  if (r == CUDA_SUCCESS || !api_->stream_synchronize) return r;
  // Some side stream was not made to wait, and the graph cannot be taken back: the host waits
  // for it instead, so that nothing issued later on any stream can run before it. The wait
  // costs the overlap of one replay; a wrong order would cost the result.
  const CUresult synced = api_->stream_synchronize(w.stream);
  log_info(
      "graph mode: a side stream's join failed (CUresult %d); the host waited for the graph "
      "instead (CUresult %d)",
      int(r), int(synced));
  return synced;
}

CUresult ChunkSubmitter::join_by_event(const ChunkWork& w) {
  // Each side stream's later work comes after the graph: it waits for L right after the launch.
  CUevent ev = events_->fork(w.context);
  if (!ev) return CUDA_ERROR_NOT_SUPPORTED;
  if (CUresult r = api_->event_record(ev, w.stream)) return r;
  return each_side_stream(w, [&](CUstream side) -> CUresult {
    if (CUresult r = api_->stream_wait_event(side, ev, 0)) return r;
    ++stats_->side_streams;
    return CUDA_SUCCESS;
  });
}

void ChunkSubmitter::note_graph_failure(const ChunkWork& w, const char* call, CUresult r,
                                        const ChunkGraph& graph, uint32_t sequence) {
  // Rare (a sequence is disabled at its first failure): the stats keep the last one, the debug
  // log every one, so that a user can tell a driver limit from a fault of ours.
  static constexpr const char* kKinds[] = {"kernel",       "memset",     "copy",
                                           "event record", "event wait", "child graph"};
  const bool about_node = call && (std::strstr(call, "Node") || std::strstr(call, "node"));
  char line[160];
  std::snprintf(line, sizeof line, "%s failed (CUresult %d)%s%s; chunk of %zu nodes, %zu stream(s)",
                call ? call : "?", static_cast<int>(r), about_node ? " at a " : "",
                about_node ? kKinds[static_cast<int>(graph.failed_kind())] : "", nodes_.size(),
                std::max<size_t>(w.fork.streams(), 1));
  stats_->last_graph_failure = line;
  log_info("graph failure, sequence %u runs eagerly from now on: %s", sequence, line);
}

CUresult ChunkSubmitter::issue(const ChunkWork& w, const Pending& p) {
  if (is_event_op(p.kind)) {
    return call_event(p.event);
  }
  if (p.kind == NodeKind::kChildGraph) return call_graph(p.graph);
  if (p.kind != NodeKind::kKernel) return call_memop(p.memop);  // a staged copy reads its snapshot
  // The driver's ABI takes the arguments as void*; it only reads them.
  uint8_t* args = const_cast<uint8_t*>(w.arena.data()) + p.args_offset;
  if (p.packed_size) {
    size_t size = p.packed_size;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    return call_launch(p.launch, nullptr, extra, w.attrs.data() + p.attrs_offset);
  }
  const FunctionInfo& f = *p.launch.info;
  param_ptrs_.resize(f.params.size());  // keeps its capacity: no steady allocation
  for (size_t i = 0; i < f.params.size(); ++i) param_ptrs_[i] = args + f.params[i].offset;
  return call_launch(p.launch, param_ptrs_.data(), nullptr, w.attrs.data() + p.attrs_offset);
}

CUresult ChunkSubmitter::drain(const ChunkWork& w, EagerReason reason, GpuTimer* timer,
                               GpuTimer::Tag tag, bool* timed) {
  if (w.pending.empty()) return CUDA_SUCCESS;
  ContextScope scope(*api_, w.context, current_context(*api_));
  const bool timing = timer && timer->start(w.context, w.stream);
  CUresult first_error = CUDA_SUCCESS;
  for (const Pending& p : w.pending) {
    const CUresult r = issue(w, p);
    if (r != CUDA_SUCCESS && first_error == CUDA_SUCCESS) first_error = r;
    if (is_event_op(p.kind)) continue;
    if (p.kind == NodeKind::kChildGraph) {
      ++stats_->program_graphs_eager;
      continue;
    }
    count_eager(p.kind != NodeKind::kKernel, reason);
  }
  // A chunk that did not all go out says nothing of its GPU time: the timing is lost.
  if (timing) *timed = timer->end(w.stream, tag, first_error == CUDA_SUCCESS);
  if (w.fork.streams() > 1 && staging_->unfenced()) {
    // Copies on side streams read their snapshots too: the fence on L comes after them.
    if (CUevent ev = events_->fork(w.context)) {
      each_side_stream(w, [&](CUstream side) -> CUresult {  // best effort: every stream
        api_->event_record(ev, side);
        api_->stream_wait_event(w.stream, ev, 0);
        return CUDA_SUCCESS;
      });
    }
  }
  staging_->fence(w.stream);  // the copies just issued read their snapshots later
  return first_error;
}

}  // namespace pygraph
