// Which deferred work each driver op can observe or order, so graph mode submits exactly that
// work before the op runs (docs/design-graph-mode.md, "Flush rules").
//
// The engine keeps one invariant that makes these rules small: deferred (recorded, not yet
// submitted) work sits on the chunk's streams (its first stream D, and side streams that joined
// through a wait on an event the chunk records: stream_fork.h) and is the latest work the
// program issued there; an op on any of them sees all of it (GraphEngine::chunk_sees). Work issued
// later on another stream S is unordered with them unless the program orders it through an event
// (recording on D flushes), a stream-memory wait (flushes everything), or the legacy default
// stream's implicit synchronization (flushes whenever S or D is the legacy stream). The rules,
// derived from CUDA's stream semantics:
//
//  kNone    the op neither waits for, observes nor orders GPU work: allocations (a fresh
//           address cannot be used by work issued before it was returned; frees flush), capture
//           status queries (cuStreamIsCapturing: whether a stream captures is the program's own
//           business, never deferred work's), cuGetProcAddress, cuEventCreate (wrapped only to
//           learn which events another process may wait for: an interprocess event's records
//           never go into a chunk, since the other process's waits and queries pass through no
//           door of this one; the engine's interprocess_event). Such an op is no boundary
//           either: a sequence goes on across it. The other ops that change nothing
//           (cuStreamGetCaptureInfo, cuPointerGetAttribute(s), cuFuncGetAttribute,
//           cuDeviceGetAttribute, cuCtxGetCurrent, cuCtxGetDevice, ...) are not wrapped
//           (hook_table.def): pygraph never sees them, so they flush and end nothing.
//  kStream  the op waits for, observes or enqueues after the work of its stream S: stream
//           sync/query, event record, stream wait on an event, async copies and sets, host
//           functions, the program's own graph launch, stream destroy, prefetches. It needs D's
//           work when S is D, or when S or D is the legacy default stream (which waits for and is
//           waited for by every blocking stream). A program's graph that is not plain
//           (program_graphs.h: an event, wait, host or memory node, or not learnt at its
//           instantiation) needs everything: its event nodes may wait for or record an event
//           the chunk records, on any stream (session 37's review). A query of a stream whose
//           own work the chunk holds is answered instead, as an event's (kEvent).
//  kAll     the op can observe any work: context sync, synchronous copies and sets (they order
//           with the legacy stream and make the host wait), every free (deferred work may still
//           read the memory), stream-memory waits and external semaphore waits (another stream
//           may wait for a value deferred work writes), and cuEventElapsedTime, which reads two
//           events' latest records (a record still in the chunk would leave the driver to
//           answer from the one before it: a stale time, or success where "not ready" is
//           true; a review found it, session 37). Programs time after a sync, with nothing
//           deferred, so submitting everything costs nothing there. A query, it is no boundary.
//  kContextEnd  context destruction, primary-context reset, and primary-context release (any
//           release may be the last, which destroys the context: the driver tells no count, and
//           the runtime's own retain goes through no door of ours): as kAll (the context's work
//           must be submitted while it exists), then every graph is destroyed, since its context
//           may be the one that ends (the sequences build new ones wherever they next run), and
//           pinned staging memory of that context is forgotten (staging_ring.h).
//  kContext the op changes the calling thread's current context (cuCtxSetCurrent,
//           cuCtxPushCurrent, cuCtxPopCurrent, and cuCtxCreate, which makes the new one current).
//           Deferred work is submitted in the context it was recorded in whatever is current then,
//           but a chunk must not go on in another context: a launch on the chunk's thread does not
//           ask which context is current (a driver call per launch). So when, after the op, the
//           thread's current context is no longer the chunk's, everything deferred is submitted, as
//           kAll does. A switch to the context already current (compiled PyTorch code calls
//           cuCtxSetCurrent once per iteration, a push of the current context, a pop back to it)
//           changes nothing and submits nothing; none of the three is a boundary. Checked after the
//           op: only then does a pop say which context it made current, and the switch itself
//           observes no GPU work, so submitting right after it is the same as right before it.
//  kEvent   the op names an event (cuEventQuery, cuEventSynchronize, cuEventDestroy). Deferred
//           work may hold a record of it (several streams in one graph, stream_fork.h): a sync of
//           such an event submits everything first, and so does a query of it, unless
//           `answer_queries` is on: then it is answered "not ready" without the driver (its
//           record has not reached the GPU: the true answer), and nothing goes out, unless the
//           program waits on the query (GraphEngine::answers_query; so too a cuStreamQuery of a
//           stream whose work the chunk holds). A destroy makes those records record the
//           engine's own spare event instead (nobody can wait for a destroyed event, and a new
//           event reusing the handle must not be recorded by the graph later). An event the
//           chunk does not record needs nothing: its work was fixed when it was recorded, and
//           none of that work can wait for deferred work (a wait on an event the chunk records
//           either joins its stream to the chunk, its later records with it, or submits the
//           chunk). A query, of an event or of a stream (kStream), is no boundary (ops.h): the
//           sequence goes on across it, whether the query submitted the chunk or not.
//  kCapture the program begins capturing a graph: everything deferred goes first, then graph
//           mode passes every call through untouched until the capture ends.
//  kUnload  a module or library is unloaded: everything deferred goes first (it may launch the
//           module's kernels), then the graphs that may hold its kernels are destroyed and their
//           sequences not followed again (module_unload.h); everything else goes on.
//  kProgramGraph  the program instantiates, changes or destroys one of its executable graphs
//           (program_graphs.h). An instantiation observes no GPU work: the engine only learns
//           the new graph. A change or destroy of a graph that deferred work launches submits
//           everything first: the deferred launch must run what the graph held when the program
//           launched it, and a destroyed graph cannot be launched later. The program's own graph
//           launch itself is kStream, unless the engine takes it into the chunk as a child graph.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "driver/ops.h"

namespace pygraph {

enum class FlushRule : uint8_t {
  kNone,
  kStream,
  kAll,
  kContextEnd,
  kContext,
  kCapture,
  kUnload,
  kEvent,
  kProgramGraph
};

constexpr FlushRule flush_rule(Op op) {
  switch (op) {
    case Op::StreamWaitValue32:
    case Op::StreamWaitValue64:
    case Op::StreamBatchMemOp:
    case Op::WaitExternalSemaphoresAsync:
    case Op::SignalExternalSemaphoresAsync:
    case Op::EventElapsedTime:
      return FlushRule::kAll;
    case Op::EventSynchronize:
    case Op::EventQuery:
    case Op::EventDestroy:
      return FlushRule::kEvent;
    case Op::StreamIsCapturing:
    case Op::StreamEndCapture:
    case Op::GetProcAddress:
    case Op::EventCreate:
      return FlushRule::kNone;
    case Op::StreamBeginCapture:
    case Op::StreamBeginCaptureToGraph:
      return FlushRule::kCapture;
    case Op::ModuleUnload:
    case Op::LibraryUnload:
      return FlushRule::kUnload;
    case Op::CtxDestroy:
    case Op::DevicePrimaryCtxReset:
    case Op::DevicePrimaryCtxRelease:
      return FlushRule::kContextEnd;
    case Op::CtxSetCurrent:
    case Op::CtxPushCurrent:
    case Op::CtxPopCurrent:
    case Op::CtxCreate:  // makes the new context current
      return FlushRule::kContext;
    default:
      break;
  }
  switch (op_info(op).cls) {
    case OpClass::kLaunch:  // launches are the engine's own business
    case OpClass::kAlloc:
    case OpClass::kProcAddr:
      return FlushRule::kNone;
    case OpClass::kSync:
    case OpClass::kQuery:
    case OpClass::kEvent:
    case OpClass::kStreamOrder:
    case OpClass::kHostFunc:
    case OpClass::kGraphLaunch:
    case OpClass::kExternal:
      return op == Op::CtxSynchronize ? FlushRule::kAll : FlushRule::kStream;
    case OpClass::kCopy:
    case OpClass::kMemset:
      return op_info(op).blocks_host ? FlushRule::kAll : FlushRule::kStream;
    case OpClass::kFree:
      return FlushRule::kAll;
    case OpClass::kContext:
      return op == Op::StreamDestroy ? FlushRule::kStream : FlushRule::kAll;
    case OpClass::kGraphExec:
      return FlushRule::kProgramGraph;
    case OpClass::kCapture:
    case OpClass::kUnload:
      break;  // handled above
  }
  return FlushRule::kAll;
}

// Streams as the engine compares them: the legacy default stream has one name (it is reached as
// 0 through a legacy entry point or as CU_STREAM_LEGACY anywhere), the per-thread default stream
// another (0 through a per-thread entry point, or CU_STREAM_PER_THREAD).
inline uint64_t normalized_stream(CUstream s, bool per_thread_entry) {
  const uint64_t v = reinterpret_cast<uint64_t>(s);
  if (v == 0) {
    return per_thread_entry ? reinterpret_cast<uint64_t>(CU_STREAM_PER_THREAD)
                            : reinterpret_cast<uint64_t>(CU_STREAM_LEGACY);
  }
  return v;
}

inline bool is_legacy_stream(uint64_t normalized) {
  return normalized == reinterpret_cast<uint64_t>(CU_STREAM_LEGACY);
}

inline bool is_per_thread_stream(uint64_t normalized) {
  return normalized == reinterpret_cast<uint64_t>(CU_STREAM_PER_THREAD);
}

// kStream: does an op on stream `s` need the work deferred on stream `deferred`?
inline bool stream_sees(uint64_t s, uint64_t deferred) {
  return s == deferred || is_legacy_stream(s) || is_legacy_stream(deferred);
}

}  // namespace pygraph
