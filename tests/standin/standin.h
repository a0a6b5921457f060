// Test-facing API of the CPU stand-in for the CUDA driver (libcuda.so.1 built under tests/).
//
// "Kernels" are host functions registered by name; cuModuleLoadData/cuLibraryLoadData take any
// image and resolve names against this registry (a null module or library is a default one that
// is never unloaded). Unloading is real: the module's functions fail to launch, and their handles
// are handed out again to the next module's functions, as a driver may. By default all work
// executes at submission, in call order, so a launch the shim holds back and fails to submit
// before a host read shows up as a wrong value. In asynchronous mode (STANDIN_ASYNC=1 or
// standin_set_async) work is queued per stream and runs only when the program observes or orders
// it (syncs, queries, event waits, synchronous copies, frees), streams created later first and
// graph nodes added later first where nothing orders them, so that a missing cross-stream
// dependency computes something else (standin_async.cpp has the rules). Device memory is host
// memory: a CUdeviceptr is a host address.
#pragma once

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*standin_kernel_fn)(const unsigned grid[3], const unsigned block[3], void** params);

// Registers (or replaces) a kernel taking `param_count` parameters of the given sizes.
void standin_register_kernel(const char* name, standin_kernel_fn fn, int param_count,
                             const size_t* param_sizes);
// Makes cuFuncGetParamInfo / cuKernelGetParamInfo refuse to describe the kernel, as drivers
// before 12.4 do for every kernel: its launches have an unknown parameter layout.
void standin_hide_layout(const char* name);

// Counts of work the stand-in executed, for tests that check nothing was dropped or repeated.
unsigned long long standin_kernels_executed(void);
unsigned long long standin_graph_launches(void);
unsigned long long standin_node_attributes(void);  // attributes set on kernel nodes
unsigned long long standin_child_nodes(void);      // child graph nodes added
long long standin_graph_execs_live(void);          // instantiated and not destroyed
// Records of an event so far, by calls and by graph record nodes (0 for an unknown handle).
unsigned long long standin_event_records(CUevent e);

// The simulated GPU time each kernel takes when it runs (1000 ns by default, or
// STANDIN_KERNEL_NS): cuEventElapsedTime answers the sum between two events' records.
void standin_set_kernel_ns(unsigned long long ns);
// The simulated GPU idles `ns` now (its clock moves on with nothing run): as while the host
// pauses with nothing queued.
void standin_gpu_idle(unsigned long long ns);

// Asynchronous mode on or off (the environment's STANDIN_ASYNC=1 sets it at start); switching
// it off first runs everything queued.
void standin_set_async(int on);
int standin_async(void);
// In asynchronous mode, whether cuEventElapsedTime on a queued record runs the work up to it
// after answering "not ready" (as a query does). Off by default: reading a time never moves a
// real GPU on, and work it ran would change what the program's own queries see next. Unit
// tests whose programs never sync turn it on so that the engine's timings complete.
void standin_set_timer_progress(int on);

// A new context (the stand-in's contexts only order nothing: every context sees all memory), for
// programs that switch between contexts with cuCtxSetCurrent / cuCtxPushCurrent.
CUcontext standin_context_create(void);

// Makes the next `count` calls of driver function `name` ("cuGraphInstantiateWithFlags", ...)
// fail with `result` without doing anything; count 0 clears.
void standin_inject_failure(const char* name, int count, CUresult result);

// The stand-in's own entry point for `name` ("cuLaunchKernel"), bypassing every interposer:
// benchmarks compare it with the pointer a shim hands out, in one process.
void* standin_entry_point(const char* name);

#ifdef __cplusplus
}
#endif
