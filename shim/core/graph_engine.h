// The graph-mode engine: sees every kernel launch and every other op the program makes, finds
// the launch sequences that repeat (SequenceDetector: segments between boundaries, periods in
// loops without them) and, from a sequence's (min_repeats+1)-th occurrence on, records its
// launches instead of launching them. Recorded launches go to the GPU as chunks: a chunk is
// submitted as a patched graph replay (ChunkGraph) as soon as it is complete, so the GPU gets
// work early, or earlier when an op needs it (flush_rules.h).
//
// Correctness rules (docs/design-graph-mode.md):
//  - recorded launches all sit on one stream in one context, the latest work the program issued
//    there; the sequence continuing on another stream submits the current chunk first;
//  - before every other op, the work that op can observe is submitted, in order (before_op);
//  - a launch that is not the sequence's next one sends the recorded prefix out eagerly, in its
//    original order, then goes out itself;
//  - if building, patching or launching a graph fails, the chunk's launches go out eagerly in
//    order and the sequence is never graphed again: the program sees no error it would not have
//    seen without pygraph;
//  - while the program captures a graph itself, every launch passes through untouched.
// Not thread-safe: the hooks serialize calls under one lock.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "driver_api.h"
#include "engine_stats.h"
#include "function_table.h"
#include "graph_chunk.h"
#include "launch_call.h"
#include "ops.h"
#include "sequence_detector.h"

namespace pygraph {

struct EngineOptions {
  uint32_t min_repeats = 2;
  uint32_t first_chunk = 8;  // launches; later chunks of an occurrence double up to max_chunk
  uint32_t max_chunk = 128;
  uint32_t max_graphs = 1024;  // instantiated chunk graphs kept; least recently used go first
  // Periods (loops without syncs) shorter than this are not followed: a graph launch would
  // replace only a few launches, and short periods inside a step (alternating kernels) would
  // cut it into pieces before the whole step is found as a segment.
  uint32_t min_period = 8;
};

// Launch attributes a recorded launch may carry; launches with more go out eagerly.
constexpr uint32_t kMaxRecordedAttrs = 8;

// A launch as the hooks hand it to the engine: the call, plus what the engine needs to make it
// itself later.
struct EngineLaunch : LaunchCall {
  void* eager;      // the driver entry point the program called, with the ABI of `op`
  bool per_thread;  // reached through a per-thread-default-stream entry point
};

class GraphEngine {
 public:
  GraphEngine(const DriverApi* api, EngineOptions options = {});
  ~GraphEngine();

  // A kernel launch. Returns what the program must see: CUDA_SUCCESS for a recorded launch,
  // else the result of launching it (eagerly, after whatever had to go first).
  CUresult launch(const EngineLaunch& l);

  // Before an op other than a launch, on `stream` (null when it has none): submits the
  // recorded work the op can observe (flush_rules.h). Returns an error a submission met, for the
  // caller to report after running the op (the launch it belongs to had returned success).
  CUresult before_op(Op op, CUstream stream, bool per_thread);
  // After the op ran: capture bookkeeping, and boundaries end the current segment.
  void after_op(Op op, CUstream stream, bool per_thread, CUresult result);

  // Submits everything recorded (exit, fork, tests).
  CUresult flush_all(FlushCause cause);

  // Destroys every graph (process exit: the driver may be gone, so only while it is not).
  void destroy_graphs();

  bool capturing() const { return !capturing_.empty(); }
  bool idle() const { return pending_.empty(); }
  const EngineStats& stats() const { return stats_; }

 private:
  struct Pending {
    EngineLaunch launch;    // params, extra and attrs pointers cleared: not ours to keep
    uint32_t args_offset;   // into arena_
    uint32_t attrs_offset;  // into attrs_
  };
  struct Chunk {
    uint32_t start, end;  // positions in the sequence
    ChunkGraph graph;
  };
  struct Plan {  // per sequence id
    std::vector<Chunk> chunks;
    bool disabled = false;
    uint64_t last_used = 0;
  };

  EagerReason unrecordable(const EngineLaunch& l) const;  // kCount when recordable
  uint64_t token(const EngineLaunch& l) const;
  size_t chunk_end() const;  // exclusive end of the current chunk
  bool start_following(uint64_t token, bool periodic_only, uint32_t periodic_id);
  void record(const EngineLaunch& l);
  CUresult flush(FlushCause cause, Op op);  // counted, then submit()
  CUresult submit();  // the current chunk, as a graph replay (eagerly if it cannot be one)
  ChunkGraph* chunk_graph(Plan& plan, uint32_t start, uint32_t end, bool* fresh);
  void evict_least_recent();
  CUresult call_eagerly(const EngineLaunch& l, void** params, void** extra,
                        const CUlaunchAttribute* attrs);
  CUresult launch_pending_eagerly(const Pending& p);
  CUresult drain_eagerly(EagerReason reason);  // recorded launches, eagerly, in order
  void stop_following();
  void end_segment(Op op);  // `op` ended it (a boundary, or a launch no graph can hold)
  CUcontext current_context() const;

  const DriverApi* api_;
  EngineOptions options_;
  SequenceDetector detector_;
  EngineStats stats_;
  std::unordered_map<uint32_t, Plan> plans_;
  uint64_t clock_ = 0;  // submissions, for least-recently-used eviction
  bool unloaded_ = false;
  std::vector<uint64_t> capturing_;  // streams the program is capturing

  // The sequence being followed, the next position in it, and the current chunk: its first
  // position, size, stream, context and the thread that last added to it.
  uint32_t following_id_ = 0;
  Plan* plan_ = nullptr;
  std::vector<uint64_t> following_tokens_;
  size_t position_ = 0;
  size_t chunk_start_ = 0;
  size_t chunk_size_ = 0;  // of the current chunk: first_chunk, doubling per chunk up to max
  uint64_t chunk_stream_ = 0;
  CUcontext chunk_context_ = nullptr;
  const void* chunk_thread_ = nullptr;
  bool at_segment_start_ = true;
  uint32_t expected_period_ = 0;  // a periodic sequence that may start at the next launch

  // The current chunk's launches, their argument bytes and attributes. Capacity is kept across
  // chunks: no allocation in steady state.
  std::vector<Pending> pending_;
  std::vector<uint8_t> arena_;
  std::vector<CUlaunchAttribute> attrs_;
  std::vector<RecordedLaunch> scratch_;
  std::vector<void*> param_ptrs_;
};

}  // namespace pygraph
