// Asks cuGetProcAddress for old ABI versions and per-thread variants, as old runtimes and
// programs built with --default-stream per-thread do, and calls what it gets. Under the shim,
// each pointer must be a wrapper of exactly the ABI asked for (or the driver's own pointer,
// counted as unwrapped, for ABIs older than pygraph wraps). tests/e2e/doors_test.cpp checks the
// trace.
#include <dlfcn.h>

#include <cstdio>

#include "standin.h"

#define CHECK(x)                                                         \
  do {                                                                   \
    CUresult r_ = (x);                                                   \
    if (r_ != CUDA_SUCCESS) {                                            \
      std::fprintf(stderr, "procaddr_program: %s failed: %d\n", #x, r_); \
      return 1;                                                          \
    }                                                                    \
  } while (0)

static void noop(const unsigned*, const unsigned*, void**) {}

int main() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  // The CUDA 11.3 ABI of cuGetProcAddress (4 arguments), from dlsym.
  auto get_v1 = reinterpret_cast<CUresult (*)(const char*, void**, int, cuuint64_t)>(
      dlsym(lib, "cuGetProcAddress"));
  if (!get_v1) return 2;

  // cuCtxSynchronize as CUDA 12 knew it: no arguments.
  CUresult (*sync_v1)(void) = nullptr;
  CHECK(get_v1("cuCtxSynchronize", reinterpret_cast<void**>(&sync_v1), 12000, 0));
  CHECK(sync_v1());
  // ... and as CUDA 13 knows it: a context argument.
  CUresult (*sync_v2)(CUcontext) = nullptr;
  CHECK(get_v1("cuCtxSynchronize", reinterpret_cast<void**>(&sync_v2), 13000, 0));
  CHECK(sync_v2(nullptr));

  // Per-thread default stream variant of a launch.
  decltype(&cuLaunchKernel) launch_ptsz = nullptr;
  CHECK(get_v1("cuLaunchKernel", reinterpret_cast<void**>(&launch_ptsz), 13000,
               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  // A function without a per-thread variant, asked for per-thread: the legacy one.
  decltype(&cuEventQuery) query = nullptr;
  CHECK(get_v1("cuEventQuery", reinterpret_cast<void**>(&query), 13000,
               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  decltype(&cuModuleGetFunction) get_function = nullptr;
  CHECK(get_v1("cuModuleGetFunction", reinterpret_cast<void**>(&get_function), 13000, 0));
  const size_t sizes[1] = {4};
  standin_register_kernel("noop", &noop, 1, sizes);
  CUfunction f;
  CHECK(get_function(&f, nullptr, "noop"));
  int x = 7;
  void* params[] = {&x};
  CHECK(launch_ptsz(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  CUevent e = reinterpret_cast<CUevent>(&x);  // the stand-in only checks non-null
  CHECK(query(e));

  // cuMemAlloc before CUDA 3.2 had 32-bit device pointers: pygraph does not wrap that ABI.
  void* old_alloc = nullptr;
  CHECK(get_v1("cuMemAlloc", &old_alloc, 3000, 0));
  if (!old_alloc) return 3;
  return 0;
}
