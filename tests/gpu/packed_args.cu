// GPU check of launches with packed arguments smaller than the kernel's parameters, as NCCL makes
// them: a kernel with a 4 KiB parameter struct, launched through cuLaunchKernel with an `extra`
// block that stops after the part the launch uses (a varying count of items). Each step is 8
// such launches with changing scalars and items, then a copy back and a sync; prints one line
// per step (a digest of the buffer), which scripts/gpu-check.sh compares between a run without
// the shim and one in graph mode. Launch 6's block is the whole parameter every other step (a
// node then switches between the parameters and `extra`), launch 7's size changes every step
// (a node patched to another size).
//   packed_args [STEPS]
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check_call.h"

// 4,096 bytes, as NCCL's kernel parameter.
struct Args4K {
  float* y;
  int n;
  float scale;
  int count;
  int items[1019];
};
static_assert(sizeof(Args4K) == 4096, "a 4 KiB parameter");

__global__ void apply(Args4K a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= a.n) return;
  float v = a.y[i] * a.scale;
  for (int k = 0; k < a.count; ++k) v += float(a.items[k] % 7) * 0.125f;
  a.y[i] = v;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 40;
  const int n = 1 << 12;
  float* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 13) * 0.5f;
  CHECK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaFunction_t fn;
  CHECK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&apply)));
  const CUfunction f = reinterpret_cast<CUfunction>(fn);
  Args4K a;
  for (int s = 0; s < steps; ++s) {
    for (int k = 0; k < 8; ++k) {
      std::memset(&a, 0, sizeof a);
      a.y = d;
      a.n = n;
      a.scale = k == 3 ? 1.0f - 0.001f * float(s) : 0.75f;  // one launch's block changes per step
      a.count = 1 + (k * 37) % 200;                         // the block's size varies by launch
      if (k == 7) a.count = 1 + s % 9;                      // and this one's by step
      for (int i = 0; i < a.count; ++i) a.items[i] = s * (k == 5) + i;
      size_t size = offsetof(Args4K, items) + a.count * sizeof(int);
      if (k == 6 && s % 2) size = sizeof a;  // the whole parameter: an ordinary node
      void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &a, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                       CU_LAUNCH_PARAM_END};
      CHECK(cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra));
      std::memset(&a, 0x5a, sizeof a);  // the driver has read the block
    }
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    uint64_t digest = 1469598103934665603ull;  // FNV-1a over the bytes
    const auto* bytes = reinterpret_cast<const unsigned char*>(h.data());
    for (size_t i = 0; i < n * sizeof(float); ++i) digest = (digest ^ bytes[i]) * 1099511628211ull;
    std::printf("%d %016llx\n", s, static_cast<unsigned long long>(digest));
  }
  CHECK(cudaFree(d));
  return 0;
}
