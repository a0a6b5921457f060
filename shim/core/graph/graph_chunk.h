// One chunk of a recorded sequence as an instantiated CUDA graph: built once from the recorded
// launches and memory operations, replayed with arguments patched in place. Nodes are chained in
// recording order, which is the stream order the program asked for.
//
// Patching follows the PyGraph idea: before a replay, each node's recorded parameters (kernel
// arguments, grid and dynamic shared memory; memset and copy operands) are compared with what the
// node holds from its last replay, and only changed nodes are updated
// (cuGraphExecKernelNodeSetParams, cuGraphExecMemsetNodeSetParams,
// cuGraphExecMemcpyNodeSetParams). The graph uses the program's own addresses: no copies, no
// static buffers.
//
// Part of graph mode (docs/design-graph-mode.md).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <vector>

#include "driver/driver_api.h"
#include "driver/function_table.h"

namespace pygraph {

// kEventWait is a recorded wait of one stream on an event recorded in the same chunk: an edge,
// never a node of its own (stream_fork.h). kChildGraph is the program's own graph launch, a
// child graph node running the copy made at its instantiation (program_graphs.h).
enum class NodeKind : uint8_t { kKernel, kMemset, kCopy, kEventRecord, kEventWait, kChildGraph };

// An event record or wait: an edge or record node, no work of its own (not a launch or memop).
inline bool is_event_op(NodeKind k) {
  return k == NodeKind::kEventRecord || k == NodeKind::kEventWait;
}

class StreamFork;

// A node as graph mode records it: a kernel launch, a 1-D memset or a 1-D copy. A kernel's `args`
// hold function->arg_bytes bytes at the layout's offsets, or, for a launch with packed arguments
// whose layout is unknown or whose block is smaller than the parameters (NCCL's), the packed
// block of packed_size bytes, which the node takes through
// `extra` as the driver takes it in a launch (the driver copies it when the node is added or
// updated, as it copies kernelParams: measured on an H100, driver 580).
struct RecordedNode {
  const FunctionInfo* function = nullptr;
  uint32_t grid[3] = {};
  uint32_t block[3] = {};
  uint32_t shared_mem = 0;
  const uint8_t* args = nullptr;
  // Launch attributes as the program passed them (launch_attributes.h says which the node
  // takes); fixed per node: they are part of the launch's token, never patched.
  const CUlaunchAttribute* attrs = nullptr;
  uint32_t attr_count = 0;
  bool cooperative = false;  // cuLaunchCooperativeKernel

  NodeKind kind = NodeKind::kKernel;
  // Memsets and copies. Addresses are unified (device or pinned host); a copy's source is the
  // staged snapshot when the program copied from pageable memory.
  uint64_t dst = 0, src = 0;
  size_t count = 0;  // memsets: elements; copies: bytes
  uint32_t value = 0, element_size = 0;

  uint32_t packed_size = 0;    // kernels: >0, `args` is a packed block passed through `extra`
  CUevent event = nullptr;     // event records: the event the node records (patched)
  CUgraph child = nullptr;     // child graphs: the copy the node runs (never patched: the token
                               // names the program's graph)
  bool node_priority = false;  // child graphs: the program's runs at its nodes' priorities
  uint32_t arg_size() const { return packed_size ? packed_size : function->arg_bytes; }
};

class ChunkGraph {
 public:
  // Builds and instantiates the graph; memset and copy nodes run in `ctx`. On failure nothing
  // stays allocated and the driver's error is returned, for the caller to launch the recorded
  // work eagerly instead.
  // `fork`: the nodes' dependencies when the chunk spans several streams (stream_fork.h); null:
  // one stream, each node after the previous one.
  CUresult build(const DriverApi& api, const RecordedNode* nodes, size_t count, CUcontext ctx,
                 const StreamFork* fork = nullptr);

  // Patches what changed since the last replay and launches the graph on `stream`. `nodes` must
  // have the kinds, functions and block shapes they had at build(). On failure the chunk is
  // broken (usable() false) and must be destroyed; the caller launches the work eagerly.
  // `*timer_start`, if any, is recorded on `stream` right before the launch, after the patches
  // (gpu_timer.h); a failed record sets it to null: the replay is untimed, not failed.
  // `patched_at`, if any, gets the index of each node patched (for an observer: which kernels
  // make replays cost, engine_observer.h); its capacity is the caller's.
  CUresult replay(const DriverApi& api, const RecordedNode* nodes, size_t count, CUstream stream,
                  CUcontext ctx, uint32_t* patched, CUevent* timer_start = nullptr,
                  std::vector<uint32_t>* patched_at = nullptr);

  void destroy(const DriverApi& api);
  bool usable() const { return exec_ != nullptr && !broken_; }
  bool built() const { return exec_ != nullptr; }  // instantiated, broken or not
  CUcontext context() const { return ctx_; }       // the one it was built in
  bool records_events() const { return records_events_; }
  // Whether one of its nodes is of kind `k` (a scan: not for the launch path).
  bool has_node_of(NodeKind k) const {
    for (const Node& n : nodes_) {
      if (n.kind == k) return true;
    }
    return false;
  }
  // The program destroys `from`: each event record node holding it holds `to` (an engine event of
  // this graph's context) instead. The driver refuses to give a node whose event was destroyed
  // another one (CUDA_ERROR_INVALID_VALUE, H100, driver 580), so without this the next replay,
  // with the program's next event, could not be patched. A failure breaks the graph.
  CUresult repoint_event(const DriverApi& api, CUevent from, CUevent to);
  // After a failed build() or replay(): the driver call that failed ("cuGraphInstantiate", ...),
  // or what the chunk found wrong itself; and the kind of node it concerned. For the stats and
  // the debug log: a graph failure disables its sequence, and the user should learn why.
  const char* failed_call() const { return failed_call_; }
  NodeKind failed_kind() const { return failed_kind_; }
  size_t size() const { return nodes_.size(); }

  // Whether a kernel node launches a function for which `pred(const FunctionInfo&)` holds (a
  // module unload asks which graphs hold its kernels); a child graph may launch any.
  template <class Pred>
  bool launches_any(Pred pred) const {
    for (const Node& n : nodes_) {
      if (n.kind == NodeKind::kChildGraph) return true;
      if (n.kind == NodeKind::kKernel && n.function && pred(*n.function)) return true;
    }
    return false;
  }

 private:
  struct Node {
    CUgraphNode handle = nullptr;
    NodeKind kind = NodeKind::kKernel;
    const FunctionInfo* function = nullptr;  // kernels: what the node launches, and its block
    uint32_t block[3] = {};
    uint32_t grid[3] = {}, shared_mem = 0;
    std::vector<uint8_t> args;  // kernels: what the node holds now
    uint64_t dst = 0, src = 0;  // memsets and copies: what the node holds now
    size_t count = 0;
    uint32_t value = 0;
    CUevent event = nullptr;  // event records: what the node records now
    CUgraph child = nullptr;  // child graphs: the copy it was built from
  };
  CUresult add(const DriverApi& api, const RecordedNode& r, CUgraphNode* deps, size_t ndeps,
               CUcontext ctx, CUgraphNode* out);
  CUresult patch(const DriverApi& api, const RecordedNode& r, Node& n, CUcontext ctx);
  bool holds(const RecordedNode& r, const Node& n) const;
  void keep(const RecordedNode& r, Node& n) const;
  void kernel_params(const RecordedNode& r, CUDA_KERNEL_NODE_PARAMS* p);
  static CUresult set_attributes(const DriverApi& api, CUgraphNode node, const RecordedNode& r);

  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  bool broken_ = false;
  bool records_events_ = false;
  CUcontext ctx_ = nullptr;
  const char* failed_call_ = "";
  NodeKind failed_kind_ = NodeKind::kKernel;
  std::vector<Node> nodes_;
  std::vector<void*> ptrs_;  // kernel parameter pointers of the node being set: no allocation
  // The `extra` array of a packed node being set, and the size it points to.
  void* extra_[5] = {};
  size_t extra_size_ = 0;
};

}  // namespace pygraph
