// The shim's CPU cost per iteration of a step made of short segments, after a warm-up that
// filled the detector's sequence table: the shape of a program next to its own graphs
// (torch.compile's reduce-overhead: a copy from pageable memory and a sync, twice, then three
// launches and a boundary), whose warm-up (compilation, autotuning) leaves many sequences
// behind. Every segment start looks for a found sequence that begins there, so its cost must
// not grow with the number of sequences known.
// Rounds alternate between the stand-in's own entry points and the ones cuGetProcAddress hands
// out (the shim's wrappers when libpygraph.so is preloaded); the median of the per-round
// differences is printed, per iteration, for a table nearly empty and for a full one; and per
// launch and sync, a segment of one launch that graph mode never follows.
//   scripts/bench-hot-path.sh runs it without the shim and in every mode.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "runtime_bootstrap.h"
#include "standin.h"

static void noop(const unsigned*, const unsigned*, void**) {}

struct Api {
  decltype(&cuLaunchKernel) launch;
  decltype(&cuStreamSynchronize) sync;
  decltype(&cuMemcpyHtoDAsync_v2) copy;
};

constexpr int kKernels = 8;

// One iteration: two small copies from pageable memory, each followed by a sync, then three
// launches and a sync.
static void iteration(const Api& a, const CUfunction* f, CUdeviceptr dst, long long* host,
                      long long i) {
  int b = 2;
  void* params[] = {&i, &b};
  host[0] = i;
  a.copy(dst, host, 8, nullptr);
  a.sync(nullptr);
  host[1] = i + 1;
  a.copy(dst + 8, host + 1, 8, nullptr);
  a.sync(nullptr);
  for (int k = 0; k < 3; ++k) a.launch(f[k], 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  a.sync(nullptr);
}

// One launch and a sync: a segment of one launch, which graph mode never follows (the GPU
// check's break-even N = 1 row), so all it adds is what every launch and sync pays.
static void launch_and_sync(const Api& a, const CUfunction* f, CUdeviceptr, long long*,
                            long long i) {
  int b = 2;
  void* params[] = {&i, &b};
  a.launch(f[0], 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  a.sync(nullptr);
}

// Segments that each repeat three times and never again: segment s launches the kernels of the
// bits of s, so each is another sequence.
static void fill(const Api& a, const CUfunction* f, int segments) {
  long long step = 0;
  int b = 2;
  void* params[] = {&step, &b};
  for (int s = 0; s < segments; ++s) {
    for (int rep = 0; rep < 3; ++rep) {
      for (int bit = 0; bit < 12; ++bit) {
        a.launch(f[3 + ((s >> bit) & 1) + 2 * (bit % 2)], 1, 1, 1, 32, 1, 1, 0, nullptr, params,
                 nullptr);
      }
      a.sync(nullptr);
    }
  }
}

using Step = void (*)(const Api&, const CUfunction*, CUdeviceptr, long long*, long long);

static double ns_per_iteration(const Api& a, const CUfunction* f, CUdeviceptr dst, long long* host,
                               int n, Step step = iteration) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) step(a, f, dst, host, i);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median added ns per iteration, rounds alternating between the two sets of entry points.
static double added_ns(const Api& own, const Api& shim, const CUfunction* f, CUdeviceptr dst,
                       long long* host, Step step = iteration) {
  const int n = 2000, rounds = 15;
  std::vector<double> diff;
  for (int r = 0; r < rounds; ++r) {
    const double base = ns_per_iteration(own, f, dst, host, n, step);
    diff.push_back(ns_per_iteration(shim, f, dst, host, n, step) - base);
  }
  return median(diff);
}

int main() {
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  Api shim{};
  if (!get || !standin::resolve(get, "cuLaunchKernel", &shim.launch) ||
      !standin::resolve(get, "cuStreamSynchronize", &shim.sync) ||
      !standin::resolve(get, "cuMemcpyHtoDAsync", &shim.copy)) {
    return 1;
  }
  const Api own{
      reinterpret_cast<decltype(&cuLaunchKernel)>(standin_entry_point("cuLaunchKernel")),
      reinterpret_cast<decltype(&cuStreamSynchronize)>(standin_entry_point("cuStreamSynchronize")),
      reinterpret_cast<decltype(&cuMemcpyHtoDAsync_v2)>(
          standin_entry_point("cuMemcpyHtoDAsync_v2"))};
  const size_t sizes[2] = {8, 4};
  CUfunction f[kKernels];
  for (int k = 0; k < kKernels; ++k) {
    char name[16];
    std::snprintf(name, sizeof name, "noop%d", k);
    standin_register_kernel(name, &noop, 2, sizes);
    reinterpret_cast<decltype(&cuModuleGetFunction)>(standin_entry_point("cuModuleGetFunction"))(
        &f[k], nullptr, name);
  }
  CUdeviceptr dst = 0;
  reinterpret_cast<decltype(&cuMemAlloc_v2)>(standin_entry_point("cuMemAlloc_v2"))(&dst, 64);
  static long long host[2];  // pageable

  ns_per_iteration(shim, f, dst, host, 200, launch_and_sync);
  const double one = added_ns(own, shim, f, dst, host, launch_and_sync);
  ns_per_iteration(shim, f, dst, host, 200);  // the step found and graphed
  const double few = added_ns(own, shim, f, dst, host);
  fill(shim, f, 1500);  // more sequences than the table holds
  ns_per_iteration(shim, f, dst, host, 200);
  const double full = added_ns(own, shim, f, dst, host);
  std::printf("added_ns_per_launch_and_sync %.1f\n", one);
  std::printf("added_ns_per_iteration_few_sequences %.1f\n", few);
  std::printf("added_ns_per_iteration_full_table %.1f\n", full);
  return 0;
}
