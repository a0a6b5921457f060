// What graph mode does, as it happens, for whoever wants to attribute it: the analyzer's
// `breaks` (which op, call site or kernel keeps launches out of graphs) and the trace, which
// records graph mode's own events when PYGRAPH_TRACE is set (recording/trace_observer.h). The
// engine has none by default; it calls one only where it already does slow work (eager launches,
// early submissions, ends of segments, replays, verdicts), never for a recorded launch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "decisions/decision_policy.h"
#include "driver/ops.h"
#include "graph/engine_stats.h"

namespace pygraph {

struct FunctionInfo;
enum class NodeKind : uint8_t;  // graph_chunk.h

class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  // One launch (or memop) went to the driver as a plain call, for this reason.
  virtual void eager(bool memop, EagerReason reason) {}
  // Recorded work was submitted before its chunk was complete.
  virtual void flushed(FlushCause cause, Op op, size_t pending) {}
  // `op` ended the current segment (a boundary, or work no graph can hold).
  virtual void segment_ended(Op op) {}
  // The engine began following a sequence it had not followed before (one per plan).
  virtual void followed(uint32_t sequence, bool periodic, size_t length) {}
  // A graph was built for positions [start, end) of the followed sequence.
  virtual void chunk_built(uint32_t sequence, uint32_t start, uint32_t end, size_t nodes) {}
  // A chunk of `sequence` ran as a graph replay.
  virtual void replayed(uint32_t sequence, size_t nodes, uint32_t patched) {}
  // Of that replay, a node that was patched (its arguments, grid or shared memory; a memop's
  // addresses, size or value changed since the graph last ran): `function` is the kernel, null
  // for a memop or an event record. One call per patched node, after replayed(), and only to an
  // observer that wants them (wants_patches(), asked once when it is set): the others cost no
  // bookkeeping at a replay.
  virtual void patched(uint32_t sequence, NodeKind kind, const FunctionInfo* function) {}
  virtual bool wants_patches() const { return false; }
  // `sequence`'s policy reached a verdict, changed it, or went back to measuring; `policy`
  // holds the verdict, its source and figures, `length` its launches and memops an occurrence.
  virtual void decided(uint32_t sequence, const std::string& signature,
                       const SequencePolicy& policy, size_t length) {}
};

}  // namespace pygraph
