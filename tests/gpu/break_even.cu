// How many launches a graph must replace to pay (issue 10, "graphs that pay"): steps of N
// launches of a small kernel whose arguments change every step, each step ended by a stream sync
// (the shape of a step that reads the host: one chunk per step in graph mode). Run without the
// shim and in graph mode with PYGRAPH_FIRST_CHUNK=N (the whole step in one graph, its changed
// arguments patched); tests/gpu/check.py compares the median step times per N and names the
// smallest N from which graphs win. Prints, after warm-up steps:
//   N median_step_ns p25_step_ns p75_step_ns
//   break_even N STEPS
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

__global__ void tiny(float* p, float a, int i) {
  if (threadIdx.x == 0) p[i] = p[i] * 0.5f + a;
}

static long long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int warm = 200;
  float* p = nullptr;
  cudaStream_t s;
  if (n < 1 || n > 4096 || cudaMalloc(&p, n * sizeof(float)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    std::fprintf(stderr, "break_even: bad N or no GPU\n");
    return 1;
  }
  cudaMemsetAsync(p, 0, n * sizeof(float), s);
  std::vector<long long> times;
  times.reserve(steps);
  for (int step = 0; step < warm + steps; ++step) {
    const long long t0 = now_ns();
    for (int i = 0; i < n; ++i) tiny<<<1, 32, 0, s>>>(p, float(step), i);
    if (cudaStreamSynchronize(s) != cudaSuccess) {
      std::fprintf(stderr, "break_even: step %d failed\n", step);
      return 1;
    }
    if (step >= warm) times.push_back(now_ns() - t0);
  }
  std::sort(times.begin(), times.end());
  auto at = [&](double q) { return times[size_t(q * double(times.size() - 1))]; };
  std::printf("%d %lld %lld %lld\n", n, at(0.5), at(0.25), at(0.75));
  return 0;
}
