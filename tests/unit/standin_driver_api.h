// The core's DriverApi filled with the driver stand-in's own entry points, for unit tests of
// the parts of the core that call the driver (graph chunks, the engine).
#pragma once

#include <gtest/gtest.h>

#include "driver/driver_api.h"
#include "driver/function_table.h"
#include "graph/graph_engine.h"
#include "standin.h"

namespace pygraph::test {

template <class T>
void take(T* out, const char* name) {
  *out = reinterpret_cast<T>(standin_entry_point(name));
  ASSERT_NE(*out, nullptr) << name;
}

inline void fill_standin_driver_api(DriverApi* api) {
  take(&api->func_get_name, "cuFuncGetName");
  take(&api->func_get_param_info, "cuFuncGetParamInfo");
  take(&api->kernel_get_name, "cuKernelGetName");
  take(&api->kernel_get_param_info, "cuKernelGetParamInfo");
  take(&api->func_get_module, "cuFuncGetModule");
  take(&api->kernel_get_library, "cuKernelGetLibrary");
  take(&api->library_get_module, "cuLibraryGetModule");
  take(&api->graph_create, "cuGraphCreate");
  take(&api->graph_add_kernel_node, "cuGraphAddKernelNode_v2");
  take(&api->graph_instantiate, "cuGraphInstantiateWithFlags");
  take(&api->graph_exec_kernel_node_set_params, "cuGraphExecKernelNodeSetParams_v2");
  take(&api->graph_launch, "cuGraphLaunch");
  take(&api->graph_exec_destroy, "cuGraphExecDestroy");
  take(&api->graph_destroy, "cuGraphDestroy");
  take(&api->graph_kernel_node_set_attribute, "cuGraphKernelNodeSetAttribute");
  take(&api->ctx_get_current, "cuCtxGetCurrent");
  take(&api->ctx_push_current, "cuCtxPushCurrent_v2");
  take(&api->ctx_pop_current, "cuCtxPopCurrent_v2");
  take(&api->graph_add_memset_node, "cuGraphAddMemsetNode");
  take(&api->graph_add_memcpy_node, "cuGraphAddMemcpyNode");
  take(&api->graph_exec_memset_node_set_params, "cuGraphExecMemsetNodeSetParams");
  take(&api->graph_exec_memcpy_node_set_params, "cuGraphExecMemcpyNodeSetParams");
  take(&api->pointer_get_attribute, "cuPointerGetAttribute");
  take(&api->mem_host_alloc, "cuMemHostAlloc");
  take(&api->event_create, "cuEventCreate");
  take(&api->event_record, "cuEventRecord");
  take(&api->event_query, "cuEventQuery");
  take(&api->event_destroy, "cuEventDestroy_v2");
  take(&api->event_elapsed_time, "cuEventElapsedTime");
  take(&api->graph_add_event_record_node, "cuGraphAddEventRecordNode");
  take(&api->graph_exec_event_record_node_set_event, "cuGraphExecEventRecordNodeSetEvent");
  take(&api->stream_wait_event, "cuStreamWaitEvent");
  take(&api->stream_synchronize, "cuStreamSynchronize");
  take(&api->stream_get_flags, "cuStreamGetFlags");
}

// Registers `fn` as a stand-in kernel of `nparams` parameters with these sizes, gets its
// CUfunction as a program would (cuModuleGetFunction) and returns the core's info for it.
inline const FunctionInfo* standin_kernel(FunctionTable* table, const char* name,
                                          standin_kernel_fn fn, int nparams, const size_t* sizes) {
  standin_register_kernel(name, fn, nparams, sizes);
  decltype(&cuModuleGetFunction) get_function;
  take(&get_function, "cuModuleGetFunction");
  CUfunction f = nullptr;
  EXPECT_EQ(get_function(&f, nullptr, name), CUDA_SUCCESS) << name;
  bool created;
  return table->lookup(reinterpret_cast<uint64_t>(f), &created);
}

// A launch of `f` as the hooks would hand it to the engine.
inline EngineLaunch engine_launch(Op op, void* eager, const FunctionInfo* f, unsigned grid,
                                  unsigned block, CUstream stream, void** params,
                                  const CUlaunchAttribute* attrs = nullptr, unsigned nattrs = 0) {
  EngineLaunch l{};
  l.op = op;
  l.door = trace::Door::kProcAddr;
  l.function = reinterpret_cast<CUfunction>(f->handle);
  l.info = f;
  l.grid[0] = grid;
  l.grid[1] = l.grid[2] = 1;
  l.block[0] = block;
  l.block[1] = l.block[2] = 1;
  l.stream = stream;
  l.params = params;
  l.attrs = attrs;
  l.attr_count = nattrs;
  l.eager = eager;
  return l;
}

}  // namespace pygraph::test
