#include "graph/program_graphs.h"

#include <algorithm>
#include <vector>

namespace pygraph {

const char* ProgramGraphs::inspect(CUgraph graph, unsigned long long flags, Entry* e) const {
  if (!api_->graph_clone || !api_->graph_get_nodes || !api_->graph_node_get_type ||
      !api_->graph_add_child_graph_node || !api_->graph_destroy) {
    return "driver entry points missing";
  }
  size_t n = 0;
  if (api_->graph_get_nodes(graph, nullptr, &n) != CUDA_SUCCESS) return "node query failed";
  if (n == 0) return "empty";
  std::vector<CUgraphNode> list(n);  // once per instantiation
  if (api_->graph_get_nodes(graph, list.data(), &n) != CUDA_SUCCESS) return "node query failed";
  uint32_t work = 0;
  for (size_t i = 0; i < n; ++i) {
    CUgraphNodeType type;
    if (api_->graph_node_get_type(list[i], &type) != CUDA_SUCCESS) return "node query failed";
    switch (type) {
      case CU_GRAPH_NODE_TYPE_KERNEL:
      case CU_GRAPH_NODE_TYPE_MEMCPY:
      case CU_GRAPH_NODE_TYPE_MEMSET:
        ++work;
        break;
      case CU_GRAPH_NODE_TYPE_EMPTY:
        break;
      default:
        return "node type";
    }
  }
  e->weight = std::max<uint32_t>(work, 1);
  if (flags & ~static_cast<unsigned long long>(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                               CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                                               CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)) {
    return "instantiate flags";
  }
  e->plain = true;
  return nullptr;
}

void ProgramGraphs::instantiated(CUgraphExec exec, CUgraph graph, unsigned long long flags,
                                 CUcontext ctx) {
  forget(exec);  // a handle seen before: the driver reused it
  Entry e;
  e.id = next_id_++;
  e.context = ctx;
  e.node_priority = (flags & CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY) != 0;
  e.why_not = inspect(graph, flags, &e);
  if (!e.why_not && api_->graph_clone(&e.copy, graph) != CUDA_SUCCESS) {
    e.copy = nullptr;
    e.why_not = "copy failed";
  }
  *takeable_ += e.copy != nullptr;
  map_[reinterpret_cast<uint64_t>(exec)] = e;
}

void ProgramGraphs::drop_copy(Entry& e) {
  if (!e.copy) return;
  api_->graph_destroy(e.copy);
  e.copy = nullptr;
  --*takeable_;
}

void ProgramGraphs::refuse(Entry& e, const char* why) {
  drop_copy(e);
  e.why_not = why;
}

void ProgramGraphs::forget(CUgraphExec exec) {
  auto it = map_.find(reinterpret_cast<uint64_t>(exec));
  if (it == map_.end()) return;
  drop_copy(it->second);
  map_.erase(it);
}

void ProgramGraphs::forget_all() {
  for (auto& [exec, e] : map_) drop_copy(e);
  map_.clear();
}

}  // namespace pygraph
