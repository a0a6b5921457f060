// How graph mode's current chunk goes to the GPU, in the context it was recorded in: as one
// replay of its graph, or eagerly, each call as the program made it, in order. The engine
// decides which (a sequence's plan, chunk_policy.h) and owns the chunk; this makes the driver
// calls and counts them in the engine's stats.
//
//  - As a graph (replay): built at the chunk's first replay, and again whenever its cross-stream
//    shape changed (a stream that could not join, an event recorded elsewhere): a graph is never
//    replayed with another shape than the one it was built for. Then patched where arguments
//    changed and launched on the chunk's stream L (graph_chunk.h). With side streams, L waits
//    for their earlier work before the launch (fork) and they wait for the graph after it
//    (join): what the graph's own edges cannot say (stream_fork.h).
//  - Eagerly (drain): each pending call through the program's entry point (program_calls.h).
//  - Either way, copies staged from pageable memory read their snapshots when they run: the
//    staging ring is fenced on L after the work that reads them (staging_ring.h).
// A unit of its own so that the engine stays a coordinator and tests call it directly.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "driver/driver_api.h"
#include "graph/engine_observer.h"
#include "graph/engine_stats.h"
#include "graph/gpu_timer.h"
#include "graph/graph_chunk.h"
#include "graph/own_events.h"
#include "graph/pending_work.h"
#include "graph/staging_ring.h"
#include "graph/stream_fork.h"

namespace pygraph {

// A chunk's graph as a sequence's plan keeps it.
struct Chunk {
  static constexpr uint32_t kOwnGraph = ~0u;
  uint32_t start, end;  // positions in the sequence
  ChunkGraph graph;
  uint64_t shape = 0;  // StreamFork::shape() it was built for: another shape rebuilds it
  // A window with no graph of its own replays the one of the plan's chunk at this index, which
  // holds the same work (chunk_windows.h): `borrows` times so far, the last in the plan's
  // occurrence `seen`.
  uint32_t lender = kOwnGraph;
  uint32_t borrows = 0;
  uint64_t seen = 0;
  CUcontext context = nullptr;  // the window's: its graph is built and replayed there
  uint64_t last_used = 0;       // the engine's clock at its graph's last replay
  uint64_t replayed_in = 0;     // the plan's occurrence recorded as graphs of that replay
};

// The current chunk as the engine holds it: its work in program order, and where it goes.
struct ChunkWork {
  const PendingList& pending;
  const std::vector<uint8_t>& arena;            // argument bytes (Pending::args_offset)
  const std::vector<CUlaunchAttribute>& attrs;  // launch attributes (Pending::attrs_offset)
  const StreamFork& fork;
  CUstream stream;    // L, as the program passed it: where the replay and the fence go
  CUcontext context;  // the one it was recorded in: it goes out there
  // L's ordinal in the fork: 0, the chunk's first stream, unless the legacy stream joined a
  // chunk begun on another and the graph goes out on it (GraphEngine::may_join).
  uint32_t home = 0;
};

// What a replay did.
struct Replayed {
  // The graph could not carry the chunk (built, forked or launched): none of it ran. The caller
  // sends the work out eagerly (drain) and destroys the sequence's graphs, this one included.
  CUresult error = CUDA_SUCCESS;
  // The graph ran, but its side streams could not be made to wait for it, nor the host (a
  // stream sync in their place): the submission's error to report.
  CUresult join_error = CUDA_SUCCESS;
  size_t nodes = 0;      // graph nodes replayed (launches, memops, event records, child graphs)
  size_t launches = 0;   // of them, kernel launches
  uint32_t patched = 0;  // of them, updated before the launch
  bool timed = false;    // its GPU time is in flight on the timer asked for (gpu_timer.h)
};

// Launches and memops in the chunk: event ops alone gain nothing from a graph (worth_a_graph).
inline size_t graph_work(const PendingList& pending) {
  size_t work = 0;
  for (const Pending& p : pending) {
    work += !is_event_op(p.kind);
  }
  return work;
}

// Kernel launches in the chunk (chunk_policy.h, worth_a_graph).
inline size_t kernel_work(const PendingList& pending) {
  size_t kernels = 0;
  for (const Pending& p : pending) {
    kernels += p.kind == NodeKind::kKernel;
  }
  return kernels;
}

class ChunkSubmitter {
 public:
  // Not owned; `stats` counts what is built, replayed, failed and issued eagerly.
  ChunkSubmitter(const DriverApi* api, EngineStats* stats, StagingRing* staging, OwnEvents* events)
      : api_(api), stats_(stats), staging_(staging), events_(events) {}
  ChunkSubmitter(const ChunkSubmitter&) = delete;
  ChunkSubmitter& operator=(const ChunkSubmitter&) = delete;

  void set_observer(EngineObserver* observer) {
    observer_ = observer;
    patches_ = observer && observer->wants_patches();
  }

  // A replay in two steps: `w`'s graph nodes first (event waits are edges, not nodes), then
  // the replay of what was prepared, so that the caller finds the chunk's graph in between (it
  // may evict another sequence's graphs) in the order the engine always had: the same
  // allocations in the same order, the same addresses in a run.
  void prepare(const ChunkWork& w);
  // The prepared `w` (not empty) as one replay of `chunk`'s graph, which belongs to followed
  // sequence `sequence` (for the observer and the failure's log line); built first when `fresh`
  // (a new chunk, or one whose graph is gone) or when it was built for another shape. With a
  // `timer`, the launch is timed on it under `tag` where a slot is free (Replayed::timed).
  Replayed replay(const ChunkWork& w, Chunk& chunk, bool fresh, uint32_t sequence,
                  GpuTimer* timer = nullptr, GpuTimer::Tag tag = {});

  // Every pending call of `w`, eagerly and in order; each launch and memop counted as `reason`.
  // Returns the first error (the calls after it are made all the same, as the program made them).
  // With a `timer`, they are timed on it under `tag` where a slot is free: *timed says whether.
  CUresult drain(const ChunkWork& w, EagerReason reason, GpuTimer* timer = nullptr,
                 GpuTimer::Tag tag = {}, bool* timed = nullptr);

  // One launch or memop went to the driver as a plain call, for this reason.
  void count_eager(bool memop, EagerReason reason) {
    ++(memop ? stats_->memop_eager : stats_->eager)[static_cast<int>(reason)];
    if (observer_) observer_->eager(memop, reason);
  }

  // The sequences that built graphs with event record nodes: only there may a destroyed event
  // sit (the engine parks it, and drops the sequences whose graphs hold none any more).
  std::vector<uint32_t>& event_graph_sequences() { return event_sequences_; }
  const std::vector<uint32_t>& event_graph_sequences() const { return event_sequences_; }

 private:
  CUresult issue(const ChunkWork& w, const Pending& p);
  CUresult fork_side_streams(const ChunkWork& w);
  CUresult join_side_streams(const ChunkWork& w);
  CUresult join_by_event(const ChunkWork& w);
  void note_graph_failure(const ChunkWork& w, const char* call, CUresult r, const ChunkGraph& graph,
                          uint32_t sequence);

  const DriverApi* api_;
  EngineStats* stats_;
  StagingRing* staging_;
  OwnEvents* events_;
  EngineObserver* observer_ = nullptr;
  std::vector<uint32_t> event_sequences_;
  bool patches_ = false;              // the observer wants each patched node
  std::vector<uint32_t> patched_at_;  // the last replay's patched nodes, for the observer only
  // The prepared chunk's nodes as the graph takes them (memops and event records among them),
  // and a drained kernel's parameter pointers: capacity kept across chunks, no allocation in
  // steady state.
  std::vector<RecordedNode> nodes_;
  uint64_t memops_ = 0, events_recorded_ = 0, program_graphs_ = 0;
  uint64_t program_graph_nodes_ = 0;  // their weights (ProgramGraphs::Entry::weight)
  std::vector<void*> param_ptrs_;
};

}  // namespace pygraph
