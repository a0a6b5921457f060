// A step shaped as torch.compile's reduce-overhead mode makes it, on the stand-in driver, for the
// e2e test of the program's own graphs as child graphs (program_graphs.h): the program captures
// two graphs of its own ("forward" and "backward", 5 launches each) and launches them every step
// between short stretches of eager launches (inputs copied in, an optimizer-like tail), then the
// host reads the result. By the argument:
//  - change: at step 20 the program changes a kernel node of its forward graph
//    (cuGraphExecKernelNodeSetParams);
//  - destroy: at step 20 it destroys the forward graph and instantiates another;
//  - stream: at step 20 it launches the forward graph on a second stream (ordered by events);
//  - twice: at step 20 it launches the backward graph again right after itself, on the legacy
//    stream (ordered with its blocking stream both ways, and no other call between: the first
//    launch is still in a chunk then);
//  - device: its graphs are instantiated for device launch;
//  - loop: its forward graph holds 40 launches, and it syncs and reads every 50 steps of 200
//    (a loop, as compiled inference with reduce-overhead runs);
//  - alone STEPS READ_EVERY: each step is one launch of the forward graph (40 launches) and
//    nothing else, and the host syncs and reads every READ_EVERY steps (compiled inference at
//    batch 1 under reduce-overhead, timed in chunks of READ_EVERY iterations);
//  - beside [READ_EVERY [ahead [memset]]]: each of 200 steps is one launch (the input copied in)
//    and the forward graph, and the host reads every READ_EVERY steps (1; compiled inference at
//    a large batch under reduce-overhead). With `ahead`, a second line counts the steps whose
//    input launch had run on the stand-in before the program launched its graph (all 200 without
//    the shim; early_head: a segment's head goes out at once); with `memset` the input is set
//    by a memset instead (a copy of the input, as cudaMemcpyAsync makes it);
//  - peers: each of 200 steps is one launch, the forward graph (one launch) and a kernel named
//    as NCCL's collectives (one its peers wait for), then the host reads.
// Prints one line: a digest of everything the host read, the same with and without the shim (and
// the `ahead` line).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime_bootstrap.h"
#include "standin.h"

namespace {

constexpr int kLen = 32;

void mix(const unsigned*, const unsigned*, void** p) {  // order-sensitive: y = y * 3 + a
  int a = *static_cast<int*>(p[0]);
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kLen; ++i) y[i] = y[i] * 3 + a + i;
}

}  // namespace

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  decltype(&cuLaunchKernel) launch;
  decltype(&cuModuleGetFunction) function;
  decltype(&cuStreamSynchronize) sync;
  decltype(&cuMemAlloc_v2) alloc;
  decltype(&cuMemcpyDtoH_v2) read;
  decltype(&cuStreamCreate) create;
  decltype(&cuStreamBeginCapture_v2) begin;
  decltype(&cuStreamEndCapture) end;
  decltype(&cuGraphInstantiateWithFlags) instantiate;  // "cuGraphInstantiate" at 13000
  decltype(&cuGraphLaunch) graph_launch;
  decltype(&cuGraphExecDestroy) exec_destroy;
  decltype(&cuGraphDestroy) graph_destroy;
  decltype(&cuGraphGetNodes) get_nodes;
  decltype(&cuGraphExecKernelNodeSetParams_v2) set_params;
  decltype(&cuEventCreate) event_create;
  decltype(&cuEventRecord) record;
  decltype(&cuStreamWaitEvent) wait;
  decltype(&cuMemsetD32Async) memset;
  if (!get || !standin::resolve(get, "cuLaunchKernel", &launch) ||
      !standin::resolve(get, "cuModuleGetFunction", &function) ||
      !standin::resolve(get, "cuStreamSynchronize", &sync) ||
      !standin::resolve(get, "cuMemAlloc", &alloc) ||
      !standin::resolve(get, "cuMemcpyDtoH", &read) ||
      !standin::resolve(get, "cuStreamCreate", &create) ||
      !standin::resolve(get, "cuStreamBeginCapture", &begin) ||
      !standin::resolve(get, "cuStreamEndCapture", &end) ||
      !standin::resolve(get, "cuGraphInstantiate", &instantiate) ||
      !standin::resolve(get, "cuGraphLaunch", &graph_launch) ||
      !standin::resolve(get, "cuGraphExecDestroy", &exec_destroy) ||
      !standin::resolve(get, "cuGraphDestroy", &graph_destroy) ||
      !standin::resolve(get, "cuGraphGetNodes", &get_nodes) ||
      !standin::resolve(get, "cuGraphExecKernelNodeSetParams", &set_params) ||
      !standin::resolve(get, "cuEventCreate", &event_create) ||
      !standin::resolve(get, "cuEventRecord", &record) ||
      !standin::resolve(get, "cuStreamWaitEvent", &wait) ||
      !standin::resolve(get, "cuMemsetD32Async", &memset)) {
    return 1;
  }
  const size_t sizes[2] = {4, 8};
  standin_register_kernel("mix", &mix, 2, sizes);
  standin_register_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", &mix, 2, sizes);
  CUfunction f;
  CUdeviceptr y;
  CUstream stream, side;
  CUevent ev;
  if (function(&f, nullptr, "mix") || alloc(&y, kLen * sizeof(int)) || create(&stream, 0) ||
      create(&side, 0) || event_create(&ev, 0)) {
    return 2;
  }
  // Arguments the graphs hold: fixed at capture, as static buffers are.
  const bool alone = std::strcmp(what, "alone") == 0;
  const bool beside = std::strcmp(what, "beside") == 0;
  const bool peers = std::strcmp(what, "peers") == 0;
  CUfunction collective;
  if (peers && function(&collective, nullptr, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")) return 2;
  const bool loop = alone || std::strcmp(what, "loop") == 0;
  int fixed[48];
  for (int i = 0; i < 48; ++i) fixed[i] = 100 + i;
  auto run = [&](int* a, CUstream s) {
    void* params[] = {a, &y};
    return launch(f, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr);
  };
  // Captures `count` launches with arguments fixed[base..base+count) into a new executable graph.
  auto capture = [&](int base, CUgraph* graph, CUgraphExec* exec, int count = 5) {
    if (begin(stream, CU_STREAM_CAPTURE_MODE_RELAXED)) return false;
    for (int i = 0; i < count; ++i) {
      if (run(&fixed[base + i], stream)) return false;
    }
    // As PyTorch instantiates its graphs, or launchable from the device ("device").
    const unsigned long long flags = std::strcmp(what, "device") == 0
                                         ? CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH
                                         : CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                               CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    return end(stream, graph) == CUDA_SUCCESS && instantiate(exec, *graph, flags) == CUDA_SUCCESS;
  };
  CUgraph forward_graph, backward_graph;
  CUgraphExec forward, backward;
  if (!capture(0, &forward_graph, &forward,
               loop    ? 40
               : peers ? 1
                       : 5) ||
      !capture(loop ? 40 : 5, &backward_graph, &backward)) {
    return 3;
  }
  // PyTorch destroys the captured graph once instantiated: the executable one runs on.
  if (graph_destroy(backward_graph)) return 3;

  int host[kLen] = {};
  uint64_t digest = 1469598103934665603ull;
  const int steps = alone && argc > 2 ? std::atoi(argv[2]) : loop || beside || peers ? 200 : 40;
  const int read_every = alone && argc > 3    ? std::max(std::atoi(argv[3]), 1)
                         : beside && argc > 2 ? std::max(std::atoi(argv[2]), 1)
                         : loop               ? 50
                                              : 1;
  const bool probe = beside && argc > 3 && std::strcmp(argv[3], "ahead") == 0;
  const bool set_input = probe && argc > 4 && std::strcmp(argv[4], "memset") == 0;
  int ahead = 0;
  for (int step = 0; step < steps; ++step) {
    int input = step * 7, tail = step + 1000;
    CUstream at = stream;
    if (step == 20 && std::strcmp(what, "change") == 0) {
      CUgraphNode nodes[5];
      size_t n = 5;
      int changed = 555;
      void* params[] = {&changed, &y};
      CUDA_KERNEL_NODE_PARAMS p{};
      p.func = f;
      p.gridDimX = p.gridDimY = p.gridDimZ = 1;
      p.blockDimX = 32;
      p.blockDimY = p.blockDimZ = 1;
      p.kernelParams = params;
      if (get_nodes(forward_graph, nodes, &n) || n != 5 || set_params(forward, nodes[2], &p)) {
        return 4;
      }
    }
    if (step == 20 && std::strcmp(what, "destroy") == 0) {
      if (exec_destroy(forward) || !capture(3, &forward_graph, &forward)) return 4;
    }
    if (step == 20 && std::strcmp(what, "stream") == 0) {
      at = side;
      if (record(ev, stream) || wait(side, ev, 0)) return 4;
    }
    if (alone) {
      if (graph_launch(forward, stream)) return 5;
    } else if (beside) {
      const unsigned long long ran = standin_kernels_executed();
      if (set_input ? memset(y, unsigned(input), kLen, stream) != CUDA_SUCCESS
                    : run(&input, stream) != CUDA_SUCCESS) {
        return 5;
      }
      ahead += standin_kernels_executed() > ran;
      if (graph_launch(forward, stream)) return 5;
    } else if (peers) {
      void* params[] = {&input, &y};
      if (run(&input, stream) || graph_launch(forward, stream) ||
          launch(collective, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr)) {
        return 5;
      }
    } else {
      if (run(&input, stream) || graph_launch(forward, at)) return 5;
      if (at != stream && (record(ev, side) || wait(stream, ev, 0))) return 5;
      if (run(&input, stream) || run(&tail, stream) || graph_launch(backward, stream)) return 5;
      if (step == 20 && std::strcmp(what, "twice") == 0) {
        if (graph_launch(backward, nullptr)) return 5;
      }
      for (int i = 0; i < 3; ++i) {
        if (run(&tail, stream)) return 5;
      }
    }
    if ((step + 1) % read_every) continue;
    if (sync(stream) || read(host, y, sizeof host)) return 6;
    for (int v : host) digest = (digest ^ static_cast<uint32_t>(v)) * 1099511628211ull;
  }
  std::printf("%016llx\n", static_cast<unsigned long long>(digest));
  if (probe) std::printf("ahead %d\n", ahead);
  return 0;
}
