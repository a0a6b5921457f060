// One chunk of a recorded launch sequence as an instantiated CUDA graph: built once from the
// recorded launches, replayed with arguments patched in place. Kernel nodes are chained in
// recording order, which is the stream order the program asked for.
//
// Patching follows the PyGraph idea: before a replay, each node's recorded arguments (and grid
// and dynamic shared memory) are compared with what the node holds from its last replay, and
// only changed nodes are updated (cuGraphExecKernelNodeSetParams). The graph uses the program's
// own addresses: no copies, no static buffers.
//
// Part of graph mode (docs/design-graph-mode.md).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <vector>

#include "driver_api.h"
#include "function_table.h"

namespace pygraph {

// A kernel launch as graph mode records it. Only launches whose parameter layout is known are
// recorded, so `args` holds function->arg_bytes bytes at the layout's offsets.
struct RecordedLaunch {
  const FunctionInfo* function;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_mem;
  const uint8_t* args;
  // Launch attributes as the program passed them (launch_attributes.h says which the node
  // takes); fixed per node: they are part of the launch's token, never patched.
  const CUlaunchAttribute* attrs = nullptr;
  uint32_t attr_count = 0;
  bool cooperative = false;  // cuLaunchCooperativeKernel
};

class ChunkGraph {
 public:
  // Builds and instantiates the graph. On failure nothing stays allocated and the driver's error
  // is returned, for the caller to launch the recorded work eagerly instead.
  CUresult build(const DriverApi& api, const RecordedLaunch* launches, size_t count);

  // Patches what changed since the last replay and launches the graph on `stream`. `launches`
  // must have the same functions and block shapes as at build(). On failure the chunk is broken
  // (usable() false) and must be destroyed; the caller launches the work eagerly.
  CUresult replay(const DriverApi& api, const RecordedLaunch* launches, size_t count,
                  CUstream stream, uint32_t* patched);

  void destroy(const DriverApi& api);
  bool usable() const { return exec_ != nullptr && !broken_; }
  size_t size() const { return nodes_.size(); }

 private:
  struct Node {
    CUgraphNode handle = nullptr;
    uint32_t grid[3] = {}, shared_mem = 0;
    std::vector<uint8_t> args;  // what the node holds now
  };
  static void fill(const RecordedLaunch& l, std::vector<void*>* ptrs, CUDA_KERNEL_NODE_PARAMS* p);
  static CUresult set_attributes(const DriverApi& api, CUgraphNode node, const RecordedLaunch& l);

  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  bool broken_ = false;
  std::vector<Node> nodes_;
};

}  // namespace pygraph
