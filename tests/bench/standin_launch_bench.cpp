// Cost of the shim's launch path on the CPU, without GPU noise: cuLaunchKernel of a no-op
// kernel on the driver stand-in, taken through cuGetProcAddress like the CUDA runtime does.
// Run it with and without LD_PRELOAD=libpygraph.so (scripts/bench-hot-path.sh does) and compare
// the medians: the difference is the shim's cost per launch in nanoseconds.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "standin.h"

static void noop(const unsigned*, const unsigned*, void**) {}

int main() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  auto get = reinterpret_cast<CUresult (*)(const char*, void**, int, cuuint64_t,
                                           CUdriverProcAddressQueryResult*)>(
      dlsym(lib, "cuGetProcAddress_v2"));
  void* p = nullptr;
  get("cuGetProcAddress", &p, 13000, 0, nullptr);
  get = reinterpret_cast<decltype(get)>(p);
  decltype(&cuLaunchKernel) launch;
  decltype(&cuModuleGetFunction) get_function;
  get("cuLaunchKernel", reinterpret_cast<void**>(&launch), 13000, 0, nullptr);
  get("cuModuleGetFunction", reinterpret_cast<void**>(&get_function), 13000, 0, nullptr);
  const size_t sizes[2] = {8, 4};
  standin_register_kernel("noop", &noop, 2, sizes);
  CUfunction f;
  get_function(&f, nullptr, "noop");
  long long a = 1;
  int b = 2;
  void* params[] = {&a, &b};
  const int n = 200000, reps = 21;
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
    auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
  }
  std::sort(ns.begin(), ns.end());
  std::printf("median_launch_ns %.1f\n", ns[reps / 2]);
  return 0;
}
