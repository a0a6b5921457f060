// The driver operations pygraph sees, shared by the hooks, the trace format and the analyzer.
//
// An op is a driver API function regardless of its ABI version or per-thread-stream variant:
// cuMemcpyHtoD, cuMemcpyHtoD_v2 and cuMemcpyHtoD_v2_ptds are all Op::MemcpyHtoD. Op numbers are
// written into traces, so new ops go at the end of the list and existing ones never move.
#pragma once

#include <cstdint>

namespace pygraph {

// What an op does to GPU work, as far as ordering and host visibility are concerned.
enum class OpClass : uint8_t {
  kLaunch,       // a kernel launch
  kSync,         // the host waits for GPU work
  kQuery,        // the host observes completion without waiting
  kEvent,        // an event is recorded into a stream
  kStreamOrder,  // orders work between streams or with memory values
  kCopy,         // a memory copy
  kMemset,       // a memory set
  kAlloc,        // memory is allocated or mapped
  kFree,         // memory is freed or unmapped
  kHostFunc,     // a host function runs in stream order
  kGraphLaunch,  // the program launches its own graph
  kCapture,      // stream capture begins, ends or is queried
  kUnload,       // a module or library is unloaded
  kProcAddr,     // cuGetProcAddress itself
  kContext,      // the current context changes, or a context or stream ends
  kExternal,     // work tied to something outside CUDA's view (semaphores, prefetches)
  kGraphExec,    // the program instantiates, changes or destroys an executable graph
};

// X(name, class, blocks_host): blocks_host marks ops that may make the host wait for the GPU
// (synchronous copies and sets included). Name is the driver function without its "cu" prefix.
#define PYGRAPH_OPS(X)                                                 \
  X(LaunchKernel, kLaunch, false)                                      \
  X(LaunchKernelEx, kLaunch, false)                                    \
  X(LaunchCooperativeKernel, kLaunch, false)                           \
  X(LaunchHostFunc, kHostFunc, false)                                  \
  X(StreamAddCallback, kHostFunc, false)                               \
  X(GraphLaunch, kGraphLaunch, false)                                  \
  X(StreamSynchronize, kSync, true)                                    \
  X(StreamQuery, kQuery, false)                                        \
  X(StreamWaitEvent, kStreamOrder, false)                              \
  X(EventRecord, kEvent, false)                                        \
  X(EventRecordWithFlags, kEvent, false)                               \
  X(EventSynchronize, kSync, true)                                     \
  X(EventQuery, kQuery, false)                                         \
  X(CtxSynchronize, kSync, true)                                       \
  X(StreamWaitValue32, kStreamOrder, false)                            \
  X(StreamWaitValue64, kStreamOrder, false)                            \
  X(StreamWriteValue32, kStreamOrder, false)                           \
  X(StreamWriteValue64, kStreamOrder, false)                           \
  X(StreamBatchMemOp, kStreamOrder, false)                             \
  X(StreamBeginCapture, kCapture, false)                               \
  X(StreamBeginCaptureToGraph, kCapture, false)                        \
  X(StreamEndCapture, kCapture, false)                                 \
  X(StreamIsCapturing, kCapture, false)                                \
  X(Memcpy, kCopy, true)                                               \
  X(MemcpyAsync, kCopy, false)                                         \
  X(MemcpyPeer, kCopy, true)                                           \
  X(MemcpyPeerAsync, kCopy, false)                                     \
  X(MemcpyHtoD, kCopy, true)                                           \
  X(MemcpyDtoH, kCopy, true)                                           \
  X(MemcpyDtoD, kCopy, true)                                           \
  X(MemcpyHtoDAsync, kCopy, false)                                     \
  X(MemcpyDtoHAsync, kCopy, false)                                     \
  X(MemcpyDtoDAsync, kCopy, false)                                     \
  X(Memcpy2D, kCopy, true)                                             \
  X(Memcpy2DAsync, kCopy, false)                                       \
  X(Memcpy2DUnaligned, kCopy, true)                                    \
  X(Memcpy3D, kCopy, true)                                             \
  X(Memcpy3DAsync, kCopy, false)                                       \
  X(Memcpy3DPeer, kCopy, true)                                         \
  X(Memcpy3DPeerAsync, kCopy, false)                                   \
  X(MemcpyBatchAsync, kCopy, false)                                    \
  X(MemcpyDtoA, kCopy, true)                                           \
  X(MemcpyAtoD, kCopy, true)                                           \
  X(MemcpyHtoA, kCopy, true)                                           \
  X(MemcpyAtoH, kCopy, true)                                           \
  X(MemcpyAtoA, kCopy, true)                                           \
  X(MemcpyHtoAAsync, kCopy, false)                                     \
  X(MemcpyAtoHAsync, kCopy, false)                                     \
  X(MemsetD8, kMemset, true)                                           \
  X(MemsetD16, kMemset, true)                                          \
  X(MemsetD32, kMemset, true)                                          \
  X(MemsetD2D8, kMemset, true)                                         \
  X(MemsetD2D16, kMemset, true)                                        \
  X(MemsetD2D32, kMemset, true)                                        \
  X(MemsetD8Async, kMemset, false)                                     \
  X(MemsetD16Async, kMemset, false)                                    \
  X(MemsetD32Async, kMemset, false)                                    \
  X(MemsetD2D8Async, kMemset, false)                                   \
  X(MemsetD2D16Async, kMemset, false)                                  \
  X(MemsetD2D32Async, kMemset, false)                                  \
  X(MemAlloc, kAlloc, false)                                           \
  X(MemAllocPitch, kAlloc, false)                                      \
  X(MemAllocManaged, kAlloc, false)                                    \
  X(MemAllocAsync, kAlloc, false)                                      \
  X(MemAllocFromPoolAsync, kAlloc, false)                              \
  X(MemAllocHost, kAlloc, false)                                       \
  X(MemHostAlloc, kAlloc, false)                                       \
  X(MemHostRegister, kAlloc, false)                                    \
  X(MemCreate, kAlloc, false)                                          \
  X(MemMap, kAlloc, false)                                             \
  X(MemAddressReserve, kAlloc, false)                                  \
  X(MemFree, kFree, true)                                              \
  X(MemFreeAsync, kFree, false)                                        \
  X(MemFreeHost, kFree, true)                                          \
  X(MemHostUnregister, kFree, true)                                    \
  X(MemUnmap, kFree, true)                                             \
  X(MemRelease, kFree, true)                                           \
  X(MemAddressFree, kFree, true)                                       \
  X(ModuleUnload, kUnload, true)                                       \
  X(LibraryUnload, kUnload, true)                                      \
  X(GetProcAddress, kProcAddr, false)                                  \
  X(StreamDestroy, kContext, false)                                    \
  X(CtxDestroy, kContext, true)                                        \
  X(CtxSetCurrent, kContext, false)                                    \
  X(CtxPushCurrent, kContext, false)                                   \
  X(CtxPopCurrent, kContext, false)                                    \
  X(DevicePrimaryCtxReset, kContext, true)                             \
  X(MemPrefetchAsync, kExternal, false)                                \
  X(StreamAttachMemAsync, kExternal, false)                            \
  X(SignalExternalSemaphoresAsync, kExternal, false)                   \
  X(WaitExternalSemaphoresAsync, kExternal, false)                     \
  X(CtxCreate, kContext, false)                                        \
  X(EventDestroy, kEvent, false)                                       \
  X(GraphInstantiate, kGraphExec, false)                               \
  X(GraphInstantiateWithFlags, kGraphExec, false)                      \
  X(GraphInstantiateWithParams, kGraphExec, false)                     \
  X(GraphExecDestroy, kGraphExec, false)                               \
  X(GraphExecUpdate, kGraphExec, false)                                \
  X(GraphExecKernelNodeSetParams, kGraphExec, false)                   \
  X(GraphExecMemcpyNodeSetParams, kGraphExec, false)                   \
  X(GraphExecMemsetNodeSetParams, kGraphExec, false)                   \
  X(GraphExecHostNodeSetParams, kGraphExec, false)                     \
  X(GraphExecChildGraphNodeSetParams, kGraphExec, false)               \
  X(GraphExecEventRecordNodeSetEvent, kGraphExec, false)               \
  X(GraphExecEventWaitNodeSetEvent, kGraphExec, false)                 \
  X(GraphExecExternalSemaphoresSignalNodeSetParams, kGraphExec, false) \
  X(GraphExecExternalSemaphoresWaitNodeSetParams, kGraphExec, false)   \
  X(GraphNodeSetEnabled, kGraphExec, false)                            \
  X(GraphExecBatchMemOpNodeSetParams, kGraphExec, false)               \
  X(GraphExecNodeSetParams, kGraphExec, false)                         \
  X(DevicePrimaryCtxRelease, kContext, true)                           \
  X(EventElapsedTime, kQuery, false)                                   \
  X(EventCreate, kEvent, false)

enum class Op : uint16_t {
#define PYGRAPH_OP_ENUM(name, cls, blocks) name,
  PYGRAPH_OPS(PYGRAPH_OP_ENUM)
#undef PYGRAPH_OP_ENUM
      kCount
};

struct OpInfo {
  const char* name;  // driver function name, "cuMemcpyHtoD"
  OpClass cls;
  bool blocks_host;
};

inline constexpr OpInfo kOpInfo[] = {
#define PYGRAPH_OP_INFO(name, cls, blocks) {"cu" #name, OpClass::cls, blocks},
    PYGRAPH_OPS(PYGRAPH_OP_INFO)
#undef PYGRAPH_OP_INFO
};

constexpr const OpInfo& op_info(Op op) {
  return kOpInfo[static_cast<int>(op)];
}

// The program instantiates an executable graph (any of the three entry points).
constexpr bool is_instantiate(Op op) {
  return op == Op::GraphInstantiate || op == Op::GraphInstantiateWithFlags ||
         op == Op::GraphInstantiateWithParams;
}

// Ops at which the program waits for, observes or ends GPU work that a graph could hold: their
// call sites are recorded for the analyzer (the host's reads, frees and queries).
constexpr bool op_observes_gpu(Op op) {
  const OpInfo& i = op_info(op);
  return i.blocks_host || i.cls == OpClass::kSync || i.cls == OpClass::kQuery ||
         i.cls == OpClass::kFree || i.cls == OpClass::kUnload;
}

// Where sequences break: every op that observes GPU work but a query. A query waits for
// nothing; the work it can see goes out first (flush_rules.h) and the sequence goes on across
// it. PyTorch's caching allocator queries an event at allocations once a block was used on
// another stream (record_stream): as a boundary, that cut the suite's two-stream loop into one
// sequence per iteration, taken up again from a first chunk of 2 each time (4.7 launches per
// replay on the H200).
constexpr bool op_is_boundary(Op op) {
  return op_observes_gpu(op) && op_info(op).cls != OpClass::kQuery;
}

const char* op_class_name(OpClass cls);

// Looks an op up by driver name ("cuStreamSynchronize"); returns false when unknown.
bool op_from_name(const char* name, Op* out);

}  // namespace pygraph
