// The few driver functions the core itself calls, as plain pointers.
//
// The core never links or loads the driver: the hook layer fills this table with the real
// driver's entry points, and unit tests fill it with fakes. A null entry means "not available"
// (an older driver), and the core degrades instead of failing.
#pragma once

#include <cuda.h>

namespace pygraph {

struct DriverApi {
  CUresult (*func_get_name)(const char** name, CUfunction f) = nullptr;
  CUresult (*func_get_param_info)(CUfunction f, size_t index, size_t* offset,
                                  size_t* size) = nullptr;
  CUresult (*kernel_get_name)(const char** name, CUkernel k) = nullptr;
  CUresult (*kernel_get_param_info)(CUkernel k, size_t index, size_t* offset,
                                    size_t* size) = nullptr;
  // The module (library) a kernel belongs to, so that an unload forgets only its kernels
  // (module_unload.h).
  CUresult (*func_get_module)(CUmodule* module, CUfunction f) = nullptr;
  CUresult (*kernel_get_library)(CUlibrary* library, CUkernel k) = nullptr;
  CUresult (*library_get_module)(CUmodule* module, CUlibrary library) = nullptr;

  // Graphs, for graph mode (graph_chunk.h).
  CUresult (*graph_create)(CUgraph* graph, unsigned int flags) = nullptr;
  CUresult (*graph_add_kernel_node)(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                    size_t ndeps, const CUDA_KERNEL_NODE_PARAMS* params) = nullptr;
  CUresult (*graph_instantiate)(CUgraphExec* exec, CUgraph graph,
                                unsigned long long flags) = nullptr;
  CUresult (*graph_kernel_node_set_attribute)(CUgraphNode node, CUkernelNodeAttrID attr,
                                              const CUkernelNodeAttrValue* value) = nullptr;
  CUresult (*graph_exec_kernel_node_set_params)(CUgraphExec exec, CUgraphNode node,
                                                const CUDA_KERNEL_NODE_PARAMS* params) = nullptr;
  CUresult (*graph_add_memset_node)(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                    size_t ndeps, const CUDA_MEMSET_NODE_PARAMS* params,
                                    CUcontext ctx) = nullptr;
  CUresult (*graph_add_memcpy_node)(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                    size_t ndeps, const CUDA_MEMCPY3D* params,
                                    CUcontext ctx) = nullptr;
  CUresult (*graph_exec_memset_node_set_params)(CUgraphExec exec, CUgraphNode node,
                                                const CUDA_MEMSET_NODE_PARAMS* params,
                                                CUcontext ctx) = nullptr;
  CUresult (*graph_exec_memcpy_node_set_params)(CUgraphExec exec, CUgraphNode node,
                                                const CUDA_MEMCPY3D* params,
                                                CUcontext ctx) = nullptr;
  CUresult (*graph_launch)(CUgraphExec exec, CUstream stream) = nullptr;
  // Several streams in one graph (stream_fork.h): the program's event records as nodes, and the
  // fork and join around a launch (an event recorded on one stream, waited for on another).
  CUresult (*graph_add_event_record_node)(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                          size_t ndeps, CUevent event) = nullptr;
  CUresult (*graph_exec_event_record_node_set_event)(CUgraphExec exec, CUgraphNode node,
                                                     CUevent event) = nullptr;
  CUresult (*stream_wait_event)(CUstream stream, CUevent event, unsigned int flags) = nullptr;
  CUresult (*stream_synchronize)(CUstream stream) = nullptr;  // when no event can order
  // Whether a stream is non-blocking: only such a stream joins a chunk on the legacy stream.
  CUresult (*stream_get_flags)(CUstream stream, unsigned int* flags) = nullptr;
  CUresult (*graph_exec_destroy)(CUgraphExec exec) = nullptr;
  CUresult (*graph_destroy)(CUgraph graph) = nullptr;
  // The program's own graphs as child graphs of a chunk's (program_graphs.h): what an
  // instantiated graph holds, kept as a copy, and that copy as a node.
  CUresult (*graph_clone)(CUgraph* clone, CUgraph original) = nullptr;
  CUresult (*graph_get_nodes)(CUgraph graph, CUgraphNode* nodes, size_t* count) = nullptr;
  CUresult (*graph_node_get_type)(CUgraphNode node, CUgraphNodeType* type) = nullptr;
  CUresult (*graph_add_child_graph_node)(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                         size_t ndeps, CUgraph child) = nullptr;

  // Contexts: recorded work is submitted in the context it was recorded in.
  CUresult (*ctx_get_current)(CUcontext* ctx) = nullptr;
  CUresult (*ctx_push_current)(CUcontext ctx) = nullptr;
  CUresult (*ctx_pop_current)(CUcontext* ctx) = nullptr;

  // Memory operations in graphs: what memory an address is, pinned staging for snapshots of
  // pageable copies, and events that say when a snapshot was read.
  CUresult (*pointer_get_attribute)(void* data, CUpointer_attribute attribute,
                                    CUdeviceptr ptr) = nullptr;
  CUresult (*mem_host_alloc)(void** p, size_t bytes, unsigned int flags) = nullptr;
  CUresult (*event_create)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*event_record)(CUevent event, CUstream stream) = nullptr;
  CUresult (*event_query)(CUevent event) = nullptr;
  CUresult (*event_destroy)(CUevent event) = nullptr;
  // The GPU time of a chunk's replay, from two timing events around its launch (gpu_timer.h).
  CUresult (*event_elapsed_time)(float* ms, CUevent start, CUevent end) = nullptr;

  // What a measured decision was made on (decision_cache.h): the device, the driver.
  CUresult (*ctx_get_device)(CUdevice* device) = nullptr;
  CUresult (*device_get_name)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*driver_get_version)(int* version) = nullptr;
};

// Every entry above with the driver symbol the hook layer loads it from (in the order above):
// one list for loading them and for counting them (driver_call_counts.h).
// clang-format off
#define PYGRAPH_DRIVER_API_ENTRIES(X) \
  X(func_get_name, "cuFuncGetName") \
  X(func_get_param_info, "cuFuncGetParamInfo") \
  X(kernel_get_name, "cuKernelGetName") \
  X(kernel_get_param_info, "cuKernelGetParamInfo") \
  X(func_get_module, "cuFuncGetModule") \
  X(kernel_get_library, "cuKernelGetLibrary") \
  X(library_get_module, "cuLibraryGetModule") \
  X(graph_create, "cuGraphCreate") \
  X(graph_add_kernel_node, "cuGraphAddKernelNode_v2") \
  X(graph_instantiate, "cuGraphInstantiateWithFlags") \
  X(graph_kernel_node_set_attribute, "cuGraphKernelNodeSetAttribute") \
  X(graph_exec_kernel_node_set_params, "cuGraphExecKernelNodeSetParams_v2") \
  X(graph_add_memset_node, "cuGraphAddMemsetNode") \
  X(graph_add_memcpy_node, "cuGraphAddMemcpyNode") \
  X(graph_exec_memset_node_set_params, "cuGraphExecMemsetNodeSetParams") \
  X(graph_exec_memcpy_node_set_params, "cuGraphExecMemcpyNodeSetParams") \
  X(graph_launch, "cuGraphLaunch") \
  X(graph_add_event_record_node, "cuGraphAddEventRecordNode") \
  X(graph_exec_event_record_node_set_event, "cuGraphExecEventRecordNodeSetEvent") \
  X(stream_wait_event, "cuStreamWaitEvent") \
  X(stream_synchronize, "cuStreamSynchronize") \
  X(stream_get_flags, "cuStreamGetFlags") \
  X(graph_exec_destroy, "cuGraphExecDestroy") \
  X(graph_destroy, "cuGraphDestroy") \
  X(graph_clone, "cuGraphClone") \
  X(graph_get_nodes, "cuGraphGetNodes") \
  X(graph_node_get_type, "cuGraphNodeGetType") \
  X(graph_add_child_graph_node, "cuGraphAddChildGraphNode") \
  X(ctx_get_current, "cuCtxGetCurrent") \
  X(ctx_push_current, "cuCtxPushCurrent_v2") \
  X(ctx_pop_current, "cuCtxPopCurrent_v2") \
  X(pointer_get_attribute, "cuPointerGetAttribute") \
  X(mem_host_alloc, "cuMemHostAlloc") \
  X(event_create, "cuEventCreate") \
  X(event_record, "cuEventRecord") \
  X(event_query, "cuEventQuery") \
  X(event_destroy, "cuEventDestroy_v2") \
  X(event_elapsed_time, "cuEventElapsedTime") \
  X(ctx_get_device, "cuCtxGetDevice") \
  X(device_get_name, "cuDeviceGetName") \
  X(driver_get_version, "cuDriverGetVersion")
// clang-format on

}  // namespace pygraph
