// GPU check of memsets and copies inside graph-mode sequences: a training-shaped loop of kernels,
// async memsets, device-to-device copies, host-to-device copies from pageable memory (the
// program overwrites the buffer right after each call, as it may) and from pinned memory, and a
// device-to-host copy into pinned memory, with a stream sync ending each step. Prints one digest
// per step of what the host read; scripts/gpu-check.sh compares them with a run without the shim.
//   memop_loop STEPS
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void axpb(float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * a + b;
}
__global__ void add(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t r_ = (x);                                                              \
    if (r_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "memop_loop: %s failed: %s\n", #x, cudaGetErrorString(r_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 50;
  const int n = 1 << 16, q = n / 4, g = n / 256;
  float *y, *t, *pinned_in, *pinned_out;
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&t, n * sizeof(float)));
  CHECK(cudaMallocHost(&pinned_in, n * sizeof(float)));
  CHECK(cudaMallocHost(&pinned_out, n * sizeof(float)));
  for (int i = 0; i < n; ++i) pinned_in[i] = float(i % 97) * 0.01f;  // never written again
  std::vector<float> pageable(q);
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaMemsetAsync(y, 0, n * sizeof(float), s));
  for (int step = 0; step < steps; ++step) {
    axpb<<<g, 256, 0, s>>>(y, 0.5f, 1.0f, n);
    CHECK(cudaMemsetAsync(t, step & 0x3f, n * sizeof(float), s));
    add<<<g, 256, 0, s>>>(y, t, n);
    for (int i = 0; i < q; ++i) pageable[i] = float(step) + float(i) * 0.001f;
    CHECK(cudaMemcpyAsync(t, pageable.data(), q * sizeof(float), cudaMemcpyHostToDevice, s));
    std::fill(pageable.begin(), pageable.end(), -1.0f);  // allowed: the call has read it
    add<<<g, 256, 0, s>>>(y, t, n);
    CHECK(cudaMemcpyAsync(t + n / 2, y, n / 2 * sizeof(float), cudaMemcpyDeviceToDevice, s));
    axpb<<<g, 256, 0, s>>>(y, 0.25f, 2.0f, n);
    add<<<g, 256, 0, s>>>(y, t, n);
    CHECK(cudaMemcpyAsync(t, pinned_in + step % 7, q * sizeof(float), cudaMemcpyHostToDevice, s));
    add<<<g, 256, 0, s>>>(y, t, n);
    CHECK(cudaMemsetAsync(t + q, 0, q * sizeof(float), s));
    axpb<<<g, 256, 0, s>>>(y, 0.5f, 0.5f, n);
    add<<<g, 256, 0, s>>>(y, t, n);
    CHECK(cudaMemcpyAsync(pinned_out, y, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    uint64_t h = 1469598103934665603ull;  // FNV-1a of what the host read
    const auto* b = reinterpret_cast<const uint8_t*>(pinned_out);
    for (size_t i = 0; i < n * sizeof(float); ++i) h = (h ^ b[i]) * 1099511628211ull;
    std::printf("%d %016llx\n", step, static_cast<unsigned long long>(h));
  }
  CHECK(cudaStreamDestroy(s));
  return 0;
}
