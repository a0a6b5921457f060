#include "graph_chunk.h"

#include <cstring>

#include "launch_attributes.h"

namespace pygraph {

void ChunkGraph::fill(const RecordedLaunch& l, std::vector<void*>* ptrs,
                      CUDA_KERNEL_NODE_PARAMS* p) {
  const FunctionInfo& f = *l.function;
  ptrs->resize(f.params.size());
  for (size_t i = 0; i < f.params.size(); ++i) {
    // The driver copies the values when the node is added or updated.
    (*ptrs)[i] = const_cast<uint8_t*>(l.args + f.params[i].offset);
  }
  std::memset(p, 0, sizeof *p);
  if (f.is_kernel_handle) {
    p->kern = reinterpret_cast<CUkernel>(f.handle);  // func stays null: the node uses kern
  } else {
    p->func = reinterpret_cast<CUfunction>(f.handle);
  }
  p->gridDimX = l.grid[0];
  p->gridDimY = l.grid[1];
  p->gridDimZ = l.grid[2];
  p->blockDimX = l.block[0];
  p->blockDimY = l.block[1];
  p->blockDimZ = l.block[2];
  p->sharedMemBytes = l.shared_mem;
  p->kernelParams = ptrs->data();
}

CUresult ChunkGraph::set_attributes(const DriverApi& api, CUgraphNode node,
                                    const RecordedLaunch& l) {
  if (l.cooperative) {
    CUkernelNodeAttrValue v{};
    v.cooperative = 1;
    if (!api.graph_kernel_node_set_attribute) return CUDA_ERROR_NOT_SUPPORTED;
    if (CUresult r =
            api.graph_kernel_node_set_attribute(node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v)) {
      return r;
    }
  }
  for (uint32_t i = 0; i < l.attr_count; ++i) {
    if (attr_use(l.attrs[i].id) != AttrUse::kNode) continue;
    if (!api.graph_kernel_node_set_attribute) return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = api.graph_kernel_node_set_attribute(node, l.attrs[i].id, &l.attrs[i].value);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult ChunkGraph::build(const DriverApi& api, const RecordedLaunch* launches, size_t count) {
  if (!api.graph_create || !api.graph_add_kernel_node || !api.graph_instantiate ||
      !api.graph_launch || !api.graph_exec_kernel_node_set_params || !api.graph_destroy ||
      !api.graph_exec_destroy) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  destroy(api);
  CUresult r = api.graph_create(&graph_, 0);
  if (r != CUDA_SUCCESS) {
    graph_ = nullptr;
    return r;
  }
  nodes_.resize(count);
  std::vector<void*> ptrs;
  for (size_t i = 0; i < count; ++i) {
    const RecordedLaunch& l = launches[i];
    CUDA_KERNEL_NODE_PARAMS p;
    fill(l, &ptrs, &p);
    CUgraphNode prev = i ? nodes_[i - 1].handle : nullptr;
    r = api.graph_add_kernel_node(&nodes_[i].handle, graph_, i ? &prev : nullptr, i ? 1 : 0, &p);
    if (r == CUDA_SUCCESS) r = set_attributes(api, nodes_[i].handle, l);
    if (r != CUDA_SUCCESS) {
      destroy(api);
      return r;
    }
    std::memcpy(nodes_[i].grid, l.grid, sizeof l.grid);
    nodes_[i].shared_mem = l.shared_mem;
    nodes_[i].args.assign(l.args, l.args + l.function->arg_bytes);
  }
  r = api.graph_instantiate(&exec_, graph_, 0);
  if (r != CUDA_SUCCESS) {
    exec_ = nullptr;
    destroy(api);
    return r;
  }
  return CUDA_SUCCESS;
}

CUresult ChunkGraph::replay(const DriverApi& api, const RecordedLaunch* launches, size_t count,
                            CUstream stream, uint32_t* patched) {
  *patched = 0;
  if (!usable() || count != nodes_.size()) return CUDA_ERROR_INVALID_VALUE;
  std::vector<void*> ptrs;
  for (size_t i = 0; i < count; ++i) {
    const RecordedLaunch& l = launches[i];
    Node& n = nodes_[i];
    const bool same = std::memcmp(n.grid, l.grid, sizeof n.grid) == 0 &&
                      n.shared_mem == l.shared_mem && n.args.size() == l.function->arg_bytes &&
                      std::memcmp(n.args.data(), l.args, n.args.size()) == 0;
    if (same) continue;
    CUDA_KERNEL_NODE_PARAMS p;
    fill(l, &ptrs, &p);
    CUresult r = api.graph_exec_kernel_node_set_params(exec_, n.handle, &p);
    if (r != CUDA_SUCCESS) {
      broken_ = true;  // some nodes hold new values, some old: never launch this exec again
      return r;
    }
    std::memcpy(n.grid, l.grid, sizeof n.grid);
    n.shared_mem = l.shared_mem;
    n.args.assign(l.args, l.args + l.function->arg_bytes);
    ++*patched;
  }
  CUresult r = api.graph_launch(exec_, stream);
  if (r != CUDA_SUCCESS) broken_ = true;
  return r;
}

void ChunkGraph::destroy(const DriverApi& api) {
  if (exec_ && api.graph_exec_destroy) api.graph_exec_destroy(exec_);
  if (graph_ && api.graph_destroy) api.graph_destroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
  broken_ = false;
  nodes_.clear();
}

}  // namespace pygraph
