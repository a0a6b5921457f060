// GraphEngine and the program's own graphs (program_graphs.h): their instantiations, their
// launches taken into chunks as child graph nodes or issued, and what the flush rules ask of
// them. Apart from graph_engine.cpp, which holds the launch path.
#include "graph/context_scope.h"
#include "graph/flush_rules.h"
#include "graph/graph_engine.h"
#include "graph/token.h"

namespace pygraph {

uint64_t GraphEngine::token(const ProgramGraphCall& g) const {
  // Its instantiation's id: the same executable graph, the same copy in the child node.
  return memop_token(static_cast<uint16_t>(Op::GraphLaunch), g.id, 0,
                     normalized_stream(g.stream, g.per_thread));
}

bool GraphEngine::chunk_holds_graph(uint64_t exec) const {
  for (const Pending& p : pending_) {
    if (p.kind == NodeKind::kChildGraph && reinterpret_cast<uint64_t>(p.graph.exec) == exec) {
      return true;
    }
  }
  return false;
}

void GraphEngine::refuse_program_graph(ProgramGraphs::Entry& e, const char* why) {
  if (!e.copy) return;  // refused before
  program_graphs_.refuse(e, why);
  stats_.program_graph_refused = why;
}

void GraphEngine::program_graph_instantiated(CUgraphExec exec, CUgraph graph,
                                             unsigned long long flags) {
  program_graphs_.instantiated(exec, graph, flags, current_context());
  ++stats_.program_graphs_instantiated;
}

bool GraphEngine::program_graph_launch(const ProgramGraphCall& g, CUresult* result) {
  ++stats_.program_graphs;
  ProgramGraphs::Entry* e = program_graphs_.find(g.exec);
  if (!e) return false;  // instantiated where pygraph did not see it
  const uint64_t stream = normalized_stream(g.stream, g.per_thread);
  if (!e->home) {
    e->home = stream;
    e->home_raw = g.stream;
  } else if (e->home != stream && e->copy) {
    // A second stream: each launch of an executable graph runs after its previous ones, which
    // copies inside chunk graphs on the first stream keep only through that stream's order.
    // Those go first, and this launch waits for them; the graph is never taken again. Its copy
    // is destroyed only then: a chunk that still holds a launch of it is built from it (a
    // review found it destroyed first, session 20: a child node of a destroyed graph).
    if (e->taken) {
      CUresult r = flush_all(FlushCause::kStreamChange);
      ContextScope scope(*api_, e->context, current_context());
      CUevent ev = own_events_.fork(e->context);
      CUresult w = ev ? api_->event_record(ev, e->home_raw) : CUDA_ERROR_NOT_SUPPORTED;
      if (w == CUDA_SUCCESS) w = api_->stream_wait_event(g.stream, ev, 0);
      if (w != CUDA_SUCCESS && api_->stream_synchronize) w = api_->stream_synchronize(e->home_raw);
      defer_error(r != CUDA_SUCCESS ? r : w);
    }
    refuse_program_graph(*e, "launched on a second stream");
    return false;
  }
  if (!e->copy) {
    stats_.program_graph_refused = e->why_not;
    return false;
  }
  if (e->launches + 1 < options_.program_graph_launches) {
    ++e->launches;  // not launched often enough yet to pay for copies of it (program_graphs.h)
    return false;
  }
  if (!capturing_.empty() || is_per_thread_stream(stream) || current_context() != e->context) {
    return false;  // as a launch there would be (unrecordable)
  }
  ProgramGraphCall taken = g;
  taken.copy = e->copy;
  taken.id = e->id;
  taken.node_priority = e->node_priority;
  taken.weight = e->weight;
  Work w;
  w.graph = &taken;
  ++tick_;
  const size_t recorded = stats_.program_graphs_recorded;
  *result = take(w, token(taken));
  e->taken |= stats_.program_graphs_recorded != recorded;
  return true;
}

bool GraphEngine::plain_program_graph(uint64_t exec) {
  const ProgramGraphs::Entry* e = program_graphs_.find(reinterpret_cast<CUgraphExec>(exec));
  return e && e->plain;
}

}  // namespace pygraph
