// The graph-mode engine: sees every kernel launch and every other op of one stream of work,
// finds the sequences that repeat (SequenceDetector), and from a sequence's (min_repeats+1)-th
// occurrence on records its launches instead of launching them, submitting each chunk as a
// patched graph replay (ChunkGraph) as soon as the chunk is complete.
//
// Correctness rules of this first version (docs/design-graph-mode.md):
//  - only plain kernel launches whose parameter layout is known are recorded;
//  - every other op (sync, copy, set, event, free, ...) first submits all recorded work, in
//    order, through flush(): nothing the host or another stream can observe is held back;
//  - a launch that does not match the sequence's next token submits the recorded prefix
//    eagerly, in its original order, and goes out eagerly itself;
//  - if building, patching or launching a graph fails, the chunk's launches go out eagerly in
//    order and the sequence is never graphed again: the program sees no error it would not have
//    seen without pygraph.
// Not thread-safe: the caller serializes calls (one engine per stream, under its lock).
// Not yet called from the hooks.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <vector>

#include "driver_api.h"
#include "function_table.h"
#include "graph_chunk.h"
#include "sequence_detector.h"

namespace pygraph {

struct EngineOptions {
  uint32_t min_repeats = 2;
  uint32_t first_chunk = 8;  // launches; later chunks double up to max_chunk
  uint32_t max_chunk = 128;
};

// A launch as the hooks hand it to the engine.
struct EngineLaunch {
  const FunctionInfo* function;
  CUresult (*eager)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                    unsigned, CUstream, void**, void**);  // the driver entry point called
  uint32_t grid[3], block[3], shared_mem;
  CUstream stream;
  void** params;  // kernelParams as the program passed them
};

struct EngineStats {
  uint64_t launches = 0;  // seen
  uint64_t recorded = 0;  // taken into chunks
  uint64_t replayed = 0;  // launched inside graph replays
  uint64_t graphs_built = 0;
  uint64_t replays = 0;
  uint64_t patched_nodes = 0;
  uint64_t flushes = 0;         // ops that submitted recorded work early
  uint64_t mismatches = 0;      // recorded prefixes sent out eagerly
  uint64_t graph_failures = 0;  // build/patch/launch failures (sequence disabled)
};

class GraphEngine {
 public:
  GraphEngine(const DriverApi* api, EngineOptions options = {});
  ~GraphEngine();

  // A kernel launch. Returns what the program must see: CUDA_SUCCESS for a recorded launch,
  // else the result of launching it (eagerly, after whatever had to go first).
  CUresult launch(const EngineLaunch& l);

  // Before any op other than a launch: submits all recorded work. Returns the first error a
  // submission returned, which the caller reports instead of running the op (a launch error the
  // program would have seen at the launch itself; see the design notes).
  CUresult flush();

  // After a boundary op (sync, query, blocking copy, free, ...) ran: ends the current segment.
  void boundary(uint64_t tag);

  const EngineStats& stats() const { return stats_; }

 private:
  struct Pending {
    EngineLaunch launch;
    size_t args_offset;  // into arena_
  };
  struct Plan {  // per sequence id
    std::vector<ChunkGraph> chunks;
    bool disabled = false;
  };

  uint64_t token(const EngineLaunch& l) const;
  size_t chunk_end(size_t start) const;        // exclusive end of the chunk starting at `start`
  bool start_following(uint64_t first_token);  // at a segment start: a found sequence begins?
  void record(const EngineLaunch& l);
  CUresult submit_chunk();  // the recorded launches of the current chunk, as a graph replay
  CUresult launch_eagerly(const Pending& p);
  CUresult drain_eagerly();  // recorded launches, eagerly, in order
  void stop_following();

  const DriverApi* api_;
  EngineOptions options_;
  SequenceDetector detector_;
  EngineStats stats_;
  std::map<uint32_t, Plan> plans_;

  // Recording state: the sequence being followed, the next position in it, and the launches
  // of the current chunk (their argument bytes in arena_).
  std::vector<uint64_t> following_tokens_;
  uint32_t following_id_ = 0;
  size_t position_ = 0;
  size_t chunk_start_ = 0;
  size_t chunk_index_ = 0;  // of the chunk starting at chunk_start_, into Plan::chunks
  bool at_segment_start_ = true;
  std::vector<Pending> pending_;
  std::vector<uint8_t> arena_;
  std::vector<RecordedLaunch> scratch_;
  std::vector<void*> param_ptrs_;
};

}  // namespace pygraph
