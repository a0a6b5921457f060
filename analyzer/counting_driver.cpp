#include "counting_driver.h"

#include <cstdlib>

namespace pygraph::analyze {
namespace {

// The engine calls plain function pointers without a context argument: one driver at a time.
DriverCounts g_counts;
CountingDriver* g_driver = nullptr;

// Handles the engine only passes back to us: distinct non-null values.
uint64_t g_next_handle = 0x1000;
template <class T>
T new_handle() {
  return reinterpret_cast<T>(g_next_handle += 16);
}

CUresult graph_create(CUgraph* g, unsigned) {
  *g = new_handle<CUgraph>();
  return CUDA_SUCCESS;
}
CUresult add_kernel(CUgraphNode* n, CUgraph, const CUgraphNode*, size_t,
                    const CUDA_KERNEL_NODE_PARAMS*) {
  *n = new_handle<CUgraphNode>();
  return CUDA_SUCCESS;
}
CUresult add_memset(CUgraphNode* n, CUgraph, const CUgraphNode*, size_t,
                    const CUDA_MEMSET_NODE_PARAMS*, CUcontext) {
  *n = new_handle<CUgraphNode>();
  return CUDA_SUCCESS;
}
CUresult add_memcpy(CUgraphNode* n, CUgraph, const CUgraphNode*, size_t, const CUDA_MEMCPY3D*,
                    CUcontext) {
  *n = new_handle<CUgraphNode>();
  return CUDA_SUCCESS;
}
CUresult instantiate(CUgraphExec* e, CUgraph, unsigned long long) {
  *e = new_handle<CUgraphExec>();
  ++g_counts.graphs_instantiated;
  return CUDA_SUCCESS;
}
CUresult node_attribute(CUgraphNode, CUkernelNodeAttrID, const CUkernelNodeAttrValue*) {
  return CUDA_SUCCESS;
}
CUresult set_kernel(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS*) {
  ++g_counts.node_updates;
  return CUDA_SUCCESS;
}
CUresult set_memset(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS*, CUcontext) {
  ++g_counts.node_updates;
  return CUDA_SUCCESS;
}
CUresult set_memcpy(CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D*, CUcontext) {
  ++g_counts.node_updates;
  return CUDA_SUCCESS;
}
CUresult graph_launch(CUgraphExec, CUstream) {
  ++g_counts.graph_launches;
  return CUDA_SUCCESS;
}
CUresult destroy_exec(CUgraphExec) {
  return CUDA_SUCCESS;
}
CUresult destroy_graph(CUgraph) {
  return CUDA_SUCCESS;
}
CUresult ctx_get(CUcontext* c) {
  *c = reinterpret_cast<CUcontext>(0x10);  // one context: the trace has no context changes
  return CUDA_SUCCESS;
}
CUresult ctx_push(CUcontext) {
  return CUDA_SUCCESS;
}
CUresult ctx_pop(CUcontext* c) {
  return ctx_get(c);
}
CUresult host_alloc(void** p, size_t bytes, unsigned) {
  *p = std::malloc(bytes);  // staging for snapshots: written by the engine, never read here
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult event_create(CUevent* e, unsigned) {
  *e = new_handle<CUevent>();
  return CUDA_SUCCESS;
}
CUresult event_record(CUevent, CUstream) {
  return CUDA_SUCCESS;
}
CUresult event_query(CUevent) {
  return CUDA_SUCCESS;  // offline, the GPU is always done
}
CUresult event_destroy(CUevent) {
  return CUDA_SUCCESS;
}
CUresult add_event_record(CUgraphNode* n, CUgraph, const CUgraphNode*, size_t, CUevent) {
  *n = new_handle<CUgraphNode>();
  return CUDA_SUCCESS;
}
CUresult set_event_record(CUgraphExec, CUgraphNode, CUevent) {
  ++g_counts.node_updates;
  return CUDA_SUCCESS;
}
CUresult stream_wait(CUstream, CUevent, unsigned) {
  return CUDA_SUCCESS;  // the engine's own fork and join
}

// The eager entry points, by ABI.
CUresult launch(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                CUstream, void**, void**) {
  ++g_counts.eager_launches;
  return CUDA_SUCCESS;
}
CUresult launch_ex(const CUlaunchConfig*, CUfunction, void**, void**) {
  ++g_counts.eager_launches;
  return CUDA_SUCCESS;
}
// The program's event ops, by ABI (program_calls.h).
CUresult event_record_op(CUevent, CUstream) {
  ++g_counts.eager_event_ops;
  return CUDA_SUCCESS;
}
CUresult event_record_flags_op(CUevent, CUstream, unsigned) {
  ++g_counts.eager_event_ops;
  return CUDA_SUCCESS;
}
CUresult stream_wait_op(CUstream, CUevent, unsigned) {
  ++g_counts.eager_event_ops;
  return CUDA_SUCCESS;
}
// One function per memop ABI (memop_call.h); none reads its arguments.
template <class A, class B>
CUresult memop(A, B, size_t, CUstream) {
  ++g_counts.eager_memops;
  return CUDA_SUCCESS;
}

}  // namespace

CountingDriver::CountingDriver() {
  g_counts = {};
  g_driver = this;
  api_.graph_create = &graph_create;
  api_.graph_add_kernel_node = &add_kernel;
  api_.graph_instantiate = &instantiate;
  api_.graph_kernel_node_set_attribute = &node_attribute;
  api_.graph_exec_kernel_node_set_params = &set_kernel;
  api_.graph_add_memset_node = &add_memset;
  api_.graph_add_memcpy_node = &add_memcpy;
  api_.graph_exec_memset_node_set_params = &set_memset;
  api_.graph_exec_memcpy_node_set_params = &set_memcpy;
  api_.graph_launch = &graph_launch;
  api_.graph_exec_destroy = &destroy_exec;
  api_.graph_destroy = &destroy_graph;
  api_.ctx_get_current = &ctx_get;
  api_.ctx_push_current = &ctx_push;
  api_.ctx_pop_current = &ctx_pop;
  api_.pointer_get_attribute = &pointer_attribute;
  api_.mem_host_alloc = &host_alloc;
  api_.event_create = &event_create;
  api_.event_record = &event_record;
  api_.event_query = &event_query;
  api_.event_destroy = &event_destroy;
  api_.graph_add_event_record_node = &add_event_record;
  api_.graph_exec_event_record_node_set_event = &set_event_record;
  api_.stream_wait_event = &stream_wait;
}

CountingDriver::~CountingDriver() {
  if (g_driver == this) g_driver = nullptr;
}

void* CountingDriver::launch_entry() const {
  return reinterpret_cast<void*>(&launch);
}
void* CountingDriver::launch_ex_entry() const {
  return reinterpret_cast<void*>(&launch_ex);
}
void* CountingDriver::memop_entry(Op op) const {
  switch (op) {
    case Op::MemsetD8Async:
      return reinterpret_cast<void*>(&memop<CUdeviceptr, unsigned char>);
    case Op::MemsetD16Async:
      return reinterpret_cast<void*>(&memop<CUdeviceptr, unsigned short>);
    case Op::MemsetD32Async:
      return reinterpret_cast<void*>(&memop<CUdeviceptr, unsigned int>);
    case Op::MemcpyHtoDAsync:
      return reinterpret_cast<void*>(&memop<CUdeviceptr, const void*>);
    case Op::MemcpyDtoHAsync:
      return reinterpret_cast<void*>(&memop<void*, CUdeviceptr>);
    default:  // MemcpyDtoDAsync, MemcpyAsync
      return reinterpret_cast<void*>(&memop<CUdeviceptr, CUdeviceptr>);
  }
}

void* CountingDriver::event_entry(Op op) const {
  switch (op) {
    case Op::EventRecord:
      return reinterpret_cast<void*>(&event_record_op);
    case Op::EventRecordWithFlags:
      return reinterpret_cast<void*>(&event_record_flags_op);
    default:  // StreamWaitEvent
      return reinterpret_cast<void*>(&stream_wait_op);
  }
}

const DriverCounts& CountingDriver::counts() {
  return g_counts;
}

CUresult CountingDriver::pointer_attribute(void* data, CUpointer_attribute attr, CUdeviceptr ptr) {
  if (!g_driver || attr != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_INVALID_VALUE;
  if (auto k = g_driver->kinds_.find(ptr); k != g_driver->kinds_.end()) {
    // Answered as the process's driver answered (GraphEngine::memory_kind reads it back).
    switch (k->second) {
      case trace::MemoryKind::kDevice:
        *static_cast<unsigned*>(data) = CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
      case trace::MemoryKind::kPinned:
        *static_cast<unsigned*>(data) = CU_MEMORYTYPE_HOST;
        return CUDA_SUCCESS;
      case trace::MemoryKind::kPageable:
        return CUDA_ERROR_INVALID_VALUE;
      default:
        *static_cast<unsigned*>(data) = CU_MEMORYTYPE_UNIFIED;
        return CUDA_SUCCESS;
    }
  }
  auto it = g_driver->ranges_.upper_bound(ptr);
  if (it != g_driver->ranges_.begin()) {
    --it;
    if (ptr < it->first + it->second.bytes) {
      *static_cast<unsigned*>(data) =
          it->second.kind == kDevice ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;  // what the driver says of pageable memory
}

}  // namespace pygraph::analyze
