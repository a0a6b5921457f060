// The shim's CPU cost per launch, measured in one process so that machine noise (other tenants,
// clocks, core placement) hits both sides alike: rounds alternate between the stand-in driver's
// own entry points and the pointers cuGetProcAddress hands out (the shim's wrappers when
// libpygraph.so is preloaded), and the median of the per-round differences is printed.
// The launches are training-shaped: steps of 64 launches of 4 kernels, the step number an
// argument, a stream sync ending each step. In graph mode they are recorded and replayed as
// graphs, so the figure is the cost of a deferred launch, its share of the graph replays (on the
// stand-in, whose graph launch runs the nodes' host functions) included.
// It also prints the median single call through the handed-out pointer (median_call_ns): in
// graph mode, a deferred launch alone.
//   scripts/bench-hot-path.sh runs it without the shim and in every mode.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "runtime_bootstrap.h"
#include "standin.h"

static void noop(const unsigned*, const unsigned*, void**) {}

using Launch = decltype(&cuLaunchKernel);
using Sync = decltype(&cuStreamSynchronize);

constexpr int kStep = 64;

static double ns_per_launch(Launch launch, Sync sync, const CUfunction* f, int n) {
  long long step = 0;
  int b = 2;
  void* params[] = {&step, &b};
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    step = i / kStep;
    launch(f[i % 4], 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
    if (i % kStep == kStep - 1) sync(nullptr);
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

// The median of single launch calls through `launch`, each timed on its own (steady_clock
// around the call, minus the median cost of an empty timing pair): in graph mode most calls
// are only recorded, so this is the cost of a deferred launch without its share of replays.
static double median_call_ns(Launch launch, Sync sync, const CUfunction* f, int n) {
  long long step = 0;
  int b = 2;
  void* params[] = {&step, &b};
  std::vector<long long> calls, pairs;
  calls.reserve(n);
  pairs.reserve(n);
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < n; ++i) {
    step = i / kStep;
    const auto t0 = clock::now();
    launch(f[i % 4], 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
    const auto t1 = clock::now();
    calls.push_back((t1 - t0).count());
    const auto t2 = clock::now();
    pairs.push_back((clock::now() - t2).count());
    if (i % kStep == kStep - 1) sync(nullptr);
  }
  std::sort(calls.begin(), calls.end());
  std::sort(pairs.begin(), pairs.end());
  return double(calls[calls.size() / 2] - pairs[pairs.size() / 2]);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  // Taken the way the CUDA runtime takes it: cuGetProcAddress for "cuGetProcAddress" first.
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  Launch handed_out = nullptr;
  Sync handed_out_sync = nullptr;
  if (!get || !standin::resolve(get, "cuLaunchKernel", &handed_out) ||
      !standin::resolve(get, "cuStreamSynchronize", &handed_out_sync)) {
    return 1;
  }
  auto own = reinterpret_cast<Launch>(standin_entry_point("cuLaunchKernel"));
  auto own_sync = reinterpret_cast<Sync>(standin_entry_point("cuStreamSynchronize"));

  const size_t sizes[2] = {8, 4};
  CUfunction f[4];
  for (int k = 0; k < 4; ++k) {
    const char* name[] = {"noop0", "noop1", "noop2", "noop3"};
    standin_register_kernel(name[k], &noop, 2, sizes);
    reinterpret_cast<decltype(&cuModuleGetFunction)>(standin_entry_point("cuModuleGetFunction"))(
        &f[k], nullptr, name[k]);
  }

  const int n = 64 * 800, rounds = 31;
  ns_per_launch(handed_out, handed_out_sync, f, n);  // warm-up: first launches, graphs built
  std::vector<double> base, shim, diff;
  for (int r = 0; r < rounds; ++r) {
    base.push_back(ns_per_launch(own, own_sync, f, n));
    shim.push_back(ns_per_launch(handed_out, handed_out_sync, f, n));
    diff.push_back(shim.back() - base.back());
  }
  std::printf("driver_ns %.1f\nhanded_out_ns %.1f\nadded_ns %.1f\n", median(base), median(shim),
              median(diff));
  std::printf("median_call_ns %.1f\n", median_call_ns(handed_out, handed_out_sync, f, n));
  return 0;
}
