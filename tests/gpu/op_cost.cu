// The CPU cost of the calls around a small copy from pageable memory, on the real driver: what
// a step that builds tensors on the host (torch.tensor([...], device="cuda")) makes, a copy
// then a sync, and what graph mode asks the driver about each copy (the memory type of both
// operands, cuPointerGetAttribute). Run without the shim for the driver's own costs, and under
// the shim to see what it adds. Prints medians in ns, each call timed on its own:
//   clock_ns               the clock read pair around a call (subtracted from the others)
//   attr_device_ns         cuPointerGetAttribute(MEMORY_TYPE) of device memory
//   attr_pinned_ns         ... of pinned host memory
//   attr_pageable_ns       ... of pageable host memory (the driver answers "invalid value")
//   copy_pageable_ns       cuMemcpyHtoDAsync of 32 bytes from pageable memory
//   sync_ns                cuStreamSynchronize right after that copy
//   step_ns                copy and sync, twice (the host-tensors step's copies)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

static long long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}

static double median(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  return double(v[v.size() / 2]);
}

template <class Fn>
static double median_ns(int n, double clock, Fn fn) {
  std::vector<long long> t;
  t.reserve(n);
  for (int i = 0; i < n; ++i) {
    const long long t0 = now_ns();
    fn(i);
    t.push_back(now_ns() - t0);
  }
  return median(t) - clock;
}

int main() {
  constexpr int kN = 20000;
  cudaStream_t s;
  void* dev = nullptr;
  void* pinned = nullptr;
  if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&dev, 4096) != cudaSuccess ||
      cudaMallocHost(&pinned, 4096) != cudaSuccess) {
    std::fprintf(stderr, "op_cost: no CUDA device\n");
    return 1;
  }
  // The driver's entry points as the runtime's users reach them (the cuGetProcAddress door).
  decltype(&cuPointerGetAttribute) attr = nullptr;
  decltype(&cuMemcpyHtoDAsync_v2) copy = nullptr;
  decltype(&cuStreamSynchronize) sync = nullptr;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", reinterpret_cast<void**>(&attr),
                                       12000, cudaEnableDefault, &found) != cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuMemcpyHtoDAsync", reinterpret_cast<void**>(&copy), 12000,
                                       cudaEnableDefault, &found) != cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuStreamSynchronize", reinterpret_cast<void**>(&sync),
                                       12000, cudaEnableDefault, &found) != cudaSuccess) {
    std::fprintf(stderr, "op_cost: entry points not found\n");
    return 1;
  }
  std::vector<long long> pageable(4096 / sizeof(long long), 1);
  const CUstream cs = reinterpret_cast<CUstream>(s);
  const CUdeviceptr d = reinterpret_cast<CUdeviceptr>(dev);
  unsigned int type = 0;
  bool ok = true;

  const double clock = median_ns(kN, 0, [](int) {});
  auto kind = [&](const void* p) {
    return [&, p](int) { attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CUdeviceptr(p)); };
  };
  const double attr_device = median_ns(kN, clock, kind(dev));
  const double attr_pinned = median_ns(kN, clock, kind(pinned));
  const double attr_pageable = median_ns(kN, clock, kind(pageable.data()));
  std::vector<long long> copies, syncs, steps;
  for (int i = 0; i < kN; ++i) {
    const long long t0 = now_ns();
    pageable[0] = i;
    ok &= copy(d, pageable.data(), 32, cs) == CUDA_SUCCESS;
    const long long t1 = now_ns();
    ok &= sync(cs) == CUDA_SUCCESS;
    const long long t2 = now_ns();
    pageable[1] = i;
    ok &= copy(d + 64, pageable.data() + 1, 32, cs) == CUDA_SUCCESS;
    ok &= sync(cs) == CUDA_SUCCESS;
    const long long t3 = now_ns();
    copies.push_back(t1 - t0);
    syncs.push_back(t2 - t1);
    steps.push_back(t3 - t0);
  }
  if (!ok || cudaDeviceSynchronize() != cudaSuccess) {
    std::fprintf(stderr, "op_cost: a call failed\n");
    return 1;
  }
  std::printf("clock_ns %.0f\nattr_device_ns %.0f\nattr_pinned_ns %.0f\nattr_pageable_ns %.0f\n",
              clock, attr_device, attr_pinned, attr_pageable);
  std::printf("copy_pageable_ns %.0f\nsync_ns %.0f\nstep_ns %.0f\n", median(copies) - clock,
              median(syncs) - clock, median(steps) - clock);
  return 0;
}
