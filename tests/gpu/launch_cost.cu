// The CPU cost of one kernel launch call on the real driver, as the program sees it: steps of 64
// launches of an empty kernel, a stream sync ending each step, every launch call timed on its
// own. `driver` (the default) calls cuLaunchKernel through the pointer that
// cudaGetDriverEntryPointByVersion hands out (cuBLAS's and Triton's way); `runtime` launches with
// <<<>>> (the CUDA runtime's own work included). Run without the shim it gives the driver's launch cost; in graph mode most
// calls are only recorded (a few end a chunk and launch its graph), so the median call is the
// cost of a deferred launch on the hot path. Prints, after warm-up steps:
//   clock_ns          cost of the clock read pair around a call (subtract it)
//   median_call_ns    median time of one launch call
//   p90_call_ns       90th percentile
//   mean_call_ns      mean, graph launches at chunk ends included
//   launch_phase_us   median CPU time of a step's 64 launch calls
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

__global__ void noop(int* p, int step) {
  if (p && threadIdx.x == 0) p[blockIdx.x] = step;
}

static long long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}

static double percentile(std::vector<long long> v, double p) {
  std::sort(v.begin(), v.end());
  return double(v[size_t(p * double(v.size() - 1))]);
}

int main(int argc, char** argv) {
  constexpr int kStep = 64, kWarm = 200, kSteps = 2000;
  const bool runtime = argc > 1 && std::strcmp(argv[1], "runtime") == 0;
  cudaStream_t s;
  int* d;
  if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&d, 4096) != cudaSuccess) return 1;
  decltype(&cuLaunchKernel) launch = nullptr;
  cudaDriverEntryPointQueryResult found;
  cudaFunction_t fn;
  if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", reinterpret_cast<void**>(&launch), 12000,
                                       cudaEnableDefault, &found) != cudaSuccess ||
      cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&noop)) != cudaSuccess) {
    return 1;
  }
  const CUfunction f = reinterpret_cast<CUfunction>(fn);
  int step_arg = 0;
  void* args[] = {&d, &step_arg};
  std::vector<long long> calls, phases, clocks;
  calls.reserve(size_t(kStep) * kSteps);
  for (int step = 0; step < kWarm + kSteps; ++step) {
    const long long p0 = now_ns();
    for (int i = 0; i < kStep; ++i) {
      step_arg = step;
      const long long t0 = now_ns();
      if (runtime) {
        noop<<<1 + i % 4, 32, 0, s>>>(d, step);
      } else {
        launch(f, 1 + i % 4, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(s), args, nullptr);
      }
      const long long t1 = now_ns();
      if (step >= kWarm) calls.push_back(t1 - t0);
    }
    const long long p1 = now_ns();
    if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
    if (step >= kWarm) phases.push_back(p1 - p0);
  }
  for (int i = 0; i < 100000; ++i) {
    const long long t0 = now_ns();
    const long long t1 = now_ns();
    clocks.push_back(t1 - t0);
  }
  double mean = 0;
  for (long long c : calls) mean += double(c);
  mean /= double(calls.size());
  std::printf("clock_ns %.0f\n", percentile(clocks, 0.5));
  std::printf("median_call_ns %.0f\n", percentile(calls, 0.5));
  std::printf("p90_call_ns %.0f\n", percentile(calls, 0.9));
  std::printf("mean_call_ns %.0f\n", mean);
  std::printf("launch_phase_us %.2f\n", percentile(phases, 0.5) / 1000.0);
  return 0;
}
