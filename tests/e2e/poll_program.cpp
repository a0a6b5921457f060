// A program that waits for GPU results without any CUDA call, on the stand-in driver: every
// step launches 10 kernels, the 10th of which sets a flag in pinned host memory, spins on that
// flag (giving up after 10 s), then launches 10 more. No synchronization anywhere until the end,
// so graph mode finds the 20-launch period and records it; the flag kernel sits in the middle of
// a chunk, and only the stall watchdog submits it. Prints the flag and a value per step.
//   poll_program [STEPS=8]   ->  "<step> <flag> <y[0]>" lines, exit 0; exit 3 on a timeout
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "runtime_bootstrap.h"
#include "standin.h"

static void add(const unsigned*, const unsigned*, void** p) {  // *y += step
  auto* y = reinterpret_cast<long long*>(*static_cast<CUdeviceptr*>(p[0]));
  *y += *static_cast<int*>(p[1]);
}
static void set_flag(const unsigned*, const unsigned*, void** p) {  // *flag = step + 1
  auto* flag = reinterpret_cast<volatile int*>(*static_cast<CUdeviceptr*>(p[0]));
  *flag = *static_cast<int*>(p[1]) + 1;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 8;
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  decltype(&cuLaunchKernel) launch;
  decltype(&cuModuleGetFunction) function;
  decltype(&cuMemHostAlloc) host_alloc;
  decltype(&cuCtxSynchronize_v2) sync;  // what the runtime gets for CUDA 13
  if (!get || !standin::resolve(get, "cuLaunchKernel", &launch) ||
      !standin::resolve(get, "cuModuleGetFunction", &function) ||
      !standin::resolve(get, "cuMemHostAlloc", &host_alloc) ||
      !standin::resolve(get, "cuCtxSynchronize", &sync)) {
    return 1;
  }
  const size_t sizes[2] = {8, 4};
  standin_register_kernel("add", &add, 2, sizes);
  standin_register_kernel("set_flag", &set_flag, 2, sizes);
  CUfunction f_add, f_flag;
  if (function(&f_add, nullptr, "add") || function(&f_flag, nullptr, "set_flag")) return 2;
  void* mem;
  if (host_alloc(&mem, 64, CU_MEMHOSTALLOC_DEVICEMAP)) return 2;
  auto* y = static_cast<long long*>(mem);
  auto* flag = reinterpret_cast<volatile int*>(y + 1);
  *y = 0;
  *flag = 0;
  CUdeviceptr yp = reinterpret_cast<CUdeviceptr>(y), fp = reinterpret_cast<CUdeviceptr>(flag);
  for (int step = 0; step < steps; ++step) {
    void* add_args[] = {&yp, &step};
    void* flag_args[] = {&fp, &step};
    for (int i = 0; i < 9; ++i) {
      if (launch(f_add, 1, 1, 1, 32, 1, 1, 0, nullptr, add_args, nullptr)) return 4;
    }
    if (launch(f_flag, 1, 1, 1, 32, 1, 1, 0, nullptr, flag_args, nullptr)) return 4;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (*flag != step + 1) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "poll_program: step %d: the flag never came\n", step);
        return 3;
      }
    }
    std::printf("%d %d %lld\n", step, *flag, *y);  // what the host saw when the flag came
    for (int i = 0; i < 10; ++i) {
      if (launch(f_add, 1, 1, 1, 32, 1, 1, 0, nullptr, add_args, nullptr)) return 4;
    }
  }
  if (sync(nullptr)) return 5;
  std::printf("end %lld\n", *y);
  return 0;
}
