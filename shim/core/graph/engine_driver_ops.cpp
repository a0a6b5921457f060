// GraphEngine and the program's driver calls other than launches, memops and event records
// and waits: before each, what its flush rule (flush_rules.h) asks of the recorded work; after
// it, what its result changes (contexts, memory kinds, destroyed events). Called per op, never
// per launch: apart from graph_engine.cpp, which holds the launch path.
#include <span>

#include "graph/context_scope.h"
#include "graph/flush_rules.h"
#include "graph/graph_engine.h"
#include "graph/thread_id.h"

namespace pygraph {
namespace {

// Ops after which an address may be another kind of memory (memory_kinds.h): allocations,
// mappings and registrations, frees, and a context's end, which takes its pinned and registered
// memory along.
bool changes_memory(Op op) {
  const OpClass cls = op_info(op).cls;
  return cls == OpClass::kAlloc || cls == OpClass::kFree ||
         flush_rule(op) == FlushRule::kContextEnd;
}

}  // namespace

CUresult GraphEngine::before_op(Op op, CUstream stream, bool per_thread, uint64_t handle) {
  CUresult r = CUDA_SUCCESS;
  // Forgotten before as well as after (after_op): a free's memory may be another owner's
  // pageable memory as soon as it returns, and an answer may be asked in between.
  if (changes_memory(op)) kinds_.changed();
  switch (flush_rule(op)) {
    case FlushRule::kNone:
      break;
    case FlushRule::kStream: {
      const uint64_t s = normalized_stream(stream, per_thread);
      // The program's graph that is not plain (or not learnt) may wait for or record, in an
      // event node, an event the chunk records, whatever stream it runs on: everything goes
      // first. It may also wait for the host.
      const bool unplain_graph = op == Op::GraphLaunch && !plain_program_graph(handle);
      const bool names_event = op != Op::GraphLaunch && handle && fork_.holds_event(handle);
      if (chunk_sees(s) || names_event || unplain_graph) r = flush(FlushCause::kOp, op);
      host_waits_ |= op == Op::LaunchHostFunc || op == Op::StreamAddCallback ||
                     op == Op::WaitExternalSemaphoresAsync || unplain_graph;
      if (op == Op::StreamDestroy) {
        std::erase_if(stream_flags_, [s](const auto& f) { return f.first == s; });
      }
      break;
    }
    case FlushRule::kEvent:
      if (handle && fork_.holds_event(handle)) {
        if (op == Op::EventDestroy) {
          // Its records and the waits on them in the chunk name an engine event of their own
          // instead: a destroyed handle cannot be recorded or waited for when the chunk goes out
          // eagerly (a wait on it would order nothing), and a new event given the same handle
          // must not be recorded by the graph later.
          if (!spare_for(handle)) r = flush(FlushCause::kOp, op);
        } else {
          r = flush(FlushCause::kOp, op);  // a query or sync of an event the chunk records
        }
      }
      if (op == Op::EventDestroy && handle && !submitter_.event_graph_sequences().empty()) {
        park_destroyed(handle);
      }
      if (op == Op::EventDestroy) {
        event_tick_.erase(handle);
        std::erase(interprocess_events_, handle);
      }
      break;
    case FlushRule::kAll:
      r = flush(FlushCause::kOp, op);
      host_waits_ |= op == Op::StreamWaitValue32 || op == Op::StreamWaitValue64 ||
                     op == Op::StreamBatchMemOp || op == Op::WaitExternalSemaphoresAsync;
      break;
    case FlushRule::kProgramGraph:
      if (is_instantiate(op)) break;  // learnt after it (program_graph_instantiated)
      if (ProgramGraphs::Entry* e = program_graphs_.find(reinterpret_cast<CUgraphExec>(handle))) {
        // A deferred launch of it runs what the graph holds now, and a destroyed graph cannot
        // be launched: what the chunk holds of it goes first.
        if (chunk_holds_graph(handle)) r = flush(FlushCause::kOp, op);
        if (op == Op::GraphExecDestroy) {
          program_graphs_.forget(reinterpret_cast<CUgraphExec>(handle));
        } else {
          refuse_program_graph(*e, "changed by the program");
        }
      }
      break;
    case FlushRule::kContextEnd:
      r = flush(FlushCause::kOp, op);
      stop_following();
      program_graphs_.forget_all();
      drop_all_graphs();
      staging_.context_ends(handle);
      own_events_.forget();  // the ending context's go with it (another context's leak: a few)
      interprocess_events_.clear();  // its events went with it (at worst, another's stay eager)
      timer_.forget(
          [this](const GpuTimer::Tag& t, uint64_t gpu_ns, uint64_t idle_ns, uint64_t host_ns) {
            weighed(t, gpu_ns, idle_ns, host_ns);  // lost: kLost
          });
      last_timed_ = GpuTimer::Tag{};
      break;
    case FlushRule::kContext:
      break;  // after_op, once the op made its context current
    case FlushRule::kCapture:
      r = end_segment(op);
      break;
    case FlushRule::kUnload:
      // Deferred work may launch the module's kernels: it goes first. Then only the graphs that
      // may hold them go (a later module may reuse their handles); everything else goes on.
      r = flush(FlushCause::kOp, op);
      stop_following();
      forget_graphs(describe_unload(*api_, op, handle));
      break;
  }
  if (deferred_error_ != CUDA_SUCCESS) {  // an earlier submission's error comes first
    r = deferred_error_;
    deferred_error_ = CUDA_SUCCESS;
  }
  return r;
}

bool GraphEngine::answers_query(Op op, CUstream stream, bool per_thread, uint64_t handle) {
  if (!options_.answer_queries || pending_.empty() || deferred_error_ != CUDA_SUCCESS ||
      capturing()) {
    return false;
  }
  // Only work that is the chunk's own: an event whose latest record is a node of it, a stream
  // whose work it holds. (A stream that sees the chunk only through the legacy stream's
  // implicit order may have completed all of its own work: its query submits, as before_op's
  // rule says.) A stream's name is the chunk's only in the chunk's thread and context: the
  // legacy and per-thread default streams are each context's and thread's own (another
  // thread's idle one would read "not ready"). An event's handle is the same everywhere.
  const uint64_t s = normalized_stream(stream, per_thread);
  bool held = false;
  if (op == Op::EventQuery) {
    held = handle && fork_.holds_event(handle);
  } else if (op == Op::StreamQuery) {
    held = fork_.holds_stream(s) && thread_id() == chunk_thread_ &&
           current_context() == chunk_context_;
  }
  if (!held) return false;
  const uint64_t asked = op == Op::EventQuery ? handle : s;
  const uint64_t recorded = recorded_entries();
  // Nothing recorded since the last answer: the same question again, or kQueryStreak answers
  // in a row (a loop over several events; the allocator asks once per stream it holds blocks
  // of), and the program waits on them: before_op submits, the driver answers.
  query_streak_ = recorded == query_recorded_ ? query_streak_ + 1 : 0;
  if ((op == query_op_ && asked == query_asked_ && query_streak_) ||
      query_streak_ >= kQueryStreak) {
    query_op_ = Op::kCount;
    query_streak_ = 0;
    query_recorded_ = ~0ull;
    return false;
  }
  query_op_ = op;
  query_asked_ = asked;
  query_recorded_ = recorded;
  ++stats_.queries_answered;
  return true;
}

void GraphEngine::interprocess_event(CUevent event) {
  // A handle is created again only after its destroy (or its context's end), which forgot it.
  interprocess_events_.push_back(reinterpret_cast<uint64_t>(event));
}

void GraphEngine::park_destroyed(uint64_t handle) {
  // Graphs that record events hold the program's last events in their record nodes; the driver
  // refuses to repoint a node whose event was destroyed, so each one moves to the engine's
  // fork event of its context first (never launched so: a replay patches it to the event of
  // its time). PyTorch creates and destroys events every step (wait_stream).
  // Only the sequences that built such graphs are walked, and those whose graphs went leave
  // the list: a program that follows many sequences destroys events all the time.
  const CUevent from = reinterpret_cast<CUevent>(handle);
  const CUcontext current = current_context();  // each scope below restores it
  std::vector<uint32_t>& ids = submitter_.event_graph_sequences();
  for (size_t i = 0; i < ids.size();) {
    auto plan = plans_.find(ids[i]);
    bool holds = false;
    for (Chunk& c : plan != plans_.end() ? plan->second.chunks.all() : std::span<Chunk>{}) {
      if (!c.graph.records_events() || !c.graph.usable()) continue;
      ContextScope scope(*api_, c.graph.context(), current);
      CUevent own = own_events_.fork(c.graph.context());
      if (own && c.graph.repoint_event(*api_, from, own) == CUDA_SUCCESS) {
        holds = true;
        continue;
      }
      // It could not be patched later: built again at its next use.
      --stats_.graphs_live;
      c.graph.destroy(*api_);
    }
    if (holds) {
      ++i;
    } else {
      ids[i] = ids.back();
      ids.pop_back();
    }
  }
}

void GraphEngine::after_op(Op op, CUstream stream, bool per_thread, CUresult result) {
  const uint64_t s = normalized_stream(stream, per_thread);
  if ((op == Op::StreamBeginCapture || op == Op::StreamBeginCaptureToGraph) &&
      result == CUDA_SUCCESS) {
    capturing_.push_back(s);
  } else if (op == Op::StreamEndCapture) {
    auto it = std::find(capturing_.begin(), capturing_.end(), s);
    if (it != capturing_.end()) capturing_.erase(it);
  }
  // A switch to another context than the chunk's submits it (flush_rules.h); no call can return
  // the submission's error now.
  // Only the chunk's own thread: another thread's switch (one thread per device, each setting
  // its context every iteration) changes nothing for it, and a launch of that thread into the
  // chunk checks its context in take().
  if (flush_rule(op) == FlushRule::kContext && !pending_.empty() && thread_id() == chunk_thread_ &&
      current_context() != chunk_context_) {
    defer_error(flush(FlushCause::kOp, op));
  }
  // A boundary on a stream the recorded work does not share still ends the sequence, and with it
  // the chunk: its submission's error goes to the next op.
  if (op_is_boundary(op)) defer_error(end_segment(op));
  if (changes_memory(op)) kinds_.changed();
}

}  // namespace pygraph
