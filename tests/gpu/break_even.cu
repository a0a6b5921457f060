// How many launches a graph must replace to pay (issue 10, "graphs that pay"): steps of N
// launches of a small kernel whose arguments change every step, each step ended by a stream sync
// (the shape of a step that reads the host: one chunk per step in graph mode). Run without the
// shim and in graph mode with PYGRAPH_FIRST_CHUNK=N (the whole step in one graph, its changed
// arguments patched); tests/gpu/check.py compares the median step times per N and names the
// smallest N from which graphs win. Graph mode follows no segment of one launch, so its N = 1
// step is the launch passed through, never a graph of one node. `raw` (no shim) measures that
// graph itself: the step's N launches captured once into a graph, then each step patches every
// node's arguments (cudaGraphExecKernelNodeSetParams) and launches it, as graph mode would.
// Prints, after warm-up steps:
//   N median_step_ns p25_step_ns p75_step_ns median_cpu_ns
//   break_even N STEPS [raw]
// median_cpu_ns: the step's host time up to the sync (its launches, or its patches and graph
// launch), which is what a launch costs where the host pauses after it instead of syncing.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

__global__ void tiny(float* p, float a, int i) {
  if (threadIdx.x == 0) p[i] = p[i] * 0.5f + a;
}

static long long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}

// The step's launches captured once; each step patches every node's arguments, then launches.
class PatchedGraph {
 public:
  bool build(cudaStream_t s, float* p, int n) {
    p_ = p;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return false;
    for (int i = 0; i < n; ++i) tiny<<<1, 32, 0, s>>>(p, 0.0f, i);
    cudaGraph_t g = nullptr;
    if (cudaStreamEndCapture(s, &g) != cudaSuccess) return false;
    // In no particular order: node k may be launch i != k, but every node gets an index of its
    // own each step, so the step does the launches' work.
    size_t count = 0;
    if (cudaGraphGetNodes(g, nullptr, &count) != cudaSuccess) return false;
    nodes_.resize(count);
    if (cudaGraphGetNodes(g, nodes_.data(), &count) != cudaSuccess) return false;
    params_.resize(count);
    for (size_t k = 0; k < count; ++k) {
      if (cudaGraphKernelNodeGetParams(nodes_[k], &params_[k]) != cudaSuccess) return false;
    }
    return count == size_t(n) && cudaGraphInstantiate(&exec_, g, 0) == cudaSuccess;
  }
  bool launch(cudaStream_t s, float a) {
    // Each node's argument block: the pointer, this step's value, its own index (the driver
    // copies the values at each set-params call).
    a_ = a;
    void* args[3] = {&p_, &a_, &i_};
    for (size_t k = 0; k < nodes_.size(); ++k) {
      i_ = int(k);
      cudaKernelNodeParams kp = params_[k];
      kp.kernelParams = args;
      if (cudaGraphExecKernelNodeSetParams(exec_, nodes_[k], &kp) != cudaSuccess) return false;
    }
    return cudaGraphLaunch(exec_, s) == cudaSuccess;
  }

 private:
  float* p_ = nullptr;
  float a_ = 0;
  int i_ = 0;
  std::vector<cudaGraphNode_t> nodes_;
  std::vector<cudaKernelNodeParams> params_;
  cudaGraphExec_t exec_ = nullptr;
};

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 2000;
  const bool raw = argc > 3 && std::strcmp(argv[3], "raw") == 0;
  const int warm = 200;
  float* p = nullptr;
  cudaStream_t s;
  if (n < 1 || n > 4096 || steps < 1 || cudaMalloc(&p, n * sizeof(float)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    std::fprintf(stderr, "break_even: bad N or STEPS, or no GPU\n");
    return 1;
  }
  cudaMemsetAsync(p, 0, n * sizeof(float), s);
  PatchedGraph graph;
  if (raw && !graph.build(s, p, n)) {
    std::fprintf(stderr, "break_even: the raw graph could not be built\n");
    return 1;
  }
  std::vector<long long> times, cpu;
  times.reserve(steps);
  cpu.reserve(steps);
  for (int step = 0; step < warm + steps; ++step) {
    const long long t0 = now_ns();
    bool ok = true;
    if (raw) {
      ok = graph.launch(s, float(step));
    } else {
      for (int i = 0; i < n; ++i) tiny<<<1, 32, 0, s>>>(p, float(step), i);
    }
    const long long t1 = now_ns();
    if (!ok || cudaStreamSynchronize(s) != cudaSuccess) {
      std::fprintf(stderr, "break_even: step %d failed\n", step);
      return 1;
    }
    if (step >= warm) {
      times.push_back(now_ns() - t0);
      cpu.push_back(t1 - t0);
    }
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu.begin(), cpu.end());
  auto at = [&](double q) { return times[size_t(q * double(times.size() - 1))]; };
  std::printf("%d %lld %lld %lld %lld\n", n, at(0.5), at(0.25), at(0.75), cpu[cpu.size() / 2]);
  return 0;
}
