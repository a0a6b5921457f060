// Graphs and stream capture of the driver stand-in. A launch runs the nodes in an order their
// dependency edges allow (set_order: as added, or adversarially in asynchronous mode), at
// submission or, in asynchronous mode, as one unit of its stream's queue.
#include <algorithm>
#include <cstring>

#include "standin_state.h"

#define API extern "C" __attribute__((visibility("default"))) CUresult

using namespace standin;

namespace {

Graph* new_graph() {
  auto* g = new Graph;
  std::lock_guard<std::recursive_mutex> lock(state().mu);
  state().graphs.insert(g);
  return g;
}

// Arguments are copied when the node is added or updated, kernelParams and extra alike (the
// real driver does the same for extra: measured on an H100, driver 580).
bool kernel_node(const CUDA_KERNEL_NODE_PARAMS* p, Node* n) {
  if (!p) return false;
  Kernel* k = kernel_of(p->func ? p->func : reinterpret_cast<CUfunction>(p->kern));
  if (!k) return false;
  n->kind = NodeKind::kKernel;
  n->kernel = k;
  const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
  const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
  std::memcpy(n->grid, grid, sizeof grid);
  std::memcpy(n->block, block, sizeof block);
  return pack_args(k, p->kernelParams, p->extra, &n->args) == CUDA_SUCCESS;
}

bool memcpy_node(const CUDA_MEMCPY3D* c, Node* n) {
  if (!c || c->Height > 1 || c->Depth > 1) return false;  // 1-D copies only
  n->kind = NodeKind::kMemcpy;
  n->copy_dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? reinterpret_cast<CUdeviceptr>(c->dstHost)
                                                       : c->dstDevice;
  n->copy_src =
      c->srcMemoryType == CU_MEMORYTYPE_HOST ? c->srcHost : reinterpret_cast<void*>(c->srcDevice);
  n->copy_bytes = c->WidthInBytes;
  return true;
}

CUresult add(CUgraphNode* out, CUgraph g, Node* n, const CUgraphNode* deps, size_t ndeps) {
  if (!out || !g || (ndeps && !deps)) {
    delete n;
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (size_t i = 0; i < ndeps; ++i) n->deps.push_back(reinterpret_cast<Node*>(deps[i]));
  reinterpret_cast<Graph*>(g)->nodes.push_back(n);
  *out = reinterpret_cast<CUgraphNode>(n);
  return CUDA_SUCCESS;
}

int position(GraphExec* e, CUgraphNode node) {
  for (size_t i = 0; i < e->origin.size(); ++i) {
    if (reinterpret_cast<CUgraphNode>(e->origin[i]) == node) return static_cast<int>(i);
  }
  return -1;
}

CUresult launch_graph(CUgraphExec h, CUstream s) {
  if (CUresult r = injected("cuGraphLaunch")) return r;
  if (!h) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::recursive_mutex> g(state().mu);
  if (stream_of(s)->capture) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  auto* e = reinterpret_cast<GraphExec*>(h);
  // Event record nodes are records issued at the launch, in the order the launch runs them
  // (the last one run is the event's latest record): waits and syncs issued after the launch
  // name them, and in asynchronous mode they are pending until the graph has run.
  auto number = [](Node& n) {
    if (n.kind != NodeKind::kEventRecord) return;
    Event* ev = event_of(n.event);
    n.launched = ev;
    n.number = ev ? ++ev->recorded : 0;
  };
  if (!state().async) {  // runs now: no copy
    for (int i : e->order) {
      number(e->nodes[i]);
      run_node(e->nodes[i]);
    }
    state().graph_launches++;
    return CUDA_SUCCESS;
  }
  auto copy = std::make_shared<GraphExec>(*e);
  for (int i : copy->order) number(copy->nodes[i]);
  // A copy: updates of the executable graph after the launch do not change what it runs.
  Op op;
  op.kind = OpKind::kGraph;
  op.graph = copy;
  Stream* st = stream_of(s);
  for (Node& n : copy->nodes) {
    if (n.kind == NodeKind::kEventRecord && n.number) n.launched->pending[n.number] = st;
  }
  submit(st, std::move(op));
  return CUDA_SUCCESS;
}

CUresult begin_capture(CUstream s, CUstreamCaptureMode mode) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Stream* st = stream_of(s);
  if (st == &state().legacy || st->capture) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  st->capture = new_graph();
  st->mode = mode;
  return CUDA_SUCCESS;
}

CUresult end_capture(CUstream s, CUgraph* out) {
  std::lock_guard<std::recursive_mutex> g(state().mu);
  Stream* st = stream_of(s);
  if (!out || !st->capture) return CUDA_ERROR_ILLEGAL_STATE;
  *out = reinterpret_cast<CUgraph>(st->capture);
  st->capture = nullptr;
  return CUDA_SUCCESS;
}

CUresult is_capturing(CUstream s, CUstreamCaptureStatus* status) {
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  *status = stream_of(s)->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

}  // namespace

API cuGraphCreate(CUgraph* g, unsigned int) {
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  *g = reinterpret_cast<CUgraph>(new_graph());
  return CUDA_SUCCESS;
}
API cuGraphDestroy(CUgraph g) {
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  {
    std::lock_guard<std::recursive_mutex> lock(state().mu);
    state().graphs.erase(g);
  }
  for (Node* n : reinterpret_cast<Graph*>(g)->nodes) delete n;
  delete reinterpret_cast<Graph*>(g);
  return CUDA_SUCCESS;
}
API cuGraphAddKernelNode_v2(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t ndeps,
                            const CUDA_KERNEL_NODE_PARAMS* p) {
  Node* n = new Node;
  if (!kernel_node(p, n)) {
    delete n;
    return CUDA_ERROR_INVALID_VALUE;
  }
  return add(out, g, n, deps, ndeps);
}
// Attributes a kernel node can carry, as the driver documents them ("valid for graph nodes");
// the others are refused as the driver refuses them.
API cuGraphKernelNodeSetAttribute(CUgraphNode node, CUkernelNodeAttrID id,
                                  const CUkernelNodeAttrValue* value) {
  if (CUresult r = injected("cuGraphKernelNodeSetAttribute")) return r;
  if (!node || !value || reinterpret_cast<Node*>(node)->kind != NodeKind::kKernel) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard<std::recursive_mutex> g(state().mu);
  state().node_attributes++;
  return CUDA_SUCCESS;
}
API cuGraphAddMemsetNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t ndeps,
                         const CUDA_MEMSET_NODE_PARAMS* p, CUcontext) {
  if (CUresult r = injected("cuGraphAddMemsetNode")) return r;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  Node* n = new Node;
  n->kind = NodeKind::kMemset;
  n->memset = *p;
  return add(out, g, n, deps, ndeps);
}
API cuGraphAddMemcpyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t ndeps,
                         const CUDA_MEMCPY3D* c, CUcontext) {
  Node* n = new Node;
  if (!memcpy_node(c, n)) {
    delete n;
    return CUDA_ERROR_INVALID_VALUE;
  }
  return add(out, g, n, deps, ndeps);
}
API cuGraphAddEventRecordNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t ndeps,
                              CUevent event) {
  if (CUresult r = injected("cuGraphAddEventRecordNode")) return r;
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  Node* n = new Node;
  n->kind = NodeKind::kEventRecord;
  n->event = event;
  return add(out, g, n, deps, ndeps);
}
API cuGraphExecEventRecordNodeSetEvent(CUgraphExec h, CUgraphNode node, CUevent event) {
  if (CUresult r = injected("cuGraphExecEventRecordNodeSetEvent")) return r;
  auto* e = reinterpret_cast<GraphExec*>(h);
  int i = e ? position(e, node) : -1;
  if (i < 0 || !event || e->nodes[i].kind != NodeKind::kEventRecord) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard<std::recursive_mutex> g(state().mu);
  // As the real driver does (H100, driver 580): a node whose event was destroyed cannot be
  // given another one, nor can a node be given a destroyed event.
  if (!event_of(e->nodes[i].event) || !event_of(event)) return CUDA_ERROR_INVALID_VALUE;
  e->nodes[i].event = event;
  return CUDA_SUCCESS;
}
API cuGraphInstantiateWithFlags(CUgraphExec* out, CUgraph g, unsigned long long) {
  if (CUresult r = injected("cuGraphInstantiateWithFlags")) return r;
  if (!out || !g) return CUDA_ERROR_INVALID_VALUE;
  auto* e = new GraphExec;
  for (Node* n : reinterpret_cast<Graph*>(g)->nodes) {
    e->origin.push_back(n);
    e->nodes.push_back(*n);
  }
  std::lock_guard<std::recursive_mutex> lock(state().mu);
  set_order(e);
  *out = reinterpret_cast<CUgraphExec>(e);
  state().graph_execs_live++;
  return CUDA_SUCCESS;
}
API cuGraphExecDestroy(CUgraphExec e) {
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  delete reinterpret_cast<GraphExec*>(e);
  std::lock_guard<std::recursive_mutex> lock(state().mu);
  state().graph_execs_live--;
  return CUDA_SUCCESS;
}
API cuGraphExecKernelNodeSetParams_v2(CUgraphExec h, CUgraphNode node,
                                      const CUDA_KERNEL_NODE_PARAMS* p) {
  if (CUresult r = injected("cuGraphExecKernelNodeSetParams")) return r;
  auto* e = reinterpret_cast<GraphExec*>(h);
  int i = e ? position(e, node) : -1;
  Node n;
  if (i < 0 || !kernel_node(p, &n) || e->nodes[i].kind != NodeKind::kKernel) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  e->nodes[i] = n;
  return CUDA_SUCCESS;
}
API cuGraphExecMemsetNodeSetParams(CUgraphExec h, CUgraphNode node,
                                   const CUDA_MEMSET_NODE_PARAMS* p, CUcontext) {
  if (CUresult r = injected("cuGraphExecMemsetNodeSetParams")) return r;
  auto* e = reinterpret_cast<GraphExec*>(h);
  int i = e ? position(e, node) : -1;
  if (i < 0 || !p || e->nodes[i].kind != NodeKind::kMemset) return CUDA_ERROR_INVALID_VALUE;
  e->nodes[i].memset = *p;
  return CUDA_SUCCESS;
}
API cuGraphExecMemcpyNodeSetParams(CUgraphExec h, CUgraphNode node, const CUDA_MEMCPY3D* c,
                                   CUcontext) {
  if (CUresult r = injected("cuGraphExecMemcpyNodeSetParams")) return r;
  auto* e = reinterpret_cast<GraphExec*>(h);
  int i = e ? position(e, node) : -1;
  Node n;
  if (i < 0 || !memcpy_node(c, &n) || e->nodes[i].kind != NodeKind::kMemcpy) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  e->nodes[i] = n;
  return CUDA_SUCCESS;
}
API cuGraphExecUpdate_v2(CUgraphExec h, CUgraph g, CUgraphExecUpdateResultInfo* info) {
  if (CUresult r = injected("cuGraphExecUpdate")) return r;
  auto* e = reinterpret_cast<GraphExec*>(h);
  auto* graph = reinterpret_cast<Graph*>(g);
  if (!e || !graph) return CUDA_ERROR_INVALID_VALUE;
  bool same = graph->nodes.size() == e->nodes.size();
  for (size_t i = 0; same && i < e->nodes.size(); ++i) {
    same = graph->nodes[i]->kind == e->nodes[i].kind;
  }
  if (info)
    info->result =
        same ? CU_GRAPH_EXEC_UPDATE_SUCCESS : CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
  if (!same) return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  for (size_t i = 0; i < e->nodes.size(); ++i) {
    e->origin[i] = graph->nodes[i];
    e->nodes[i] = *graph->nodes[i];
  }
  std::lock_guard<std::recursive_mutex> lock(state().mu);
  set_order(e);
  return CUDA_SUCCESS;
}
// A graph's nodes as copies, in an order their edges allow, with their edges to `into`'s copies
// (or none, when `into` is null: a child graph's nodes run in that order).
std::vector<Node> ordered_copy(Graph* g) {
  GraphExec e;
  for (Node* n : g->nodes) {
    e.origin.push_back(n);
    e.nodes.push_back(*n);
  }
  set_order(&e);
  std::vector<Node> out;
  for (int i : e.order) {
    out.push_back(e.nodes[i]);
    out.back().deps.clear();
  }
  return out;
}

API cuGraphClone(CUgraph* out, CUgraph original) {
  if (CUresult r = injected("cuGraphClone")) return r;
  if (!out || !original) return CUDA_ERROR_INVALID_VALUE;
  auto* from = reinterpret_cast<Graph*>(original);
  auto* g = new_graph();
  for (Node* n : from->nodes) g->nodes.push_back(new Node(*n));
  for (Node* n : g->nodes) {
    for (Node*& d : n->deps) {
      const auto at = std::find(from->nodes.begin(), from->nodes.end(), d);
      d = g->nodes[at - from->nodes.begin()];
    }
  }
  *out = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}
API cuGraphGetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count) {
  if (!graph || !count) return CUDA_ERROR_INVALID_VALUE;
  auto* g = reinterpret_cast<Graph*>(graph);
  if (nodes) {
    for (size_t i = 0; i < std::min(*count, g->nodes.size()); ++i) {
      nodes[i] = reinterpret_cast<CUgraphNode>(g->nodes[i]);
    }
  }
  *count = g->nodes.size();
  return CUDA_SUCCESS;
}
API cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType* type) {
  if (!node || !type) return CUDA_ERROR_INVALID_VALUE;
  switch (reinterpret_cast<Node*>(node)->kind) {
    case NodeKind::kKernel:
      *type = CU_GRAPH_NODE_TYPE_KERNEL;
      break;
    case NodeKind::kMemset:
      *type = CU_GRAPH_NODE_TYPE_MEMSET;
      break;
    case NodeKind::kMemcpy:
      *type = CU_GRAPH_NODE_TYPE_MEMCPY;
      break;
    case NodeKind::kEventRecord:
      *type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
      break;
    case NodeKind::kEmpty:
      *type = CU_GRAPH_NODE_TYPE_EMPTY;
      break;
    case NodeKind::kChild:
      *type = CU_GRAPH_NODE_TYPE_GRAPH;
      break;
  }
  return CUDA_SUCCESS;
}
API cuGraphAddEmptyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t ndeps) {
  Node* n = new Node;
  n->kind = NodeKind::kEmpty;
  return add(out, g, n, deps, ndeps);
}
// The child graph is copied, as the driver copies it.
API cuGraphAddChildGraphNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t ndeps,
                             CUgraph child) {
  if (CUresult r = injected("cuGraphAddChildGraphNode")) return r;
  if (!child) return CUDA_ERROR_INVALID_VALUE;
  {
    std::lock_guard<std::recursive_mutex> lock(state().mu);
    if (!state().graphs.count(child)) return CUDA_ERROR_INVALID_VALUE;  // destroyed
  }
  for (Node* c : reinterpret_cast<Graph*>(child)->nodes) {
    if (c->kind == NodeKind::kEventRecord) return CUDA_ERROR_NOT_SUPPORTED;  // kept simple here
  }
  Node* n = new Node;
  n->kind = NodeKind::kChild;
  n->child =
      std::make_shared<const std::vector<Node>>(ordered_copy(reinterpret_cast<Graph*>(child)));
  std::lock_guard<std::recursive_mutex> lock(state().mu);
  state().child_nodes++;
  return add(out, g, n, deps, ndeps);
}
API cuGraphLaunch(CUgraphExec e, CUstream s) {
  return launch_graph(e, s);
}
API cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) {
  return launch_graph(e, s);
}
API cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m) {
  return begin_capture(s, m);
}
API cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode m) {
  return begin_capture(s, m);
}
API cuStreamEndCapture(CUstream s, CUgraph* g) {
  return end_capture(s, g);
}
API cuStreamEndCapture_ptsz(CUstream s, CUgraph* g) {
  return end_capture(s, g);
}
API cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus* st) {
  return is_capturing(s, st);
}
API cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus* st) {
  return is_capturing(s, st);
}
