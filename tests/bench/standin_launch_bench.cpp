// The shim's CPU cost per launch, measured in one process so that machine noise (other tenants,
// clocks, core placement) hits both sides alike: rounds alternate between the stand-in driver's
// own cuLaunchKernel and the pointer cuGetProcAddress hands out (the shim's wrapper when
// libpygraph.so is preloaded), and the median of the per-round differences is printed.
//   scripts/bench-hot-path.sh runs it without the shim, in off mode and in trace mode.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "runtime_bootstrap.h"
#include "standin.h"

static void noop(const unsigned*, const unsigned*, void**) {}

using Launch = decltype(&cuLaunchKernel);

static double ns_per_launch(Launch launch, CUfunction f, void** params, int n) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  // Taken the way the CUDA runtime takes it: cuGetProcAddress for "cuGetProcAddress" first.
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  Launch handed_out = nullptr;
  if (!get || !standin::resolve(get, "cuLaunchKernel", &handed_out)) return 1;
  auto own = reinterpret_cast<Launch>(standin_entry_point("cuLaunchKernel"));

  const size_t sizes[2] = {8, 4};
  standin_register_kernel("noop", &noop, 2, sizes);
  CUfunction f;
  reinterpret_cast<decltype(&cuModuleGetFunction)>(standin_entry_point("cuModuleGetFunction"))(
      &f, nullptr, "noop");
  long long a = 1;
  int b = 2;
  void* params[] = {&a, &b};

  const int n = 50000, rounds = 31;
  ns_per_launch(handed_out, f, params, n);  // warm-up: first-launch work, buffers
  std::vector<double> base, shim, diff;
  for (int r = 0; r < rounds; ++r) {
    base.push_back(ns_per_launch(own, f, params, n));
    shim.push_back(ns_per_launch(handed_out, f, params, n));
    diff.push_back(shim.back() - base.back());
  }
  std::printf("driver_ns %.1f\nhanded_out_ns %.1f\nadded_ns %.1f\n", median(base), median(shim),
              median(diff));
  return 0;
}
