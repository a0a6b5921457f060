#include "graph/graph_chunk.h"

#include <cstring>

#include "driver/launch_attributes.h"
#include "graph/stream_fork.h"

namespace pygraph {
namespace {

CUDA_MEMSET_NODE_PARAMS memset_params(const RecordedNode& r) {
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = r.dst;
  p.elementSize = r.element_size;
  p.width = r.count;
  p.height = 1;
  p.pitch = r.count * r.element_size;
  p.value = r.value;
  return p;
}

// Both operands as unified addresses: the driver tells device from pinned host memory.
CUDA_MEMCPY3D copy_params(const RecordedNode& r) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.srcDevice = r.src;
  p.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.dstDevice = r.dst;
  p.WidthInBytes = r.count;
  p.Height = 1;
  p.Depth = 1;
  return p;
}

}  // namespace

void ChunkGraph::kernel_params(const RecordedNode& r, CUDA_KERNEL_NODE_PARAMS* p) {
  const FunctionInfo& f = *r.function;
  std::memset(p, 0, sizeof *p);
  if (r.packed_size) {
    // The driver copies the block when the node is added or updated.
    extra_size_ = r.packed_size;
    extra_[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    extra_[1] = const_cast<uint8_t*>(r.args);
    extra_[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    extra_[3] = &extra_size_;
    extra_[4] = CU_LAUNCH_PARAM_END;
    p->extra = extra_;
  } else {
    ptrs_.resize(f.params.size());  // keeps its capacity
    for (size_t i = 0; i < f.params.size(); ++i) {
      // The driver copies the values when the node is added or updated.
      ptrs_[i] = const_cast<uint8_t*>(r.args + f.params[i].offset);
    }
    p->kernelParams = ptrs_.data();
  }
  if (f.is_kernel_handle) {
    p->kern = reinterpret_cast<CUkernel>(f.handle);  // func stays null: the node uses kern
  } else {
    p->func = reinterpret_cast<CUfunction>(f.handle);
  }
  p->gridDimX = r.grid[0];
  p->gridDimY = r.grid[1];
  p->gridDimZ = r.grid[2];
  p->blockDimX = r.block[0];
  p->blockDimY = r.block[1];
  p->blockDimZ = r.block[2];
  p->sharedMemBytes = r.shared_mem;
}

CUresult ChunkGraph::set_attributes(const DriverApi& api, CUgraphNode node, const RecordedNode& r) {
  if (r.cooperative) {
    CUkernelNodeAttrValue v{};
    v.cooperative = 1;
    if (!api.graph_kernel_node_set_attribute) return CUDA_ERROR_NOT_SUPPORTED;
    if (CUresult e =
            api.graph_kernel_node_set_attribute(node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v)) {
      return e;
    }
  }
  for (uint32_t i = 0; i < r.attr_count; ++i) {
    if (attr_use(r.attrs[i].id) != AttrUse::kNode) continue;
    if (!api.graph_kernel_node_set_attribute) return CUDA_ERROR_NOT_SUPPORTED;
    CUresult e = api.graph_kernel_node_set_attribute(node, r.attrs[i].id, &r.attrs[i].value);
    if (e != CUDA_SUCCESS) return e;
  }
  return CUDA_SUCCESS;
}

CUresult ChunkGraph::add(const DriverApi& api, const RecordedNode& r, CUgraphNode* deps,
                         size_t ndeps, CUcontext ctx, CUgraphNode* out) {
  switch (r.kind) {
    case NodeKind::kKernel: {
      CUDA_KERNEL_NODE_PARAMS p;
      kernel_params(r, &p);
      CUresult e = api.graph_add_kernel_node(out, graph_, deps, ndeps, &p);
      return e == CUDA_SUCCESS ? set_attributes(api, *out, r) : e;
    }
    case NodeKind::kMemset: {
      if (!api.graph_add_memset_node) return CUDA_ERROR_NOT_SUPPORTED;
      const CUDA_MEMSET_NODE_PARAMS p = memset_params(r);
      return api.graph_add_memset_node(out, graph_, deps, ndeps, &p, ctx);
    }
    case NodeKind::kCopy: {
      if (!api.graph_add_memcpy_node) return CUDA_ERROR_NOT_SUPPORTED;
      const CUDA_MEMCPY3D p = copy_params(r);
      return api.graph_add_memcpy_node(out, graph_, deps, ndeps, &p, ctx);
    }
    case NodeKind::kEventRecord:
      if (!api.graph_add_event_record_node) return CUDA_ERROR_NOT_SUPPORTED;
      return api.graph_add_event_record_node(out, graph_, deps, ndeps, r.event);
    case NodeKind::kEventWait:
      break;  // an edge, never a node (stream_fork.h)
    case NodeKind::kChildGraph:
      if (!api.graph_add_child_graph_node) return CUDA_ERROR_NOT_SUPPORTED;
      return api.graph_add_child_graph_node(out, graph_, deps, ndeps, r.child);
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

bool ChunkGraph::holds(const RecordedNode& r, const Node& n) const {
  if (r.kind == NodeKind::kEventRecord) return n.event == r.event;
  if (r.kind == NodeKind::kChildGraph) return n.child == r.child;
  if (r.kind != NodeKind::kKernel) {
    return n.dst == r.dst && n.src == r.src && n.count == r.count && n.value == r.value;
  }
  return std::memcmp(n.grid, r.grid, sizeof n.grid) == 0 && n.shared_mem == r.shared_mem &&
         n.args.size() == r.arg_size() && std::memcmp(n.args.data(), r.args, n.args.size()) == 0;
}

void ChunkGraph::keep(const RecordedNode& r, Node& n) const {
  n.kind = r.kind;
  if (r.kind == NodeKind::kEventRecord) {
    n.event = r.event;
    return;
  }
  if (r.kind == NodeKind::kChildGraph) {
    n.child = r.child;
    return;
  }
  if (r.kind != NodeKind::kKernel) {
    n.dst = r.dst;
    n.src = r.src;
    n.count = r.count;
    n.value = r.value;
    return;
  }
  n.function = r.function;
  std::memcpy(n.block, r.block, sizeof n.block);
  std::memcpy(n.grid, r.grid, sizeof n.grid);
  n.shared_mem = r.shared_mem;
  n.args.assign(r.args, r.args + r.arg_size());
}

CUresult ChunkGraph::build(const DriverApi& api, const RecordedNode* nodes, size_t count,
                           CUcontext ctx, const StreamFork* fork) {
  if (!api.graph_create || !api.graph_add_kernel_node || !api.graph_instantiate ||
      !api.graph_launch || !api.graph_exec_kernel_node_set_params || !api.graph_destroy ||
      !api.graph_exec_destroy) {
    failed_call_ = "graph entry points missing";
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  destroy(api);
  CUresult r = api.graph_create(&graph_, 0);
  if (r != CUDA_SUCCESS) {
    graph_ = nullptr;
    failed_call_ = "cuGraphCreate";
    return r;
  }
  nodes_.resize(count);
  ctx_ = ctx;
  std::vector<CUgraphNode> deps;
  bool node_priority = false;  // a child graph of the program's that runs so (program_graphs.h)
  const bool chain = !fork || fork->chain();
  for (size_t i = 0; i < count; ++i) {
    deps.clear();
    if (!chain) {
      size_t n = 0;
      const uint32_t* d = fork->deps(i, &n);
      for (size_t k = 0; k < n; ++k) deps.push_back(nodes_[d[k]].handle);
    } else if (i) {
      deps.push_back(nodes_[i - 1].handle);
    }
    r = add(api, nodes[i], deps.empty() ? nullptr : deps.data(), deps.size(), ctx,
            &nodes_[i].handle);
    if (r != CUDA_SUCCESS) {
      destroy(api);
      failed_call_ = "cuGraphAdd*Node";
      failed_kind_ = nodes[i].kind;
      return r;
    }
    keep(nodes[i], nodes_[i]);
    records_events_ |= nodes[i].kind == NodeKind::kEventRecord;
    node_priority |= nodes[i].node_priority;
  }
  r = api.graph_instantiate(&exec_, graph_,
                            node_priority ? CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY : 0);
  if (r != CUDA_SUCCESS) {
    exec_ = nullptr;
    destroy(api);
    failed_call_ = "cuGraphInstantiate";
    return r;
  }
  return CUDA_SUCCESS;
}

CUresult ChunkGraph::patch(const DriverApi& api, const RecordedNode& r, Node& n, CUcontext ctx) {
  switch (r.kind) {
    case NodeKind::kKernel: {
      CUDA_KERNEL_NODE_PARAMS p;
      kernel_params(r, &p);
      return api.graph_exec_kernel_node_set_params(exec_, n.handle, &p);
    }
    case NodeKind::kMemset: {
      if (!api.graph_exec_memset_node_set_params) return CUDA_ERROR_NOT_SUPPORTED;
      const CUDA_MEMSET_NODE_PARAMS p = memset_params(r);
      return api.graph_exec_memset_node_set_params(exec_, n.handle, &p, ctx);
    }
    case NodeKind::kCopy: {
      if (!api.graph_exec_memcpy_node_set_params) return CUDA_ERROR_NOT_SUPPORTED;
      const CUDA_MEMCPY3D p = copy_params(r);
      return api.graph_exec_memcpy_node_set_params(exec_, n.handle, &p, ctx);
    }
    case NodeKind::kEventRecord:
      if (!api.graph_exec_event_record_node_set_event) return CUDA_ERROR_NOT_SUPPORTED;
      return api.graph_exec_event_record_node_set_event(exec_, n.handle, r.event);
    case NodeKind::kEventWait:
    case NodeKind::kChildGraph:  // equal tokens: the same copy (holds)
      break;
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult ChunkGraph::replay(const DriverApi& api, const RecordedNode* nodes, size_t count,
                            CUstream stream, CUcontext ctx, uint32_t* patched, CUevent* timer_start,
                            std::vector<uint32_t>* patched_at) {
  *patched = 0;
  if (!usable() || count != nodes_.size()) {
    failed_call_ = "replay of an unusable graph";
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (size_t i = 0; i < count; ++i) {
    Node& n = nodes_[i];
    // Equal tokens mean equal shapes, but a node is never patched into another kernel or block
    // shape, even on a token collision: the chunk goes out eagerly instead.
    if (nodes[i].kind != n.kind || (n.kind == NodeKind::kKernel &&
                                    (nodes[i].function != n.function ||
                                     std::memcmp(nodes[i].block, n.block, sizeof n.block) != 0))) {
      broken_ = true;
      failed_call_ = "node kind, kernel or block changed";
      failed_kind_ = n.kind;
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (holds(nodes[i], n)) continue;
    CUresult r = patch(api, nodes[i], n, ctx);
    if (r != CUDA_SUCCESS) {
      broken_ = true;  // some nodes hold new values, some old: never launch this exec again
      failed_call_ = "cuGraphExec*NodeSetParams";
      failed_kind_ = n.kind;
      return r;
    }
    keep(nodes[i], n);
    ++*patched;
    if (patched_at) patched_at->push_back(static_cast<uint32_t>(i));
  }
  if (timer_start && *timer_start && api.event_record(*timer_start, stream) != CUDA_SUCCESS) {
    *timer_start = nullptr;  // a stale record of it would time more than this launch
  }
  CUresult r = api.graph_launch(exec_, stream);
  if (r != CUDA_SUCCESS) {
    broken_ = true;
    failed_call_ = "cuGraphLaunch";
  }
  return r;
}

CUresult ChunkGraph::repoint_event(const DriverApi& api, CUevent from, CUevent to) {
  if (!records_events_ || !usable()) return CUDA_SUCCESS;
  for (Node& n : nodes_) {
    if (n.kind != NodeKind::kEventRecord || n.event != from) continue;
    if (!api.graph_exec_event_record_node_set_event) return CUDA_ERROR_NOT_SUPPORTED;
    if (CUresult r = api.graph_exec_event_record_node_set_event(exec_, n.handle, to)) {
      broken_ = true;
      failed_call_ = "cuGraphExecEventRecordNodeSetEvent (before the event's destruction)";
      failed_kind_ = NodeKind::kEventRecord;
      return r;
    }
    n.event = to;
  }
  return CUDA_SUCCESS;
}

void ChunkGraph::destroy(const DriverApi& api) {
  if (exec_ && api.graph_exec_destroy) api.graph_exec_destroy(exec_);
  if (graph_ && api.graph_destroy) api.graph_destroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
  broken_ = false;
  records_events_ = false;
  // Its nodes' argument buffers too: an evicted graph's window is kept (chunk_windows.h).
  std::vector<Node>().swap(nodes_);
}

}  // namespace pygraph
