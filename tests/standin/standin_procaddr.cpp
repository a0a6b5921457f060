// cuGetProcAddress of the driver stand-in: resolves (symbol, version, flags) to one of the
// stand-in's own exports with the driver's naming rules (_v2 ABIs by version, _ptsz/_ptds
// variants for per-thread default stream requests). It never calls dlsym: in tests, dlsym
// belongs to the shim under test.
//
// This file deliberately does not include cuda.h: it takes the addresses of the exports
// through untyped declarations.
#include <cstdint>
#include <cstring>
#include <string>

extern "C" {
int cuInit();
int cuDriverGetVersion();
int cuDeviceGet();
int cuDeviceGetCount();
int cuModuleLoadData();
int cuModuleGetFunction();
int cuModuleUnload();
int cuLibraryLoadData();
int cuLibraryGetKernel();
int cuLibraryUnload();
int cuKernelGetFunction();
int cuFuncGetName();
int cuKernelGetName();
int cuFuncGetParamInfo();
int cuKernelGetParamInfo();
int cuFuncGetModule();
int cuKernelGetLibrary();
int cuLibraryGetModule();
int cuLaunchKernel();
int cuLaunchKernel_ptsz();
int cuLaunchKernelEx();
int cuLaunchKernelEx_ptsz();
int cuLaunchCooperativeKernel();
int cuLaunchCooperativeKernel_ptsz();
int cuLaunchHostFunc();
int cuLaunchHostFunc_ptsz();
int cuStreamAddCallback();
int cuStreamAddCallback_ptsz();
int cuStreamCreate();
int cuStreamGetFlags();
int cuStreamDestroy_v2();
int cuStreamSynchronize();
int cuStreamSynchronize_ptsz();
int cuStreamQuery();
int cuStreamQuery_ptsz();
int cuStreamWaitEvent();
int cuStreamWaitEvent_ptsz();
int cuEventCreate();
int cuEventDestroy_v2();
int cuEventRecord();
int cuEventRecord_ptsz();
int cuEventRecordWithFlags();
int cuEventRecordWithFlags_ptsz();
int cuEventSynchronize();
int cuEventQuery();
int cuEventElapsedTime();
int cuEventElapsedTime_v2();
int cuCtxSynchronize();
int cuCtxSynchronize_v2();
int cuStreamWaitValue32_v2();
int cuStreamWaitValue32_v2_ptsz();
int cuStreamWriteValue32_v2();
int cuStreamWriteValue32_v2_ptsz();
int cuMemAlloc_v2();
int cuPointerGetAttribute();
int cuMemFree_v2();
int cuMemAllocAsync();
int cuMemAllocAsync_ptsz();
int cuMemFreeAsync();
int cuMemFreeAsync_ptsz();
int cuMemAllocHost_v2();
int cuMemHostAlloc();
int cuMemFreeHost();
int cuMemHostRegister_v2();
int cuMemHostUnregister();
int cuMemAddressReserve();
int cuMemAddressFree();
int cuMemCreate();
int cuMemRelease();
int cuMemMap();
int cuMemUnmap();
int cuMemcpyHtoD_v2();
int cuMemcpyDtoH_v2();
int cuMemcpyDtoD_v2();
int cuMemcpy();
int cuMemcpyHtoDAsync_v2();
int cuMemcpyDtoHAsync_v2();
int cuMemcpyDtoDAsync_v2();
int cuMemcpyAsync();
int cuMemcpyHtoDAsync_v2_ptsz();
int cuMemcpyDtoHAsync_v2_ptsz();
int cuMemcpyAsync_ptsz();
int cuMemsetD8_v2();
int cuMemsetD32_v2();
int cuMemsetD8Async();
int cuMemsetD32Async();
int cuMemsetD8Async_ptsz();
int cuMemsetD32Async_ptsz();
int cuGraphCreate();
int cuGraphDestroy();
int cuGraphAddKernelNode_v2();
int cuGraphAddMemsetNode();
int cuGraphAddMemcpyNode();
int cuGraphInstantiateWithFlags();
int cuGraphExecDestroy();
int cuGraphExecKernelNodeSetParams_v2();
int cuGraphExecMemsetNodeSetParams();
int cuGraphExecMemcpyNodeSetParams();
int cuGraphExecUpdate_v2();
int cuGraphLaunch();
int cuGraphAddEventRecordNode();
int cuGraphExecEventRecordNodeSetEvent();
int cuGraphKernelNodeSetAttribute();
int cuGraphClone();
int cuGraphGetNodes();
int cuGraphNodeGetType();
int cuGraphAddEmptyNode();
int cuGraphAddChildGraphNode();
int cuCtxGetCurrent();
int cuCtxSetCurrent();
int cuCtxPushCurrent_v2();
int cuCtxPopCurrent_v2();
int cuCtxCreate_v2();
int cuGraphLaunch_ptsz();
int cuStreamBeginCapture_v2();
int cuStreamBeginCapture_v2_ptsz();
int cuStreamEndCapture();
int cuStreamEndCapture_ptsz();
int cuStreamIsCapturing();
int cuStreamIsCapturing_ptsz();
int cuGetProcAddress(const char*, void**, int, uint64_t);
int cuGetProcAddress_v2(const char*, void**, int, uint64_t, int*);
}

namespace {

constexpr int kSuccess = 0;
constexpr int kNotFound = 500;            // CUDA_ERROR_NOT_FOUND
constexpr uint64_t kPerThread = 1u << 1;  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
constexpr int kStatusSuccess = 0, kStatusNotFound = 1;

struct Export {
  const char* name;
  void* fn;
};
const Export kExports[] = {
    {"cuInit", reinterpret_cast<void*>(&cuInit)},
    {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion)},
    {"cuDeviceGet", reinterpret_cast<void*>(&cuDeviceGet)},
    {"cuDeviceGetCount", reinterpret_cast<void*>(&cuDeviceGetCount)},
    {"cuModuleLoadData", reinterpret_cast<void*>(&cuModuleLoadData)},
    {"cuModuleGetFunction", reinterpret_cast<void*>(&cuModuleGetFunction)},
    {"cuModuleUnload", reinterpret_cast<void*>(&cuModuleUnload)},
    {"cuLibraryLoadData", reinterpret_cast<void*>(&cuLibraryLoadData)},
    {"cuLibraryGetKernel", reinterpret_cast<void*>(&cuLibraryGetKernel)},
    {"cuLibraryUnload", reinterpret_cast<void*>(&cuLibraryUnload)},
    {"cuKernelGetFunction", reinterpret_cast<void*>(&cuKernelGetFunction)},
    {"cuFuncGetName", reinterpret_cast<void*>(&cuFuncGetName)},
    {"cuKernelGetName", reinterpret_cast<void*>(&cuKernelGetName)},
    {"cuFuncGetParamInfo", reinterpret_cast<void*>(&cuFuncGetParamInfo)},
    {"cuKernelGetParamInfo", reinterpret_cast<void*>(&cuKernelGetParamInfo)},
    {"cuFuncGetModule", reinterpret_cast<void*>(&cuFuncGetModule)},
    {"cuKernelGetLibrary", reinterpret_cast<void*>(&cuKernelGetLibrary)},
    {"cuLibraryGetModule", reinterpret_cast<void*>(&cuLibraryGetModule)},
    {"cuLaunchKernel", reinterpret_cast<void*>(&cuLaunchKernel)},
    {"cuLaunchKernel_ptsz", reinterpret_cast<void*>(&cuLaunchKernel_ptsz)},
    {"cuLaunchKernelEx", reinterpret_cast<void*>(&cuLaunchKernelEx)},
    {"cuLaunchKernelEx_ptsz", reinterpret_cast<void*>(&cuLaunchKernelEx_ptsz)},
    {"cuLaunchCooperativeKernel", reinterpret_cast<void*>(&cuLaunchCooperativeKernel)},
    {"cuLaunchCooperativeKernel_ptsz", reinterpret_cast<void*>(&cuLaunchCooperativeKernel_ptsz)},
    {"cuLaunchHostFunc", reinterpret_cast<void*>(&cuLaunchHostFunc)},
    {"cuLaunchHostFunc_ptsz", reinterpret_cast<void*>(&cuLaunchHostFunc_ptsz)},
    {"cuStreamAddCallback", reinterpret_cast<void*>(&cuStreamAddCallback)},
    {"cuStreamAddCallback_ptsz", reinterpret_cast<void*>(&cuStreamAddCallback_ptsz)},
    {"cuStreamCreate", reinterpret_cast<void*>(&cuStreamCreate)},
    {"cuStreamGetFlags", reinterpret_cast<void*>(&cuStreamGetFlags)},
    {"cuStreamDestroy_v2", reinterpret_cast<void*>(&cuStreamDestroy_v2)},
    {"cuStreamSynchronize", reinterpret_cast<void*>(&cuStreamSynchronize)},
    {"cuStreamSynchronize_ptsz", reinterpret_cast<void*>(&cuStreamSynchronize_ptsz)},
    {"cuStreamQuery", reinterpret_cast<void*>(&cuStreamQuery)},
    {"cuStreamQuery_ptsz", reinterpret_cast<void*>(&cuStreamQuery_ptsz)},
    {"cuStreamWaitEvent", reinterpret_cast<void*>(&cuStreamWaitEvent)},
    {"cuStreamWaitEvent_ptsz", reinterpret_cast<void*>(&cuStreamWaitEvent_ptsz)},
    {"cuEventCreate", reinterpret_cast<void*>(&cuEventCreate)},
    {"cuEventDestroy_v2", reinterpret_cast<void*>(&cuEventDestroy_v2)},
    {"cuEventRecord", reinterpret_cast<void*>(&cuEventRecord)},
    {"cuEventRecord_ptsz", reinterpret_cast<void*>(&cuEventRecord_ptsz)},
    {"cuEventRecordWithFlags", reinterpret_cast<void*>(&cuEventRecordWithFlags)},
    {"cuEventRecordWithFlags_ptsz", reinterpret_cast<void*>(&cuEventRecordWithFlags_ptsz)},
    {"cuEventSynchronize", reinterpret_cast<void*>(&cuEventSynchronize)},
    {"cuEventQuery", reinterpret_cast<void*>(&cuEventQuery)},
    {"cuEventElapsedTime", reinterpret_cast<void*>(&cuEventElapsedTime)},
    {"cuEventElapsedTime_v2", reinterpret_cast<void*>(&cuEventElapsedTime_v2)},
    {"cuCtxSynchronize", reinterpret_cast<void*>(&cuCtxSynchronize)},
    {"cuCtxSynchronize_v2", reinterpret_cast<void*>(&cuCtxSynchronize_v2)},
    {"cuStreamWaitValue32_v2", reinterpret_cast<void*>(&cuStreamWaitValue32_v2)},
    {"cuStreamWaitValue32_v2_ptsz", reinterpret_cast<void*>(&cuStreamWaitValue32_v2_ptsz)},
    {"cuStreamWriteValue32_v2", reinterpret_cast<void*>(&cuStreamWriteValue32_v2)},
    {"cuStreamWriteValue32_v2_ptsz", reinterpret_cast<void*>(&cuStreamWriteValue32_v2_ptsz)},
    {"cuMemAlloc_v2", reinterpret_cast<void*>(&cuMemAlloc_v2)},
    {"cuPointerGetAttribute", reinterpret_cast<void*>(&cuPointerGetAttribute)},
    {"cuMemFree_v2", reinterpret_cast<void*>(&cuMemFree_v2)},
    {"cuMemAllocAsync", reinterpret_cast<void*>(&cuMemAllocAsync)},
    {"cuMemAllocAsync_ptsz", reinterpret_cast<void*>(&cuMemAllocAsync_ptsz)},
    {"cuMemFreeAsync", reinterpret_cast<void*>(&cuMemFreeAsync)},
    {"cuMemFreeAsync_ptsz", reinterpret_cast<void*>(&cuMemFreeAsync_ptsz)},
    {"cuMemAllocHost_v2", reinterpret_cast<void*>(&cuMemAllocHost_v2)},
    {"cuMemHostAlloc", reinterpret_cast<void*>(&cuMemHostAlloc)},
    {"cuMemFreeHost", reinterpret_cast<void*>(&cuMemFreeHost)},
    {"cuMemHostRegister_v2", reinterpret_cast<void*>(&cuMemHostRegister_v2)},
    {"cuMemHostUnregister", reinterpret_cast<void*>(&cuMemHostUnregister)},
    {"cuMemAddressReserve", reinterpret_cast<void*>(&cuMemAddressReserve)},
    {"cuMemAddressFree", reinterpret_cast<void*>(&cuMemAddressFree)},
    {"cuMemCreate", reinterpret_cast<void*>(&cuMemCreate)},
    {"cuMemRelease", reinterpret_cast<void*>(&cuMemRelease)},
    {"cuMemMap", reinterpret_cast<void*>(&cuMemMap)},
    {"cuMemUnmap", reinterpret_cast<void*>(&cuMemUnmap)},
    {"cuMemcpyHtoD_v2", reinterpret_cast<void*>(&cuMemcpyHtoD_v2)},
    {"cuMemcpyDtoH_v2", reinterpret_cast<void*>(&cuMemcpyDtoH_v2)},
    {"cuMemcpyDtoD_v2", reinterpret_cast<void*>(&cuMemcpyDtoD_v2)},
    {"cuMemcpy", reinterpret_cast<void*>(&cuMemcpy)},
    {"cuMemcpyHtoDAsync_v2", reinterpret_cast<void*>(&cuMemcpyHtoDAsync_v2)},
    {"cuMemcpyDtoHAsync_v2", reinterpret_cast<void*>(&cuMemcpyDtoHAsync_v2)},
    {"cuMemcpyDtoDAsync_v2", reinterpret_cast<void*>(&cuMemcpyDtoDAsync_v2)},
    {"cuMemcpyAsync", reinterpret_cast<void*>(&cuMemcpyAsync)},
    {"cuMemcpyHtoDAsync_v2_ptsz", reinterpret_cast<void*>(&cuMemcpyHtoDAsync_v2_ptsz)},
    {"cuMemcpyDtoHAsync_v2_ptsz", reinterpret_cast<void*>(&cuMemcpyDtoHAsync_v2_ptsz)},
    {"cuMemcpyAsync_ptsz", reinterpret_cast<void*>(&cuMemcpyAsync_ptsz)},
    {"cuMemsetD8_v2", reinterpret_cast<void*>(&cuMemsetD8_v2)},
    {"cuMemsetD32_v2", reinterpret_cast<void*>(&cuMemsetD32_v2)},
    {"cuMemsetD8Async", reinterpret_cast<void*>(&cuMemsetD8Async)},
    {"cuMemsetD32Async", reinterpret_cast<void*>(&cuMemsetD32Async)},
    {"cuMemsetD8Async_ptsz", reinterpret_cast<void*>(&cuMemsetD8Async_ptsz)},
    {"cuMemsetD32Async_ptsz", reinterpret_cast<void*>(&cuMemsetD32Async_ptsz)},
    {"cuGraphCreate", reinterpret_cast<void*>(&cuGraphCreate)},
    {"cuGraphDestroy", reinterpret_cast<void*>(&cuGraphDestroy)},
    {"cuGraphAddKernelNode_v2", reinterpret_cast<void*>(&cuGraphAddKernelNode_v2)},
    {"cuGraphAddMemsetNode", reinterpret_cast<void*>(&cuGraphAddMemsetNode)},
    {"cuGraphAddMemcpyNode", reinterpret_cast<void*>(&cuGraphAddMemcpyNode)},
    {"cuGraphInstantiateWithFlags", reinterpret_cast<void*>(&cuGraphInstantiateWithFlags)},
    {"cuGraphExecDestroy", reinterpret_cast<void*>(&cuGraphExecDestroy)},
    {"cuGraphExecKernelNodeSetParams_v2",
     reinterpret_cast<void*>(&cuGraphExecKernelNodeSetParams_v2)},
    {"cuGraphExecMemsetNodeSetParams", reinterpret_cast<void*>(&cuGraphExecMemsetNodeSetParams)},
    {"cuGraphExecMemcpyNodeSetParams", reinterpret_cast<void*>(&cuGraphExecMemcpyNodeSetParams)},
    {"cuGraphExecUpdate_v2", reinterpret_cast<void*>(&cuGraphExecUpdate_v2)},
    {"cuGraphLaunch", reinterpret_cast<void*>(&cuGraphLaunch)},
    {"cuGraphClone", reinterpret_cast<void*>(&cuGraphClone)},
    {"cuGraphGetNodes", reinterpret_cast<void*>(&cuGraphGetNodes)},
    {"cuGraphNodeGetType", reinterpret_cast<void*>(&cuGraphNodeGetType)},
    {"cuGraphAddEmptyNode", reinterpret_cast<void*>(&cuGraphAddEmptyNode)},
    {"cuGraphAddChildGraphNode", reinterpret_cast<void*>(&cuGraphAddChildGraphNode)},
    {"cuGraphAddEventRecordNode", reinterpret_cast<void*>(&cuGraphAddEventRecordNode)},
    {"cuGraphExecEventRecordNodeSetEvent",
     reinterpret_cast<void*>(&cuGraphExecEventRecordNodeSetEvent)},
    {"cuGraphKernelNodeSetAttribute", reinterpret_cast<void*>(&cuGraphKernelNodeSetAttribute)},
    {"cuCtxGetCurrent", reinterpret_cast<void*>(&cuCtxGetCurrent)},
    {"cuCtxSetCurrent", reinterpret_cast<void*>(&cuCtxSetCurrent)},
    {"cuCtxPushCurrent_v2", reinterpret_cast<void*>(&cuCtxPushCurrent_v2)},
    {"cuCtxPopCurrent_v2", reinterpret_cast<void*>(&cuCtxPopCurrent_v2)},
    {"cuCtxCreate_v2", reinterpret_cast<void*>(&cuCtxCreate_v2)},
    {"cuGraphLaunch_ptsz", reinterpret_cast<void*>(&cuGraphLaunch_ptsz)},
    {"cuStreamBeginCapture_v2", reinterpret_cast<void*>(&cuStreamBeginCapture_v2)},
    {"cuStreamBeginCapture_v2_ptsz", reinterpret_cast<void*>(&cuStreamBeginCapture_v2_ptsz)},
    {"cuStreamEndCapture", reinterpret_cast<void*>(&cuStreamEndCapture)},
    {"cuStreamEndCapture_ptsz", reinterpret_cast<void*>(&cuStreamEndCapture_ptsz)},
    {"cuStreamIsCapturing", reinterpret_cast<void*>(&cuStreamIsCapturing)},
    {"cuStreamIsCapturing_ptsz", reinterpret_cast<void*>(&cuStreamIsCapturing_ptsz)},
    {"cuGetProcAddress", reinterpret_cast<void*>(&cuGetProcAddress)},
    {"cuGetProcAddress_v2", reinterpret_cast<void*>(&cuGetProcAddress_v2)},
};

void* find(const std::string& name) {
  for (const auto& e : kExports) {
    if (name == e.name) return e.fn;
  }
  return nullptr;
}

// cudaVersion from which the driver hands out the "_v2" ABI of a function; functions that
// exist only as _v2 here (cuMemAlloc_v2, ...) have 0.
int v2_since(const std::string& base) {
  if (base == "cuCtxSynchronize") return 13000;
  if (base == "cuGraphExecUpdate" || base == "cuGraphExecKernelNodeSetParams") return 12000;
  if (base == "cuGetProcAddress") return 12000;
  if (base == "cuStreamBeginCapture") return 10010;
  if (base == "cuStreamWaitValue32" || base == "cuStreamWriteValue32") return 11070;
  return 0;
}

void* resolve(const char* symbol, int version, uint64_t flags) {
  // From 12.0 on the driver hands out cuGraphInstantiateWithFlags for "cuGraphInstantiate".
  if (version >= 12000 && std::string(symbol) == "cuGraphInstantiate") {
    return find("cuGraphInstantiateWithFlags");
  }
  const std::string base = symbol;
  std::string names[2] = {base + "_v2", base};
  if (version < v2_since(base)) names[0].clear();
  for (const auto& n : names) {
    if (n.empty()) continue;
    if (flags & kPerThread) {
      if (void* p = find(n + "_ptsz")) return p;
      if (void* p = find(n + "_ptds")) return p;
    }
    if (void* p = find(n)) return p;
  }
  return nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int cuGetProcAddress_v2(const char* symbol,
                                                                          void** pfn, int version,
                                                                          uint64_t flags,
                                                                          int* status) {
  if (!symbol || !pfn) return 1;  // CUDA_ERROR_INVALID_VALUE
  *pfn = resolve(symbol, version, flags);
  if (status) *status = *pfn ? kStatusSuccess : kStatusNotFound;
  return *pfn ? kSuccess : kNotFound;
}

extern "C" __attribute__((visibility("default"))) void* standin_entry_point(const char* name) {
  return name ? find(name) : nullptr;
}

extern "C" __attribute__((visibility("default"))) int cuGetProcAddress(const char* symbol,
                                                                       void** pfn, int version,
                                                                       uint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}
