// A CUDA driver program for the end-to-end tests: it runs one fixed scenario through the door
// named on its command line, on the stand-in driver, checks its own results and exits non-zero
// if any is wrong. Run under LD_PRELOAD=libpygraph.so, its trace must show exactly what it did:
// tests/e2e/doors_test.cpp compares the two.
//
//   door_program export|dlsym|procaddr [--fork|--hang]
// --hang waits to be killed after the scenario, for the test of traces of killed processes.
//
// The scenario, per door (counts are asserted by the test):
//   launches: 10 cuLaunchKernel (axpy), 1 cuLaunchKernelEx with 2 attributes, 1 cuLaunchKernelEx
//   with packed `extra` arguments, 1 cuLaunchCooperativeKernel, 1 cuLaunchKernel of a CUkernel
//   handle, 2 launches inside the program's own stream capture, then 1 cuGraphLaunch.
//   ops: every boundary kind at least once (see run()).
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "standin.h"

namespace {

#define CHECK(x)                                                                         \
  do {                                                                                   \
    CUresult r_ = (x);                                                                   \
    if (r_ != CUDA_SUCCESS) {                                                            \
      std::fprintf(stderr, "door_program: %s failed: %d (line %d)\n", #x, r_, __LINE__); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

void axpy(const unsigned grid[3], const unsigned block[3], void** p) {
  float a = *static_cast<float*>(p[0]);
  auto* x = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[2]));
  int n = *static_cast<int*>(p[3]);
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

// Every entry point the scenario uses, taken through one door.
struct Api {
#define FN(name, sym) decltype(&::sym) name = nullptr;
#include "door_program_api.inc"
#undef FN
};

void* g_lib = nullptr;
CUresult (*g_proc)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*) = nullptr;

template <class T>
void take(T* out, const char* sym, const char* base, const std::string& door) {
  void* p = nullptr;
  if (door == "export") {
    p = dlsym(RTLD_DEFAULT, sym);  // resolves to the preloaded shim's export, like a -lcuda link
  } else if (door == "dlsym") {
    p = dlsym(g_lib, sym);
  } else {
    CUdriverProcAddressQueryResult status;
    CHECK(g_proc(base, &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  }
  if (!p) {
    std::fprintf(stderr, "door_program: %s not found through %s\n", sym, door.c_str());
    std::exit(1);
  }
  *out = reinterpret_cast<T>(p);
}

Api load(const std::string& door) {
  g_lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!g_lib) {
    std::fprintf(stderr, "door_program: %s\n", dlerror());
    std::exit(1);
  }
  if (door == "procaddr") {
    // What libcudart does: ask the driver for cuGetProcAddress itself, then use that pointer.
    void* first = dlsym(g_lib, "cuGetProcAddress_v2");
    auto boot = reinterpret_cast<decltype(g_proc)>(first);
    void* self = nullptr;
    CHECK(boot("cuGetProcAddress", &self, 13000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr));
    g_proc = reinterpret_cast<decltype(g_proc)>(self);
  }
  Api api;
#define FN(name, sym) take(&api.name, #sym, "cu" #name, door);
#include "door_program_api.inc"
#undef FN
  return api;
}

void host_fn(void* data) {
  ++*static_cast<int*>(data);
}
void callback(CUstream, CUresult, void* data) {
  ++*static_cast<int*>(data);
}

int run(const Api& cu) {
  const size_t sizes[4] = {sizeof(float), sizeof(CUdeviceptr), sizeof(CUdeviceptr), sizeof(int)};
  standin_register_kernel("axpy", &axpy, 4, sizes);
  CHECK(cu.Init(0));
  CUmodule mod;
  CUfunction f;
  CHECK(cu.ModuleLoadData(&mod, "standin-module"));
  CHECK(cu.ModuleGetFunction(&f, mod, "axpy"));
  CUstream s;
  CHECK(cu.StreamCreate(&s, 0));

  constexpr int n = 64;
  CUdeviceptr x, y;
  CHECK(cu.MemAlloc(&x, n * sizeof(float)));
  CHECK(cu.MemAlloc(&y, n * sizeof(float)));
  std::vector<float> hx(n), hy(n, 0.0f);
  for (int i = 0; i < n; ++i) hx[i] = static_cast<float>(i);
  CHECK(cu.MemcpyHtoD(x, hx.data(), n * sizeof(float)));
  CHECK(cu.MemsetD32Async(y, 0, n, s));

  float a = 2.0f;
  int count = n;
  void* params[] = {&a, &x, &y, &count};
  for (int i = 0; i < 10; ++i) CHECK(cu.LaunchKernel(f, 1, 1, 1, n, 1, 1, 0, s, params, nullptr));

  CUlaunchAttribute attrs[2] = {};
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  attrs[0].value.priority = 1;
  attrs[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[1].value.clusterDim.x = 1;
  attrs[1].value.clusterDim.y = 1;
  attrs[1].value.clusterDim.z = 1;
  CUlaunchConfig cfg = {};
  cfg.gridDimX = 2;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = 128;
  cfg.hStream = s;
  cfg.attrs = attrs;
  cfg.numAttrs = 2;
  CHECK(cu.LaunchKernelEx(&cfg, f, params, nullptr));  // y += 2x: 11 times so far

  // Packed arguments, as NCCL launches them.
  struct {
    float a;
    uint32_t pad;
    CUdeviceptr x, y;
    int n;
  } packed = {1.0f, 0, x, y, n};
  // The parameter block without the struct's tail padding: the driver refuses a larger buffer.
  size_t packed_size = offsetof(decltype(packed), n) + sizeof(int);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &packed_size, CU_LAUNCH_PARAM_END};
  cfg.numAttrs = 0;
  CHECK(cu.LaunchKernelEx(&cfg, f, nullptr, extra));                     // y += x
  CHECK(cu.LaunchCooperativeKernel(f, 1, 1, 1, n, 1, 1, 0, s, params));  // y += 2x

  // A CUkernel handle in the CUfunction slot, as CUDA 13's runtime does.
  CUlibrary lib;
  CUkernel k;
  CHECK(cu.LibraryLoadData(&lib, "standin-library", nullptr, nullptr, 0, nullptr, nullptr, 0));
  CHECK(cu.LibraryGetKernel(&k, lib, "axpy"));
  CHECK(cu.LaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, n, 1, 1, 0, s, params,
                        nullptr));  // y += 2x: total 2*13 + 1 = 27x

  // The program's own graph: capture two launches, replay once.
  CUgraph graph;
  CUgraphExec exec;
  CHECK(cu.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureStatus status;
  CHECK(cu.StreamIsCapturing(s, &status));
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE) return 2;
  CHECK(cu.LaunchKernel(f, 1, 1, 1, n, 1, 1, 0, s, params, nullptr));
  CHECK(cu.LaunchKernel(f, 1, 1, 1, n, 1, 1, 0, s, params, nullptr));
  CHECK(cu.StreamEndCapture(s, &graph));
  CHECK(cu.GraphInstantiateWithFlags(&exec, graph, 0));
  CHECK(cu.GraphLaunch(exec, s));  // y += 4x: 31x

  CUevent e;
  CHECK(cu.EventCreate(&e, 0));
  CHECK(cu.EventRecord(e, s));
  CHECK(cu.StreamWaitEvent(nullptr, e, 0));
  CHECK(cu.EventRecordWithFlags(e, s, 0));
  CHECK(cu.EventQuery(e));
  CHECK(cu.EventSynchronize(e));
  CHECK(cu.StreamQuery(s));
  int host_calls = 0;
  CHECK(cu.LaunchHostFunc(s, &host_fn, &host_calls));
  CHECK(cu.StreamAddCallback(s, &callback, &host_calls, 0));
  CHECK(cu.StreamSynchronize(s));
  CHECK(cu.CtxSynchronize(nullptr));
  CHECK(cu.MemcpyDtoH(hy.data(), y, n * sizeof(float)));
  for (int i = 0; i < n; ++i) {
    if (hy[i] != 31.0f * hx[i]) {
      std::fprintf(stderr, "door_program: y[%d] = %g, expected %g\n", i, hy[i], 31.0f * hx[i]);
      return 3;
    }
  }
  if (host_calls != 2) return 4;

  // Memory: async, host, registered and virtual memory.
  CUdeviceptr tmp;
  CHECK(cu.MemAllocAsync(&tmp, 256, s));
  CHECK(cu.MemsetD8Async(tmp, 7, 256, s));
  CHECK(cu.MemcpyDtoDAsync(tmp, y, 64, s));
  CHECK(cu.MemcpyDtoHAsync(hy.data(), tmp, 64, s));
  CHECK(cu.MemFreeAsync(tmp, s));
  void* pinned;
  CHECK(cu.MemAllocHost(&pinned, 4096));
  CHECK(cu.MemFreeHost(pinned));
  std::vector<char> reg(4096);
  CHECK(cu.MemHostRegister(reg.data(), reg.size(), 0));
  CHECK(cu.MemHostUnregister(reg.data()));
  CUdeviceptr va;
  CUmemGenericAllocationHandle h;
  CUmemAllocationProp prop = {};
  CHECK(cu.MemAddressReserve(&va, 1 << 20, 0, 0, 0));
  CHECK(cu.MemCreate(&h, 1 << 20, &prop, 0));
  CHECK(cu.MemMap(va, 1 << 20, 0, h, 0));
  CHECK(cu.MemUnmap(va, 1 << 20));
  CHECK(cu.MemRelease(h));
  CHECK(cu.MemAddressFree(va, 1 << 20));
  CHECK(cu.MemFree(x));
  CHECK(cu.MemFree(y));
  CHECK(cu.LibraryUnload(lib));
  CHECK(cu.ModuleUnload(mod));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: door_program export|dlsym|procaddr [--fork|--hang]\n");
    return 1;
  }
  std::string door = argv[1];
  Api api = load(door);
  int rc = run(api);
  if (rc == 0 && argc > 2 && std::strcmp(argv[2], "--fork") == 0) {
    // A forked child that runs the scenario again: its records must not reach the parent's
    // trace, and the parent's trace must stay whole.
    pid_t pid = fork();
    if (pid == 0) std::exit(run(api));  // exit, not _exit: the child's trace gets its end
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 5;
  }
  if (rc == 0 && argc > 2 && std::strcmp(argv[2], "--hang") == 0) {
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;) pause();
  }
  return rc;
}
