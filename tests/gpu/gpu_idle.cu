// How long the GPU sits idle at the start of an iteration and within it, timed by the GPU itself
// (%globaltimer), with no profiler attached: torch.profiler's CUPTI callbacks slow every launch
// and graph launch, so its timeline overstates gaps. Each step launches 64 short kernels (about
// 2 us each) that stamp their start and end into a buffer at a slot that moves every step (so
// graph mode patches every node before each replay); the host syncs at the end of a step and
// then works 100 us on its own, like a training loop's Python between iterations. Prints
// medians over the steps after warm-up:
//   idle_start_us   from the previous step's last kernel end to this step's first kernel start
//                   (the host's 100 us included)
//   idle_within_us  the step's GPU span minus its kernels' run time
//   span_us         the step's GPU span, first kernel start to last kernel end
//   step_us         host time of a step (launches and sync)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void stamped(uint64_t* stamps, int slot, unsigned spin_ns) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const uint64_t t0 = global_ns();
  uint64_t t = t0;
  while (t - t0 < spin_ns) t = global_ns();
  stamps[2 * slot] = t0;
  stamps[2 * slot + 1] = t;
}

static long long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  constexpr int kStep = 64, kWarm = 30, kSteps = 300;
  constexpr long long kHostWorkNs = 100000;
  cudaStream_t s;
  uint64_t* d;
  const size_t bytes = sizeof(uint64_t) * 2 * kStep * kSteps;
  if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&d, bytes) != cudaSuccess) return 1;
  std::vector<double> host_step;
  for (int step = 0; step < kSteps; ++step) {
    const long long h0 = now_ns();
    for (int i = 0; i < kStep; ++i) stamped<<<1, 32, 0, s>>>(d, step * kStep + i, 2000);
    if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
    const long long h1 = now_ns();
    if (step >= kWarm) host_step.push_back(double(h1 - h0) / 1000.0);
    while (now_ns() - h1 < kHostWorkNs) {
    }
  }
  std::vector<uint64_t> t(2 * kStep * kSteps);
  if (cudaMemcpy(t.data(), d, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
  std::vector<double> idle_start, idle_within, span;
  for (int step = kWarm; step < kSteps; ++step) {
    const uint64_t* st = &t[2 * kStep * step];
    const uint64_t prev_end = st[-1];
    double busy = 0;
    for (int i = 0; i < kStep; ++i) busy += double(st[2 * i + 1] - st[2 * i]);
    const double sp = double(st[2 * kStep - 1] - st[0]);
    idle_start.push_back(double(st[0] - prev_end) / 1000.0);
    idle_within.push_back((sp - busy) / 1000.0);
    span.push_back(sp / 1000.0);
  }
  std::printf("idle_start_us %.2f\n", median(idle_start));
  std::printf("idle_within_us %.2f\n", median(idle_within));
  std::printf("span_us %.2f\n", median(span));
  std::printf("step_us %.2f\n", median(host_step));
  return 0;
}
