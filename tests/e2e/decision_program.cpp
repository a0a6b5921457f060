// A training-loop-shaped program for measured decisions and their cache, on the stand-in driver:
// 40 steps of [dec_a dec_b dec_c] each ending in cuStreamSynchronize; prints what its kernels
// summed, which must not depend on how the steps ran.
#include <cstdio>

#include "runtime_bootstrap.h"
#include "standin.h"

static unsigned long long g_sum = 0;
static void kernel(const unsigned*, const unsigned*, void** params) {
  g_sum = g_sum * 3 + *static_cast<const int*>(params[0]);
}

int main() {
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  decltype(&cuLaunchKernel) launch;
  decltype(&cuModuleGetFunction) function;
  decltype(&cuStreamSynchronize) sync;
  if (!get || !standin::resolve(get, "cuLaunchKernel", &launch) ||
      !standin::resolve(get, "cuModuleGetFunction", &function) ||
      !standin::resolve(get, "cuStreamSynchronize", &sync)) {
    return 1;
  }
  const size_t sizes[1] = {4};
  CUfunction f[3];
  const char* names[3] = {"dec_a", "dec_b", "dec_c"};
  for (int i = 0; i < 3; ++i) {
    standin_register_kernel(names[i], &kernel, 1, sizes);
    if (function(&f[i], nullptr, names[i]) != CUDA_SUCCESS) return 2;
  }
  int step = 0;
  void* params[] = {&step};
  for (step = 0; step < 40; ++step) {
    for (int k = 0; k < 3; ++k) {
      if (launch(f[k], 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr)) return 3;
    }
    if (sync(nullptr)) return 3;
  }
  std::printf("%llu\n", g_sum);
  return 0;
}
