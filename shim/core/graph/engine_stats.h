// What graph mode did, counted by the engine and written as JSON at exit (PYGRAPH_STATS). The
// schema is documented in docs/stats-format.md; `pygraph-analyze` and the benchmarks read it.
//
// Invariants once nothing is deferred: launches == replayed + sum(eager), and memops ==
// memops_replayed + sum(memop_eager): every launch and memop either ran inside a graph replay or
// went to the driver eagerly, for exactly one counted reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/driver_call_counts.h"
#include "driver/ops.h"
#include "graph/pause_places.h"

namespace pygraph {

// Why a launch (or an async memset or copy) went to the driver as a plain call.
#define PYGRAPH_EAGER_REASONS(X)                                                                 \
  X(kNotRepeating, "not_repeating")        /* not (yet) part of a sequence seen min_repeats */   \
  X(kUnknownLayout, "unknown_layout")      /* the driver gave no parameter layout */             \
  X(kPackedArgs, "packed_args")            /* `extra` beside kernelParams, or not a buffer */    \
  X(kPackedArgsSize, "packed_args_size")   /* packed block not the kernel's parameter size */    \
  X(kPerThreadStream, "per_thread_stream") /* the per-thread default stream */                   \
  X(kAttributes, "attributes")             /* an attribute no kernel node can carry */           \
  X(kCapture, "program_capture")           /* the program is capturing a graph itself */         \
  X(kMismatch, "mismatch")                 /* recorded, then the sequence went elsewhere */      \
  X(kShortChunk, "short_chunk")            /* a chunk of one launch, a lone place, undeferred */ \
  X(kGraphFailure, "graph_failure")        /* building, patching or launching failed */          \
  X(kLaunchError, "launch_error")          /* the eager launch itself failed */                  \
  X(kMemopOperands, "memop_operands")      /* memory no node can address, or size 0 */           \
  X(kStagingFull, "staging_full")          /* no free pinned staging for a pageable copy */      \
  X(kDecidedEager, "decided_eager")        /* its sequence's graphs measured as not paying */    \
  X(kMeasuring, "measuring")               /* an eager window of its sequence's measurement */

enum class EagerReason : uint8_t {
#define PYGRAPH_EAGER_ENUM(e, name) e,
  PYGRAPH_EAGER_REASONS(PYGRAPH_EAGER_ENUM)
#undef PYGRAPH_EAGER_ENUM
      kCount
};
const char* eager_reason_name(EagerReason r);

// Why recorded work was submitted before its chunk was complete.
enum class FlushCause : uint8_t {
  kOp,             // an op that can observe it (counted per op in flushes_by_op)
  kStreamChange,   // the sequence continues on another stream
  kContextChange,  // another thread with another current context continued it
  kExit,
  kFork,
  kStall,  // the program recorded nothing new for a while (it may wait without a CUDA call)
  kCount
};
const char* flush_cause_name(FlushCause c);

struct EngineStats {
  uint64_t launches = 0;  // seen by the engine
  uint64_t recorded = 0;  // taken into chunks instead of being launched
  uint64_t replayed = 0;  // ran inside graph replays
  uint64_t graphs_built = 0;
  // Kernel nodes of the graphs built whose launches allow programmatic stream serialization,
  // which their nodes drop (launch_attributes.h): where a graph may run them later than the stream.
  uint64_t programmatic_allowed = 0;
  uint64_t graphs_evicted = 0;
  uint64_t graphs_unloaded = 0;       // destroyed at the unload of a module they may launch from
  uint64_t graphs_context_ended = 0;  // destroyed at a context's destruction or reset
  uint64_t graphs_live = 0;
  uint64_t replays = 0;
  uint64_t replays_borrowed = 0;  // of them, of another window's graph (chunk_windows.h)
  // Measured decisions (decision_policy.h): verdicts reached, by kind, and measurements begun.
  uint64_t decided_graph = 0, decided_eager = 0, measurements = 0;
  uint64_t measure_windows = 0;  // measurement windows completed (of either arm)
  // Verdicts taken from the decision cache (not measured), and sequences the kernel patterns
  // keep eager.
  uint64_t decided_cached = 0, decided_config = 0;
  uint64_t patched_nodes = 0;
  uint64_t mismatches = 0;         // recorded prefixes sent out eagerly
  uint64_t variant_switches = 0;   // a sequence with the same prefix took over instead
  uint64_t loops_resumed = 0;      // a loop cut by a boundary went on after it where it stopped
  uint64_t resume_mismatches = 0;  // of those, the wrong guesses (counted in mismatches too)
  uint64_t loops_unrolled_by_arguments = 0;  // loops unrolled anew for their argument period
  uint64_t sequences_followed = 0;           // distinct sequences recorded from (each has one plan)
  uint64_t sequences_known = 0;      // the detector's, now (at most 1024; the oldest go first)
  uint64_t sequences_forgotten = 0;  // plans dropped with their graphs: the detector forgot them
  uint64_t graph_failures = 0;       // sequences disabled
  uint64_t cut_short = 0;            // times a sequence's chunks were cut to one launch too often
  PauseCounts pauses;                // places where the program pauses (pause_places.h)
  uint64_t pause_cuts = 0;           // chunks submitted at one of them before filling
  uint64_t peer_cuts = 0;            // chunks ended by a kernel its peers wait for (chunk_policy.h)
  uint64_t restarted_chunks = 0;     // chunks begun small at a restart place (pause_places.h)
  std::string last_graph_failure;  // what failed the last time (ChunkSubmitter::note_graph_failure)
  uint64_t flushes_by_op[static_cast<int>(Op::kCount)] = {};
  // Queries of deferred work answered "not ready" without submitting it
  // (GraphEngine::answers_query): flushes that did not happen.
  uint64_t queries_answered = 0;
  uint64_t flushes_by_cause[static_cast<int>(FlushCause::kCount)] = {};
  uint64_t eager[static_cast<int>(EagerReason::kCount)] = {};

  // Async memsets and 1-D copies (memop_call.h), counted apart from launches.
  uint64_t memops = 0;
  uint64_t memops_recorded = 0;
  uint64_t memops_replayed = 0;  // ran as memset or memcpy nodes of graph replays
  uint64_t staged_bytes = 0;     // pageable copy sources snapshotted into pinned staging
  uint64_t kind_queries = 0;     // memory types asked of the driver (memory_kinds.h)
  // Several streams in one graph (stream_fork.h): event records taken into chunks (event record
  // nodes), waits on them taken as edges, event records and waits at followed positions issued
  // as they came, and side streams forked and joined at graph launches.
  uint64_t events_recorded = 0, event_waits = 0, events_eager = 0, side_streams = 0;
  uint64_t legacy_joins = 0;  // chunks begun on another stream that the legacy stream joined
  uint64_t rerecords = 0;     // of events_recorded, those of an event recorded in the chunk before
  uint64_t memop_eager[static_cast<int>(EagerReason::kCount)] = {};
  // The program's own graph launches (program_graphs.h): taken into chunks as child graphs, of
  // them run inside replays or issued eagerly with their chunk, and launched as the program
  // made them (not taken). Executable graphs the program instantiated, and of them those whose
  // launches may be taken. The kernel, copy and memset nodes of those replayed inside ours (each
  // graph at least 1, as it weighs in a chunk): what a replay of ours runs beyond its own
  // launches (reduce-overhead training's two graphs a step).
  uint64_t program_graphs = 0, program_graphs_recorded = 0, program_graphs_replayed = 0;
  uint64_t program_graph_nodes_replayed = 0;
  uint64_t program_graphs_eager = 0, program_graphs_instantiated = 0, program_graphs_takeable = 0;
  const char* program_graph_refused = nullptr;  // why the last one not taken was not (static)
  // A loop went on past the end of a segment made of it, followed from a segment's start, where
  // the program went on without a boundary (loop_resume.h, loop_after_segment).
  uint64_t loops_past_segments = 0;
  // Segments' heads that went out ahead of the program's graph (early_head, chunk_policy.h).
  // These two last: a counter added among the launch path's shifts them (and costs, session 49).
  uint64_t early_heads = 0;

  uint64_t eager_total() const;
  uint64_t memop_eager_total() const;
  uint64_t flushes_total() const;
};

// Launches the process made through each door, counted by the hooks (all modes).
struct DoorCounts {
  uint64_t exported = 0, dlsym = 0, procaddr = 0;
};

// One followed sequence's decision, for the stats (GraphEngine::sequence_stats).
struct SequenceStat {
  std::string signature;     // "" until its nodes were all seen recorded (signature.h)
  std::string first_kernel;  // its first kernel's name, known with the signature ("": none)
  std::string verdict;       // "graph", "eager" or "measuring"
  std::string source;        // "measured", "cached", "config", "unmeasured", "disabled"
  std::string why;           // SequencePolicy::why()
  uint64_t launches = 0;     // launches and memops of its occurrences, as started
  double gain_percent = 0, eager_us = 0, graph_us = 0;
  uint64_t replays = 0;  // graph replays of its chunks
  double launches_per_replay = 0;
  // Its pause places (pause_places.h): "learning", "weighing", "settled" (learned and weighed,
  // or none to learn); those that cut, those dropped once weighed, and its split (0: none).
  std::string pause_state;
  uint64_t pauses_cutting = 0, pauses_dropped = 0, split = 0;
  // How its weighing went: rounds whole, spoiled by an untimed chunk, left before their end;
  // occurrences that began no round.
  PausePlaces::RoundCounts rounds;
  // Where its chunks are cut before they are full, and the chunks of its whole rounds, oldest
  // first (PausePlaces::cut_places, whole_rounds).
  std::vector<uint32_t> cuts;
  std::vector<uint32_t> restarts;                   // the cut places where a chunk begins small
  std::vector<PausePlaces::Restart> restart_sizes;  // how, in the same order
  std::vector<std::vector<PausePlaces::Timed>> whole_rounds;
};

// The JSON document PYGRAPH_STATS receives (docs/stats-format.md).
// `driver_calls`: pygraph's own driver calls (driver_call_counts.h), when counted.
std::string stats_json(const EngineStats& s, const DoorCounts& doors, const char* mode,
                       const std::vector<SequenceStat>& sequences = {},
                       const std::vector<DriverCallCount>& driver_calls = {});

}  // namespace pygraph
