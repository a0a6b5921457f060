// What a graph of ours costs the GPU when it holds the program's own graph as a child (session
// 30: torch.compile's reduce-overhead step, an input copy and the program's graph, ran about
// 0.3 % slower as one graph of ours than launched as the program made it, on GPU-bound steps).
// No shim. A "program graph" of NODES kernels is captured and instantiated as PyTorch does; each
// step copies a new input into its static input buffer, then runs the program's graph, in one of
// four ways:
//   eager    the copy kernel launched, then the program's exec launched (what the program does);
//   patched  one graph: the copy as a kernel node, the program's graph as a child graph node
//            after it; each step patches the copy's source (cudaGraphExecKernelNodeSetParams),
//            then launches it (what graph mode does);
//   fixed    the same graph launched without the patch (the source alternates by two graphs);
//   twice    the copy and the program's exec each as a graph of its own, both launched (a graph
//            of one copy node beside the program's launch).
// The ways take turns, ROUNDS times; each turn times STEPS steps on the GPU with events (and the
// host's time to issue them). Prints one line per way:
//   way median_gpu_us_per_step p25 p75 median_host_us_per_step
//   child_graph_cost [NODES] [SPIN] [STEPS] [ROUNDS]
// SPIN: loop iterations of each program kernel (its length on the GPU).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "check_call.h"

namespace {

constexpr int kLen = 1 << 20;  // floats in the input (4 MB: timm-b8's input is 4.8 MB)

__global__ void copy(float* dst, const float* src, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    dst[i] = src[i];
  }
}

// A program kernel: reads the input, spins, writes one value per block.
__global__ void work(const float* in, float* out, int spin, int k) {
  float v = in[(blockIdx.x * 97 + k) % kLen];
  for (int i = 0; i < spin; ++i) v = v * 0.999f + 0.001f;
  if (threadIdx.x == 0) out[blockIdx.x + k] = v;
}

long long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}

struct Quartiles {
  double p25, median, p75;
};
Quartiles quartiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {v[n / 4], v[n / 2], v[(3 * n) / 4]};
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 300;
  const int spin = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 50;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 15;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *in_static, *out, *inputs[2];
  CHECK(cudaMalloc(&in_static, kLen * sizeof(float)));
  CHECK(cudaMalloc(&out, (nodes + 1024) * sizeof(float)));
  for (float*& p : inputs) {
    CHECK(cudaMalloc(&p, kLen * sizeof(float)));
    CHECK(cudaMemset(p, 0, kLen * sizeof(float)));
  }
  const int copy_blocks = 264, copy_threads = 256;

  // The program's graph, captured and instantiated as PyTorch instantiates its graphs.
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < nodes; ++k) work<<<132, 128, 0, s>>>(in_static, out, spin, k);
  cudaGraph_t program;
  CHECK(cudaStreamEndCapture(s, &program));
  cudaGraphExec_t program_exec;
  CHECK(cudaGraphInstantiateWithFlags(
      &program_exec, program,
      cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUseNodePriority));

  // Ours: the copy as a kernel node, the program's graph as a child after it.
  const float* src = inputs[0];
  int n = kLen;
  void* copy_args[3] = {&in_static, &src, &n};
  cudaKernelNodeParams cp{};
  cp.func = reinterpret_cast<void*>(copy);
  cp.gridDim = dim3(copy_blocks);
  cp.blockDim = dim3(copy_threads);
  cp.kernelParams = copy_args;
  cudaGraph_t ours;
  CHECK(cudaGraphCreate(&ours, 0));
  cudaGraphNode_t copy_node, child;
  CHECK(cudaGraphAddKernelNode(&copy_node, ours, nullptr, 0, &cp));
  CHECK(cudaGraphAddChildGraphNode(&child, ours, &copy_node, 1, program));
  // "patched" patches an exec of its own; "fixed" has one per source and patches none.
  cudaGraphExec_t patched_exec, fixed_exec[2];
  CHECK(cudaGraphInstantiate(&patched_exec, ours, 0));
  CHECK(cudaGraphInstantiate(&fixed_exec[0], ours, 0));
  src = inputs[1];
  CHECK(cudaGraphKernelNodeSetParams(copy_node, &cp));
  CHECK(cudaGraphInstantiate(&fixed_exec[1], ours, 0));

  // "twice": the copy alone as a graph (patched each step), then the program's exec.
  cudaGraph_t copy_graph;
  CHECK(cudaGraphCreate(&copy_graph, 0));
  cudaGraphNode_t lone_copy;
  CHECK(cudaGraphAddKernelNode(&lone_copy, copy_graph, nullptr, 0, &cp));
  cudaGraphExec_t copy_exec;
  CHECK(cudaGraphInstantiate(&copy_exec, copy_graph, 0));

  // The ways, by index into `ways`: no string compared inside the timed steps.
  enum Way { kEager, kPatched, kFixed, kTwice };
  const char* const ways[] = {"eager", "patched", "fixed", "twice"};
  auto step = [&](int way, int i) {
    src = inputs[i % 2];
    switch (way) {
      case kEager:
        copy<<<copy_blocks, copy_threads, 0, s>>>(in_static, src, n);
        CHECK(cudaGraphLaunch(program_exec, s));
        break;
      case kPatched:
        CHECK(cudaGraphExecKernelNodeSetParams(patched_exec, copy_node, &cp));
        CHECK(cudaGraphLaunch(patched_exec, s));
        break;
      case kFixed:
        CHECK(cudaGraphLaunch(fixed_exec[i % 2], s));
        break;
      default:
        CHECK(cudaGraphExecKernelNodeSetParams(copy_exec, lone_copy, &cp));
        CHECK(cudaGraphLaunch(copy_exec, s));
        CHECK(cudaGraphLaunch(program_exec, s));
    }
  };
  constexpr size_t kWays = sizeof ways / sizeof ways[0];
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<std::vector<double>> gpu(kWays), host(kWays);
  for (int r = 0; r < rounds + 1; ++r) {  // round 0 warms up (uploads, clocks)
    for (size_t w = 0; w < kWays; ++w) {
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaEventRecord(start, s));
      const long long t0 = now_ns();
      for (int i = 0; i < steps; ++i) step(int(w), i);
      const long long t1 = now_ns();
      CHECK(cudaEventRecord(stop, s));
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (r == 0) continue;
      gpu[w].push_back(1000.0 * ms / steps);
      host[w].push_back((t1 - t0) / 1000.0 / steps);
    }
  }
  for (size_t w = 0; w < kWays; ++w) {
    const Quartiles g = quartiles(gpu[w]);
    std::printf("%s %.2f %.2f %.2f %.2f\n", ways[w], g.median, g.p25, g.p75,
                quartiles(host[w]).median);
  }
  return 0;
}
