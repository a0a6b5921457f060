// The program's calls as the hooks hand them to graph mode's engine (a kernel launch, an event
// record or wait; memops: memop_call.h), and the engine making such a call itself: at once, when
// the work cannot or need not be deferred, or later, when recorded work goes out eagerly
// (chunk_submit.h). Each call goes through the driver entry point the program called, with that
// entry point's ABI, so that the driver sees what it would have seen without pygraph.
#pragma once

#include <cuda.h>

#include "driver/launch_call.h"
#include "driver/memop_call.h"
#include "driver/ops.h"

namespace pygraph {

// A launch as the hooks hand it to the engine: the call, plus what the engine needs to make it
// itself later.
struct EngineLaunch : LaunchCall {
  void* eager;      // the driver entry point the program called, with the ABI of `op`
  bool per_thread;  // reached through a per-thread-default-stream entry point
};

// An event record (cuEventRecord, cuEventRecordWithFlags) or a stream's wait on an event
// (cuStreamWaitEvent) as the hooks hand it to the engine: recorded into the chunk (stream_fork.h)
// or issued.
struct EventCall {
  Op op;
  void* eager;      // the driver entry point the program called, with the ABI of `op`
  bool per_thread;  // reached through a per-thread-default-stream entry point
  CUevent event;
  CUstream stream;
  unsigned int flags;
};

// The event ops graph mode takes as EventCalls where several streams share a graph
// (GraphEngine::event_op): what the hooks hand it, and `simulate` too.
constexpr bool engine_event_op(Op op) {
  return op == Op::EventRecord || op == Op::EventRecordWithFlags || op == Op::StreamWaitEvent;
}

// The program's launch of its own executable graph (cuGraphLaunch), as the hooks hand it to the
// engine: taken into the chunk as a child graph node (program_graphs.h) or issued.
struct ProgramGraphCall {
  void* eager;      // the driver entry point the program called
  bool per_thread;  // reached through a per-thread-default-stream entry point
  CUgraphExec exec;
  CUstream stream;
  CUgraph copy = nullptr;      // set by the engine when taken: the graph the child node runs
  uint32_t id = 0;             // ProgramGraphs::Entry::id
  bool node_priority = false;  // ProgramGraphs::Entry::node_priority
  uint32_t weight = 1;         // ProgramGraphs::Entry::weight
};

// Launches `l` through its entry point with these arguments (a recorded launch passes the
// engine's copies of its parameters, packed block and attributes; the program's are gone).
CUresult call_launch(const EngineLaunch& l, void** params, void** extra,
                     const CUlaunchAttribute* attrs);
// The memset or copy `m` (a staged copy's `src` is its snapshot).
CUresult call_memop(const MemopCall& m);
// The event record or wait `e`.
CUresult call_event(const EventCall& e);
// The program's graph launch `g`.
CUresult call_graph(const ProgramGraphCall& g);

}  // namespace pygraph
