// What the generated-program binaries of the randomized differential tests share
// (random_program.cpp, random_loop_program.cpp, random_streams_program.cpp): the driver's entry
// points, the digest of what the host observed, and one clear line and a failing exit for a
// driver call that fails.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "runtime_bootstrap.h"
#include "standin.h"

namespace random_support {

// The driver's entry points the generated programs use, found as the CUDA runtime finds them
// (cuGetProcAddress), so that every call goes through the shim's wrappers.
struct Api {
  decltype(&cuLaunchKernel) launch;
  decltype(&cuLaunchKernelEx) launch_ex;
  decltype(&cuModuleGetFunction) get_function;
  decltype(&cuModuleLoadData) module_load;
  decltype(&cuModuleUnload) module_unload;
  decltype(&cuCtxGetCurrent) ctx_get;
  decltype(&cuCtxSetCurrent) ctx_set;
  decltype(&cuStreamCreate) stream_create;
  decltype(&cuStreamDestroy_v2) stream_destroy;
  decltype(&cuStreamSynchronize) stream_sync;
  decltype(&cuStreamQuery) stream_query;
  decltype(&cuStreamWaitEvent) wait_event;
  decltype(&cuEventCreate) event_create;
  decltype(&cuEventDestroy_v2) event_destroy;
  decltype(&cuEventRecord) event_record;
  decltype(&cuEventSynchronize) event_sync;
  decltype(&cuEventQuery) event_query;
  decltype(&cuCtxSynchronize_v2) ctx_sync;
  decltype(&cuMemAlloc_v2) alloc;
  decltype(&cuMemFree_v2) free;
  decltype(&cuMemsetD32Async) memset_async;
  decltype(&cuMemsetD8Async) memset8_async;
  decltype(&cuMemcpyDtoDAsync_v2) copy_dd_async;
  decltype(&cuMemcpyAsync) copy_async;
  decltype(&cuMemcpyHtoDAsync_v2) copy_hd_async;
  decltype(&cuMemcpyDtoHAsync_v2) copy_dh_async;
  decltype(&cuMemAllocHost_v2) alloc_host;
  decltype(&cuMemFreeHost) free_host;
  decltype(&cuMemcpyDtoH_v2) copy_dh;
  decltype(&cuMemHostRegister_v2) host_register;
  decltype(&cuMemHostUnregister) host_unregister;
  decltype(&cuLaunchHostFunc) launch_host_func;
  // The program's own graphs.
  decltype(&cuStreamBeginCapture_v2) begin_capture;
  decltype(&cuStreamEndCapture) end_capture;
  decltype(&cuGraphInstantiateWithFlags) graph_instantiate;  // "cuGraphInstantiate" at 13000
  decltype(&cuGraphLaunch) graph_launch;
  decltype(&cuGraphExecDestroy) graph_exec_destroy;
  decltype(&cuGraphDestroy) graph_destroy;
};

inline bool load(Api* a) {
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  return get && standin::resolve(get, "cuLaunchKernel", &a->launch) &&
         standin::resolve(get, "cuLaunchKernelEx", &a->launch_ex) &&
         standin::resolve(get, "cuModuleGetFunction", &a->get_function) &&
         standin::resolve(get, "cuModuleLoadData", &a->module_load) &&
         standin::resolve(get, "cuModuleUnload", &a->module_unload) &&
         standin::resolve(get, "cuCtxGetCurrent", &a->ctx_get) &&
         standin::resolve(get, "cuCtxSetCurrent", &a->ctx_set) &&
         standin::resolve(get, "cuStreamCreate", &a->stream_create) &&
         standin::resolve(get, "cuStreamDestroy", &a->stream_destroy) &&
         standin::resolve(get, "cuStreamSynchronize", &a->stream_sync) &&
         standin::resolve(get, "cuStreamQuery", &a->stream_query) &&
         standin::resolve(get, "cuStreamWaitEvent", &a->wait_event) &&
         standin::resolve(get, "cuEventCreate", &a->event_create) &&
         standin::resolve(get, "cuEventDestroy", &a->event_destroy) &&
         standin::resolve(get, "cuEventRecord", &a->event_record) &&
         standin::resolve(get, "cuEventSynchronize", &a->event_sync) &&
         standin::resolve(get, "cuEventQuery", &a->event_query) &&
         standin::resolve(get, "cuCtxSynchronize", &a->ctx_sync) &&
         standin::resolve(get, "cuMemAlloc", &a->alloc) &&
         standin::resolve(get, "cuMemFree", &a->free) &&
         standin::resolve(get, "cuMemsetD32Async", &a->memset_async) &&
         standin::resolve(get, "cuMemsetD8Async", &a->memset8_async) &&
         standin::resolve(get, "cuMemcpyDtoDAsync", &a->copy_dd_async) &&
         standin::resolve(get, "cuMemcpyAsync", &a->copy_async) &&
         standin::resolve(get, "cuMemcpyHtoDAsync", &a->copy_hd_async) &&
         standin::resolve(get, "cuMemcpyDtoHAsync", &a->copy_dh_async) &&
         standin::resolve(get, "cuMemAllocHost", &a->alloc_host) &&
         standin::resolve(get, "cuMemFreeHost", &a->free_host) &&
         standin::resolve(get, "cuMemcpyDtoH", &a->copy_dh) &&
         standin::resolve(get, "cuMemHostRegister", &a->host_register) &&
         standin::resolve(get, "cuMemHostUnregister", &a->host_unregister) &&
         standin::resolve(get, "cuLaunchHostFunc", &a->launch_host_func) &&
         standin::resolve(get, "cuStreamBeginCapture", &a->begin_capture) &&
         standin::resolve(get, "cuStreamEndCapture", &a->end_capture) &&
         standin::resolve(get, "cuGraphInstantiate", &a->graph_instantiate) &&
         standin::resolve(get, "cuGraphLaunch", &a->graph_launch) &&
         standin::resolve(get, "cuGraphExecDestroy", &a->graph_exec_destroy) &&
         standin::resolve(get, "cuGraphDestroy", &a->graph_destroy);
}

struct Digest {  // FNV-1a
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
};

inline void ok_or_exit(CUresult r, const char* program, unsigned seed, const char* call) {
  if (r == CUDA_SUCCESS) return;
  std::fprintf(stderr, "%s: seed %u: %s failed\n", program, seed, call);
  std::exit(1);
}

// A stand-in kernel a program registers and gets a CUfunction for.
struct Kernel {
  const char* name;
  standin_kernel_fn fn;
  int nparams;
  const size_t* sizes;
};

// What every generated-program binary's main does: "PROGRAM FIRST_SEED COUNT", the driver's entry
// points, its kernels registered and looked up into `fn`, then one line "<seed> <digest>" per
// seed from `run(cu, seed)`. Returns the exit status.
template <class Run>
int run_seeds(int argc, char** argv, const char* program, const Kernel* kernels, int count,
              CUfunction* fn, Api* cu, Run run) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FIRST_SEED COUNT\n", program);
    return 2;
  }
  if (!load(cu)) {
    std::fprintf(stderr, "%s: driver entry points missing\n", program);
    return 1;
  }
  for (int i = 0; i < count; ++i) {
    standin_register_kernel(kernels[i].name, kernels[i].fn, kernels[i].nparams, kernels[i].sizes);
    if (cu->get_function(&fn[i], nullptr, kernels[i].name) != CUDA_SUCCESS) return 1;
  }
  const unsigned first = static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10));
  const unsigned seeds = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
  for (unsigned seed = first; seed < first + seeds; ++seed) {
    std::printf("%u %016llx\n", seed, static_cast<unsigned long long>(run(*cu, seed)));
  }
  return 0;
}

}  // namespace random_support

// In a function with a `seed` in scope, in a file that defines kProgram.
#define OK(x) random_support::ok_or_exit((x), kProgram, seed, #x)
