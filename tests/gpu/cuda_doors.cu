// GPU check of the three doors: launches of one kernel through the CUDA runtime
// (cuGetProcAddress door), through cuLaunchKernel linked with -lcuda (export door) and through a
// pointer from dlsym on libcuda (dlsym door). Verifies the result on the host and prints the
// launches it made per door as JSON, for scripts/gpu-check.sh to compare with the trace.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <vector>

#include "check_call.h"

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

int main() {
  const int n = 1 << 14, runtime = 100, exported = 50, dlsymmed = 25;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  CHECK(cudaMemset(d, 0, n * sizeof(int)));
  for (int i = 0; i < runtime; ++i) add_one<<<n / 256, 256>>>(d, n);
  CHECK(cudaGetLastError());

  cudaFunction_t fn;
  CHECK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&add_one)));
  CUfunction f = reinterpret_cast<CUfunction>(fn);
  int count = n;
  void* args[] = {&d, &count};
  for (int i = 0; i < exported; ++i) {
    CHECK(cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  }

  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  auto launch = reinterpret_cast<decltype(&cuLaunchKernel)>(dlsym(lib, "cuLaunchKernel"));
  if (!launch) return 2;
  for (int i = 0; i < dlsymmed; ++i) {
    CHECK(launch(f, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  }

  std::vector<int> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    if (h[i] != runtime + exported + dlsymmed) {
      std::fprintf(stderr, "cuda_doors: h[%d] = %d\n", i, h[i]);
      return 3;
    }
  }
  CHECK(cudaFree(d));
  std::printf("{\"cuGetProcAddress\": %d, \"export\": %d, \"dlsym\": %d}\n", runtime, exported,
              dlsymmed);
  return 0;
}
