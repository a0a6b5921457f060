// The graph-mode engine: sees every kernel launch, every async memset and 1-D copy, and every
// other op the program makes, finds the sequences that repeat (SequenceDetector: segments
// between boundaries, periods in loops without them) and, from a sequence's (min_repeats+1)-th
// occurrence on, records its launches and memops instead of issuing them. Recorded work goes to
// the GPU as chunks: a chunk is submitted as a patched graph replay (ChunkGraph) as soon as it is
// complete, so the GPU gets work early, or earlier when an op needs it (flush_rules.h).
//
// Correctness rules (docs/design-graph-mode.md):
//  - recorded work all sits on one stream in one context, the latest work the program issued
//    there; the sequence continuing on another stream submits the current chunk first;
//  - before every other op, the work that op can observe is submitted, in order (before_op);
//  - work that is not the sequence's next sends the recorded prefix out eagerly, in its original
//    order, then goes out itself;
//  - a copy from pageable memory reads a snapshot taken when the program made it (StagingRing),
//    as the driver's own copy would;
//  - if building, patching or launching a graph fails, the chunk's work goes out eagerly in
//    order and the sequence is never graphed again: the program sees no error it would not have
//    seen without pygraph;
//  - while the program captures a graph itself, everything passes through untouched.
// The engine coordinates; what it asks of units of their own: the chunk policy (chunk_policy.h),
// the resume of loops (loop_resume.h), the places where the program pauses (pause_places.h),
// the submission of a chunk as a graph replay or eagerly
// (chunk_submit.h), its own events (own_events.h), the measuring turn (measure_turn.h).
// Not thread-safe: the hooks serialize calls under one lock.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "decisions/decision_policy.h"
#include "decisions/decision_store.h"
#include "decisions/measure_turn.h"
#include "driver/driver_api.h"
#include "driver/function_table.h"
#include "driver/memop_call.h"
#include "driver/memory_kinds.h"
#include "driver/module_unload.h"
#include "driver/ops.h"
#include "graph/arg_period.h"
#include "graph/chunk_policy.h"
#include "graph/chunk_submit.h"
#include "graph/chunk_windows.h"
#include "graph/context_scope.h"
#include "graph/engine_observer.h"
#include "graph/engine_stats.h"
#include "graph/gpu_timer.h"
#include "graph/graph_chunk.h"
#include "graph/loop_resume.h"
#include "graph/own_events.h"
#include "graph/pause_places.h"
#include "graph/pending_work.h"
#include "graph/program_calls.h"
#include "graph/program_graphs.h"
#include "graph/sequence_detector.h"
#include "graph/staging_ring.h"
#include "graph/stream_fork.h"

namespace pygraph {

struct EngineOptions {
  uint32_t min_repeats = 2;
  // Launches recorded before an occurrence's first graph goes to the GPU; later chunks double up
  // to max_chunk. Small, so the GPU starts early in each iteration (measured with torch.profiler
  // on the H200: a first chunk of 8 left the GPU idle up to 6x longer at step start than no shim,
  // one of 2 about as long as no shim); large later chunks keep graph launches few.
  uint32_t first_chunk = 2;
  uint32_t max_chunk = 128;
  uint32_t chunk_growth = 2;      // each next chunk this many times the one before (chunk_policy.h)
  uint32_t max_graphs = 1024;     // instantiated chunk graphs kept; least recently used go first
  uint32_t max_sequences = 1024;  // the detector's table (its least recently seen go first)
  // Loops without syncs are followed as a power-of-two multiple of their period of at least
  // this many launches (period.h): a graph of a 2-launch period would replace only 2 launches.
  uint32_t min_period = 8;
  // Pinned memory for snapshots of deferred copies from pageable memory (StagingRing); a copy
  // larger than a quarter of it goes out eagerly.
  size_t staging_bytes = 4 << 20;
  // Grid and dynamic shared memory: patched like arguments (true), or part of the token, so that
  // a launch with another grid is another sequence (false). Measured on GPT-2 decode, whose
  // attention grids grow with its KV cache (docs/design-graph-mode.md).
  bool patch_grid = true;
  // A chunk of one kernel launch is replayed as a graph of one node instead of going out as it
  // came (chunk_policy.h, worth_a_graph).
  bool one_launch_graphs = false;
  // At a segment's start, the work before the program's own graph launch goes out at once, as a
  // graph of its own (of one node too), instead of waiting in the chunk for that launch
  // (chunk_policy.h, early heads).
  bool early_head = true;
  // Several streams in one graph (stream_fork.h): event records and waits become nodes and
  // edges. Off by default until checked on the GPU (PYGRAPH_STREAMS=1): then the hooks pass
  // event records and waits through as ops, which submit the chunk they order.
  bool multi_stream = false;
  // The program's own graph launches join chunks as child graphs (program_graphs.h); false:
  // each one submits the chunk of its stream. Off for engines the tests build unless asked.
  bool program_graphs = false;
  // A graph of the program's is taken from this launch of it on (program_graphs.h).
  uint32_t program_graph_launches = 16;
  // Whether graphs pay, measured per sequence (decision_policy.h). Off by default until its
  // figures are measured on the GPU: every sequence is graphed, unmeasured
  // (PYGRAPH_MEASURE_WINDOWS=0; the hooks turn it on for a positive value).
  bool measure = false;
  PolicyOptions policy;
  // Decisions of earlier runs (decision_store.h), consulted and filled while measuring; null:
  // none. Not owned.
  DecisionStore* store = nullptr;
  // Kernel name patterns (fnmatch): a sequence holding a kernel no allow pattern matches, or one
  // a deny pattern matches, runs eagerly (a "config" decision), whether measuring or not.
  std::vector<std::string> allow_kernels{"*"};
  std::vector<std::string> deny_kernels;
  // A chunk goes out at a place where the program paused this long on the host in each of a
  // sequence's first recorded occurrences (pause_places.h); 0: never (engines the tests build,
  // unless asked: their clock is the real one).
  uint64_t pause_ns = 0;
  // A learned pause cuts only where the GPU time of the work waiting there, measured with timing
  // events around every chunk of a few occurrences, reaches this (pause_places.h); 0: every
  // pause cuts.
  uint64_t pause_gpu_ns = 0;
  // Nor, in a segment, where the GPU idles this many times that work's time later in the
  // occurrence, as measured with the same events (pause_places.h); 0: idle time is not weighed.
  uint32_t pause_idle_ratio = 0;
  // A segment's last place is a pause where the host's gap there is this long, and cuts where
  // this much GPU work waits there (pause_places.h, the tail); 0: no tail.
  uint64_t tail_pause_ns = 0;
  // A segment's chunk that the GPU drained for while it was recorded begins small again
  // (pause_places.h, restarts).
  bool restart_chunks = false;
  // A query of deferred work is answered "not ready" without submitting it (answers_query).
  bool answer_queries = false;
  // A monotonic clock in ns, read once per occurrence of a followed sequence, and per recorded
  // entry while a sequence's pauses are learned, and while they are weighed at each chunk's
  // first entry, at its submission and around its timing (tests inject one; none:
  // CLOCK_MONOTONIC).
  uint64_t (*clock_ns)() = nullptr;
};

// Launch attributes a recorded launch may carry; launches with more go out eagerly.
constexpr uint32_t kMaxRecordedAttrs = 8;

class GraphEngine {
 public:
  GraphEngine(const DriverApi* api, EngineOptions options = {});
  ~GraphEngine();

  // A kernel launch. Returns what the program must see: CUDA_SUCCESS for a recorded launch,
  // else the result of launching it (eagerly, after whatever had to go first).
  CUresult launch(const EngineLaunch& l);
  // An async memset or 1-D copy (memop_call.h): recorded as a node like a launch, or issued.
  CUresult memop(const MemopCall& m);
  // An event record or a wait on an event: inside a followed sequence it becomes part of the
  // chunk (an event record node; a wait on an event recorded in the chunk, an edge), else it is
  // issued after what it orders or observes.
  CUresult event_op(const EventCall& e);
  bool multi_stream() const { return options_.multi_stream; }  // event ops go to event_op
  // Program graph launches and instantiations go to the two calls below.
  bool program_graphs() const { return options_.program_graphs; }
  // The program launches its own executable graph. Taken into the chunk as a child graph node
  // (program_graphs.h) where it may be: returns true with what the program must see in
  // `result`. Else false, having done nothing but what the launch itself needs (the exec's
  // earlier copies ordered before it): the caller handles it as any other op (before_op, the
  // call, after_op).
  bool program_graph_launch(const ProgramGraphCall& g, CUresult* result);
  // The program instantiated `graph` as `exec` with these flags, in the current context.
  void program_graph_instantiated(CUgraphExec exec, CUgraph graph, unsigned long long flags);
  // The program created `event` with CU_EVENT_INTERPROCESS: another process may wait for it or
  // query it through no door of ours, so its records are issued where the program makes them,
  // after the work they follow (never held in a chunk).
  void interprocess_event(CUevent event);

  // Before an op other than a launch, on `stream` (null when it has none): submits the
  // recorded work the op can observe (flush_rules.h). Returns an error a submission met, for the
  // caller to report after running the op (the launch it belongs to had returned success).
  // `handle`: the module or library an unload unloads (its graphs are forgotten), else unused.
  CUresult before_op(Op op, CUstream stream, bool per_thread, uint64_t handle = 0);
  // A query (cuEventQuery of `handle`, cuStreamQuery of `stream`) of work the chunk holds: the
  // event's latest record, or work of that stream. That work has not reached the GPU, so it has
  // not completed: "not ready" is the true answer, given here (returns true: the caller returns
  // CUDA_ERROR_NOT_READY without calling the driver) and the chunk goes on. PyTorch's caching
  // allocator asks so at each allocation after a block was used on another stream
  // (record_stream): submitting there cut every step of the suite's two-streams loop into
  // a graph of its own. Not where the program waits for the answer: asked again about the same
  // with nothing recorded since (a loop on the query), or the 8th query in a row with nothing
  // recorded between (a loop over several), or after a submission's error that before_op must
  // report; then false, and the caller goes on with before_op, which submits the work, and the
  // driver answers.
  bool answers_query(Op op, CUstream stream, bool per_thread, uint64_t handle);
  // After the op ran: capture bookkeeping, boundaries end the current segment, and after an
  // allocation, free or context end what an address is may have changed (memory_kinds.h).
  void after_op(Op op, CUstream stream, bool per_thread, CUresult result);

  // Submits everything recorded (exit, fork, tests).
  CUresult flush_all(FlushCause cause);

  // For a periodic check from another thread (under the same lock as every other call): submits
  // what is recorded if nothing was recorded since the previous check, which left `mark`. A
  // program may wait for GPU results without any CUDA call (spinning on mapped host memory a
  // kernel writes); its recorded work must still reach the GPU. Returns whether anything was
  // recorded and not yet submitted at the check (the checks may then come less often).
  bool flush_if_stalled(uint64_t* mark);
  // Launches, memops and program graphs taken into chunks so far: whether the program recorded
  // anything between two moments.
  uint64_t recorded_entries() const {
    return stats_.recorded + stats_.memops_recorded + stats_.program_graphs_recorded;
  }

  // Destroys every graph (process exit: the driver may be gone, so only while it is not).
  void destroy_graphs();

  bool capturing() const { return !capturing_.empty(); }
  bool idle() const { return pending_.empty(); }
  const EngineStats& stats() const { return stats_; }
  // Plans kept (one per followed sequence the detector still knows), and how many sequences are
  // listed as having built graphs with event record nodes (park_destroyed walks those).
  size_t plans() const { return plans_.size(); }
  size_t event_graph_plans() const { return submitter_.event_graph_sequences().size(); }
  // Each followed sequence's decision, most launches first, at most `max` (stats' "sequences").
  std::vector<SequenceStat> sequence_stats(size_t max) const;
  // Told what the engine does where it is slow anyway (engine_observer.h); null: nobody.
  void set_observer(EngineObserver* observer) {
    observer_ = observer;
    submitter_.set_observer(observer);
  }

 private:
  // A launch or a memop, on its way through the engine.
  struct Work {
    const EngineLaunch* launch = nullptr;
    const MemopCall* memop = nullptr;
    const EventCall* event = nullptr;
    const ProgramGraphCall* graph = nullptr;
    MemKind src = MemKind::kOther;  // copies: the source's memory
    // Launches with packed arguments (`extra`): the block, and whether the node takes it through
    // `extra` (layout unknown, or a block smaller than the parameters) rather than as the
    // kernel's parameters (a known layout's block of exactly their size).
    const void* packed = nullptr;
    uint32_t packed_size = 0;
    bool packed_node = false;
    Op op() const {
      return launch ? launch->op : memop ? memop->op : event ? event->op : Op::GraphLaunch;
    }
    CUstream stream() const {
      return launch  ? launch->stream
             : memop ? memop->stream
             : event ? event->stream
                     : graph->stream;
    }
    bool per_thread() const {
      return launch  ? launch->per_thread
             : memop ? memop->per_thread
             : event ? event->per_thread
                     : graph->per_thread;
    }
  };
  // What a sequence's signature and the kernel patterns need of one node.
  struct NodeName {
    bool known = false;
    bool memop = false;
    uint16_t op = 0;
    uint32_t block[3] = {};
    uint64_t attrs = 0;  // node attributes, as in the token
    uint32_t element_size = 0, src_kind = 0;
    uint64_t stream = 0;  // normalized
    std::string kernel;
  };
  struct Plan {           // per sequence id
    ChunkWindows chunks;  // a graph per window, or another window's (chunk_windows.h)
    bool disabled = false;
    uint64_t last_used = 0;
    SequencePolicy policy;
    // Replay figures since they were last told to the policy.
    uint32_t replays = 0;
    uint64_t replayed_nodes = 0, patched = 0;
    void restart_replay_figures() {
      replays = 0;
      replayed_nodes = patched = 0;
    }
    // Its name across runs (signature.h), put together from the nodes its graph-arm occurrences
    // record, by position in the sequence (name_nodes: once per chunk until all are known).
    std::vector<NodeName> names;  // freed once the signature is known
    size_t names_left = 0;
    uint32_t length = 0;  // nodes in the sequence (a loop's period)
    bool periodic = false;
    std::string signature;      // "" until known
    std::string first_kernel;   // its first kernel's name, with the signature ("": no kernel)
    bool config_eager = false;  // a kernel's name is denied (or not allowed): always eager
    uint64_t followed = 0;      // launches and memops of its occurrences, as started
    uint64_t graph_replays = 0, graph_launches = 0;  // its replays, and the launches in them
    uint64_t occurrences = 0;                        // started (a loop: each unrolled period)
    uint64_t graph_arms = 0;                         // of them, recorded as graphs (no eager arm)
    // Chunks cut to one launch (a boundary right after it: the program's own graph launch):
    // deferring such a launch only delays it (chunk_policy.h).
    ShortChunks short_chunks;
    // Entries before its first program graph, where that graph came within an occurrence's
    // first chunk (early_head; 0: none): the chunk that ends there is its head.
    uint32_t head = 0;
    // Places where a chunk starting there is cut short every time: issued as they come.
    LoneStarts lone_starts;
    // Places where the program pauses on the host: a chunk goes out there (pause_places.h).
    PausePlaces pauses;
    // A loop's argument period, learned from its first chunks: the unroll is a multiple of it
    // (arg_period.h).
    ArgPeriod args;
    uint32_t arg_period = 1;
    bool unroll_anew = false;  // learned with another unroll than the one followed
    // It held the turn to measure and completed no window: no turn before this many starts
    // (measure_turn.h).
    uint64_t turn_blocked_until = 0;
    uint64_t turn_last_start = 0;  // the turn's start count at its last start (why())
  };

  EagerReason unrecordable(const EngineLaunch& l, Work* w) const;  // kCount when recordable
  EagerReason packed_args(const EngineLaunch& l, Work* w) const;   // `extra`: what a node takes
  EagerReason unrecordable(const MemopCall& m, MemKind* src) const;
  // The hash of what a kernel node carries beyond its arguments (its node attributes, and its
  // grid where that is not patched). Inline: the usual launch, with no attribute and the grid
  // patched, has none, and is on the launch path.
  uint64_t node_attrs(const EngineLaunch& l, const CUlaunchAttribute* attrs) const {
    return l.attr_count == 0 && options_.patch_grid ? 0 : hash_node_attrs(l, attrs);
  }
  uint64_t hash_node_attrs(const EngineLaunch& l, const CUlaunchAttribute* attrs) const;
  uint64_t token(const EngineLaunch& l) const;
  uint64_t token(const MemopCall& m, MemKind src) const;
  uint64_t token(const EventCall& e) const;
  uint64_t token(const ProgramGraphCall& g) const;
  // The program's graph `e` is never taken again, for this reason (a static string).
  void refuse_program_graph(ProgramGraphs::Entry& e, const char* why);
  // Whether a launch of the program's `exec` runs kernels, copies and sets only (it was
  // instantiated where graph mode saw it: program_graphs on): it never waits for the host.
  bool plain_program_graph(uint64_t exec);
  // Whether the current chunk holds a launch of the program's `exec`.
  bool chunk_holds_graph(uint64_t exec) const;
  // Whether an op on normalized stream `s` orders with or observes work of the chunk.
  bool chunk_sees(uint64_t s) const;
  // Whether an event op at a followed position can go into the chunk.
  bool event_recordable(const EventCall& e, uint64_t stream, bool same_thread) const;
  // An event op at a followed position that stays out of the chunk: issued where it is.
  CUresult issue_event_in_place(const Work& w, uint64_t stream);
  // An engine event of the chunk's context that no pending node names: the stand-in for one
  // destroyed event in the chunk, or for an event's records before its latest (own_events.h).
  CUevent spare_event();
  // The chunk's records of `event` and the waits on them name a spare instead, and the fork
  // forgets the event: a destroyed event, or one about to be recorded again in the chunk.
  // False: no spare (nothing changed).
  bool spare_for(uint64_t event);
  // Before a recordable event op goes into the chunk: a record of an event the chunk records
  // already has its earlier record take a spare (spare_for). False: no spare, so it cannot go in.
  bool spare_earlier_record(const EventCall& e);
  // Whether a stream the chunk does not hold may join it as a side stream (from the chunk's
  // thread).
  bool may_join(uint64_t stream, bool same_thread) const;
  CUresult admit(Work& w);  // a launch or memop: capture passthrough, refusal, or take()
  CUresult refuse(const Work& w, EagerReason reason);  // flush, end the segment, issue it
  CUresult take(const Work& w, uint64_t token);        // follow, record or issue
  // A found sequence this launch begins: a segment at its start, or the periodic sequence
  // `periodic_id` at `phase` (the launch's index in its canonical rotation).
  bool start_following(uint64_t token, bool periodic_only, uint32_t periodic_id, uint32_t phase);
  // The launch after completed_segment_'s end, before any boundary: the loop the segment is made
  // of goes on with it, if it is that loop's next launch (loop_resume.h, loop_after_segment).
  bool start_loop_after_segment(uint64_t token);
  const Sequence* candidate(uint64_t token, bool periodic_only, uint32_t periodic_id,
                            uint32_t phase) const;
  void follow(const Sequence& s, uint32_t phase);
  // The followed loop's period (following_tokens_' first plan_->length tokens) repeated as
  // period_unroll says for its argument period: at follow, and at a wrap once that is learned.
  void unroll_period();
  // A submitted chunk of a loop whose argument period is being learned: its launches' hashes.
  void learn_arg_period();
  // At the end of the followed sequence: a segment's occurrence is complete, a loop goes on.
  void end_of_occurrence();
  // At the start of an occurrence: the plan's policy says whether it runs as graphs or eagerly
  // (following goes on either way, so that the next start is seen).
  void start_occurrence();
  void choose_arm();  // start_occurrence: an eager arm, or graphs (measured decisions)
  // The followed sequence went elsewhere: its running iteration is no sample.
  void interrupt_occurrence();
  // A sequence followed for the first time: counted, and given its policy.
  void new_plan(Plan* plan, const Sequence& s);
  // Plans of sequences the detector dropped since the last look go, with their graphs: their
  // ids never come again (a program that makes new sequences for good would keep every plan).
  void forget_plans();
  // The current chunk's nodes, from position `start`, named in the plan; the last one missing
  // completes its signature (name_plan).
  void name_nodes(Plan& plan);
  // Its signature is known: kernel patterns, then the store, may decide it at once.
  void name_plan(Plan& plan);
  bool kernel_allowed(const std::string& name) const;
  void record_decision(const Plan& plan);  // a measured verdict, into the store
  // A measuring plan's why() as the turn sees it: waiting for it, or set aside (measure_turn.h).
  std::string turn_why(const Plan& plan, const std::string& policy_why) const;
  bool switch_variant(uint64_t token);  // another found sequence with the same prefix goes on
  bool record(const Work& w);           // false: a snapshot found no staging space
  void count_eager(bool memop, EagerReason reason);
  void count_eager(const Work& w, EagerReason reason);  // a program graph counted apart
  CUresult flush(FlushCause cause, Op op);              // counted, then submit()
  // The current chunk, as a graph replay (eagerly if it cannot be one): which one, and what it
  // means for the sequence (chunk_submit.h sends it). `at_peers`: a kernel its peers wait for
  // ended it (chunk_policy.h), which no short chunk counts against the sequence.
  CUresult submit(bool at_peers = false);
  ChunkWork chunk_work() const;  // the current chunk, as the submitter reads it
  // GPU times of replays that weigh pauses (gpu_timer.h), read where they completed: each to its
  // sequence's pauses (pause_places.h).
  void poll_timer();
  void weighed(const GpuTimer::Tag& tag, uint64_t gpu_ns, uint64_t idle_ns, uint64_t host_ns);
  void clear_chunk();  // it went out
  // A graph is to be built and max_graphs are live: the least recently replayed other
  // sequence's graphs go, else one of the followed sequence's (never `keep`'s).
  void make_room(const Chunk* keep);
  // A module or library is unloaded: graphs that may launch its kernels go, and their sequences
  // are not followed again (module_unload.h).
  void forget_graphs(const ModuleUnload& unload);
  // A context ends: every graph goes (its context may be that one); sequences stay followable.
  void drop_all_graphs();
  CUresult issue(const Work& w);  // the program's call, made now
  // The program's call at a lone place (chunk_policy.h), made now; in a round of its sequence's
  // weighing, timed there as a chunk of its own.
  CUresult issue_lone(const Work& w);
  // Recorded work, eagerly, in order; with a `tag`, timed as a chunk of a round (*timed).
  CUresult drain_eagerly(EagerReason reason, const GpuTimer::Tag* tag = nullptr,
                         bool* timed = nullptr);
  // A chunk of a round of its sequence's weighing went out on `stream` (normalized), timed or
  // not (pause_places.h).
  void took_time(const GpuTimer::Tag& tag, bool timed, uint64_t stream);
  // The tag of a chunk from `start` to `end` of round `round` on `stream` (normalized): chained
  // where it follows the chunk timed before at once, on the same stream.
  GpuTimer::Tag round_tag(uint32_t round, size_t start, size_t end, uint64_t stream) const;
  void stop_following();
  // `op` ended it (a boundary, or work no graph can hold): submits the chunk, returns its error.
  CUresult end_segment(Op op);
  // Destroys a plan's chunk graphs; returns how many were built (no longer counted live).
  uint64_t destroy_chunks(Plan& plan);
  // Before the program destroys an event: record nodes holding it hold an engine event instead.
  void park_destroyed(uint64_t handle);
  bool non_blocking(uint64_t stream) const;
  void leads_from_legacy(uint64_t stream, CUstream raw);
  // A submission's error no call can return now: the next op that reaches before_op reports it.
  void defer_error(CUresult r);
  CUcontext current_context() const { return pygraph::current_context(*api_); }
  uint64_t now_ns() const;  // options_.clock_ns (the monotonic clock where none was given)

  const DriverApi* api_;
  EngineOptions options_;
  SequenceDetector detector_;
  EngineStats stats_;
  EngineObserver* observer_ = nullptr;
  std::unordered_map<uint32_t, Plan> plans_;
  uint64_t detector_evictions_ = 0;         // as forget_plans last saw them
  uint64_t clock_ = 0;                      // submissions, for least-recently-used eviction
  CUresult deferred_error_ = CUDA_SUCCESS;  // see defer_error
  // The last query answered "not ready" (answers_query): what it asked about (its op's handle or
  // stream, with the op), the entries recorded by then, and how many queries in a row came with
  // nothing recorded between them.
  static constexpr uint32_t kQueryStreak = 8;
  uint64_t query_asked_ = 0, query_recorded_ = ~0ull;
  uint32_t query_streak_ = 0;
  Op query_op_ = Op::kCount;
  std::vector<uint64_t> capturing_;  // streams the program is capturing

  // The sequence being followed, the next position in it, and the current chunk: its
  // stream, context and the thread that last added to it (its start and size: chunk_).
  uint32_t following_id_ = 0;
  bool following_periodic_ = false;
  mutable std::vector<std::pair<uint64_t, bool>> stream_flags_;  // non_blocking(), at most 64
  bool eager_arm_ = false;  // this occurrence runs eagerly (measuring, or decided so)
  EagerReason eager_arm_reason_ = EagerReason::kMeasuring;  // what its launches count as
  Plan* plan_ = nullptr;
  std::vector<uint64_t> following_tokens_;
  size_t position_ = 0;
  uint64_t chunk_stream_ = 0;            // normalized
  CUstream chunk_raw_stream_ = nullptr;  // as the program passed it: where the replay goes
  CUcontext chunk_context_ = nullptr;
  const void* chunk_thread_ = nullptr;
  // When the chunk's first entry was recorded, while its sequence is weighed (0: not read): its
  // recording time rides with its timing (pause_places.h, restarts).
  uint64_t chunk_begun_ns_ = 0;
  bool at_segment_start_ = true;
  uint32_t expected_period_ = 0;  // a periodic sequence that may start at the next launch
  uint32_t expected_phase_ = 0;   // at this index of its canonical rotation
  // A segment followed to its end by the last launch: if the next one comes before a boundary
  // (a boundary's segment start takes precedence in take()), the segment was shorter than the
  // program's, and the loop it is made of goes on from there (loop_after_segment). Cleared by
  // that next launch. 0: none.
  uint32_t completed_segment_ = 0;
  // The loop that stopped last (stop_following, end_segment): the next segment's first launch
  // may take it up where it stopped (take()).
  LoopResume resume_;

  // The current chunk's work, its argument bytes and attributes. Capacity is kept across
  // chunks: no allocation in steady state.
  PendingList pending_;
  StreamFork fork_;  // the chunk's streams and the edges between them
  // Whether a stream was ever given something that may wait for the host (a host function, a
  // memory wait, an external semaphore, the program's graph): then no stream joins a chunk
  // (may_join). Never cleared yet.
  bool host_waits_ = false;
  uint64_t tick_ = 0;  // work seen (launches, memops, event ops): positions of event records
  std::unordered_map<uint64_t, uint64_t> event_tick_;  // event -> tick_ of its latest record
  // Events created interprocess and not destroyed (interprocess_event): few, if any.
  std::vector<uint64_t> interprocess_events_;
  // Argument bytes: arena_used_ of them are the chunk's. The vector's size only grows (a
  // resize zero-fills, and costs a call, on every launch otherwise).
  std::vector<uint8_t> arena_;
  size_t arena_used_ = 0;
  std::vector<CUlaunchAttribute> attrs_;
  StagingRing staging_;
  OwnEvents own_events_;
  ProgramGraphs program_graphs_;  // the program's executable graphs (program_graphs.h)
  ChunkSubmitter submitter_;  // sends the current chunk out (after stats_, staging_, own_events_)
  GpuTimer timer_;            // the GPU time of replays that weigh a sequence's pauses
  GpuTimer::Tag last_timed_;  // the chunk before, if timed (sequence 0: not), and its stream
  uint64_t last_timed_stream_ = 0;
  mutable MemoryKinds kinds_;  // a cache of the driver's answers: asked from const checks
  ChunkCursor chunk_;          // the current chunk's start and size (chunk_policy.h)
  MeasureTurn<Plan> turn_;     // which plan may measure now (measure_turn.h)
};

}  // namespace pygraph
