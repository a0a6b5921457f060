// Microbenchmark of the launch path: CPU time per cudaLaunchKernel of an empty kernel, median
// over repetitions. Run with and without the shim (scripts/gpu-check.sh) to get the shim's cost
// per launch in nanoseconds.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void empty(int) {}

int main() {
  const int launches = 10000, reps = 15;
  for (int i = 0; i < 2000; ++i) empty<<<1, 32>>>(i);  // warm-up
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) empty<<<1, 32>>>(i);
    auto t1 = std::chrono::steady_clock::now();
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / launches);
  }
  std::sort(ns.begin(), ns.end());
  std::printf("median_launch_ns %.1f\n", ns[ns.size() / 2]);
  return 0;
}
