// Graph mode's harder cases as a real program on the stand-in driver, for the e2e test:
//  - two threads take turns launching onto the same stream (as PyTorch's autograd thread does
//    for backward), handing over through a condition variable: call order must be kept;
//  - every 4th step the program captures its step into a graph itself and launches that graph:
//    graph mode must leave the capture alone and flush before the program's graph launch;
//  - the host reads the result after every step (cuMemcpyDtoH after cuStreamSynchronize).
// Prints one line: a digest of everything the host read. Same output with and without the shim.
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>

#include "runtime_bootstrap.h"
#include "standin.h"

namespace {

constexpr int kLen = 64;

void mix(const unsigned*, const unsigned*, void** p) {  // order-sensitive: y = y * 3 + a
  int a = *static_cast<int*>(p[0]);
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kLen; ++i) y[i] = y[i] * 3 + a + i;
}

}  // namespace

int main() {
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  decltype(&cuLaunchKernel) launch;
  decltype(&cuModuleGetFunction) function;
  decltype(&cuStreamSynchronize) sync;
  decltype(&cuMemAlloc_v2) alloc;
  decltype(&cuMemcpyDtoH_v2) read;
  decltype(&cuStreamCreate) create;
  decltype(&cuStreamBeginCapture_v2) begin;
  decltype(&cuStreamEndCapture) end;
  decltype(&cuGraphInstantiateWithFlags) instantiate;
  decltype(&cuGraphLaunch) graph_launch;
  if (!get || !standin::resolve(get, "cuLaunchKernel", &launch) ||
      !standin::resolve(get, "cuModuleGetFunction", &function) ||
      !standin::resolve(get, "cuStreamSynchronize", &sync) ||
      !standin::resolve(get, "cuMemAlloc", &alloc) ||
      !standin::resolve(get, "cuMemcpyDtoH", &read) ||
      !standin::resolve(get, "cuStreamCreate", &create) ||
      !standin::resolve(get, "cuStreamBeginCapture", &begin) ||
      !standin::resolve(get, "cuStreamEndCapture", &end) ||
      !standin::resolve(get, "cuGraphInstantiateWithFlags", &instantiate) ||
      !standin::resolve(get, "cuGraphLaunch", &graph_launch)) {
    return 1;
  }
  const size_t sizes[2] = {4, 8};
  standin_register_kernel("mix", &mix, 2, sizes);
  CUfunction f;
  CUdeviceptr y;
  CUstream stream;
  if (function(&f, nullptr, "mix") || alloc(&y, kLen * sizeof(int)) || create(&stream, 0)) {
    return 2;
  }
  int host[kLen] = {};

  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;  // 0: forward thread, 1: backward thread, 2: done
  int step = 0;
  bool failed = false;
  auto launches = [&](int base) {
    for (int i = 0; i < 10; ++i) {
      int a = base + i * 7 + step;
      void* params[] = {&a, &y};
      if (launch(f, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr)) failed = true;
    }
  };
  std::thread backward([&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return turn != 0; });
      if (turn == 2) return;
      launches(1000);
      turn = 0;
      cv.notify_all();
    }
  });

  uint64_t digest = 1469598103934665603ull;
  for (step = 0; step < 24; ++step) {
    const bool captured = step % 4 == 3;
    CUgraph graph = nullptr;
    if (captured && begin(stream, CU_STREAM_CAPTURE_MODE_RELAXED)) return 3;
    launches(0);  // forward, this thread
    {
      std::unique_lock<std::mutex> lock(mu);
      turn = 1;  // backward, the other thread, same stream
      cv.notify_all();
      cv.wait(lock, [&] { return turn == 0; });
    }
    if (captured) {
      CUgraphExec exec;
      if (end(stream, &graph) || instantiate(&exec, graph, 0) || graph_launch(exec, stream)) {
        return 4;
      }
    }
    if (failed || sync(stream) || read(host, y, sizeof host)) return 5;
    for (int v : host) digest = (digest ^ static_cast<uint32_t>(v)) * 1099511628211ull;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    turn = 2;
    cv.notify_all();
  }
  backward.join();
  std::printf("%016llx\n", static_cast<unsigned long long>(digest));
  return 0;
}
