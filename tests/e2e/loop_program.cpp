// A training-loop-shaped program for the sequence tests, on the stand-in driver:
//   6 steps of [a b c a] each ending in cuStreamSynchronize (a repeated segment),
//   then 10 rounds of [b c] with no synchronization (a period),
//   then one odd step [a b b a] + cuStreamSynchronize (a variant, seen once).
// With the argument `memset`, each of the 6 steps is [a b memset c a] (cuMemsetD8Async on
// device memory, a node inside graph mode's sequence) and there is no period.
// With the argument `pause`, instead: 8 steps of [a b c a b c a b] and a sync, the host pausing
// 1 ms before each step's 6th launch (pause_places.h).
// With the argument `run`, instead: 300 launches of kernel a, the step counting them, and a sync
// (a plain C++ benchmark loop: one kernel, a loop of period one).
// With the argument `event` or `ipc-event`, instead: 8 steps of [a b record c a] and a sync, the
// record of one event made once, plain or with CU_EVENT_INTERPROCESS (another process's to wait
// for: graph mode records it where the program does, never in a chunk).
// Everything goes through cuGetProcAddress, as the CUDA runtime does.
#include <unistd.h>

#include <cstring>

#include "runtime_bootstrap.h"
#include "standin.h"

static void kernel(const unsigned*, const unsigned*, void**) {}

int main(int argc, char** argv) {
  const bool with_memset = argc > 1 && std::strcmp(argv[1], "memset") == 0;
  const bool with_pause = argc > 1 && std::strcmp(argv[1], "pause") == 0;
  const bool one_kernel = argc > 1 && std::strcmp(argv[1], "run") == 0;
  const bool ipc = argc > 1 && std::strcmp(argv[1], "ipc-event") == 0;
  const bool with_event = ipc || (argc > 1 && std::strcmp(argv[1], "event") == 0);
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  decltype(&cuLaunchKernel) launch;
  decltype(&cuModuleGetFunction) function;
  decltype(&cuStreamSynchronize) sync;
  decltype(&cuMemAlloc) alloc;
  decltype(&cuMemsetD8Async) memset8;
  decltype(&cuEventCreate) event_create;
  decltype(&cuEventRecord) record;
  if (!get || !standin::resolve(get, "cuEventCreate", &event_create) ||
      !standin::resolve(get, "cuEventRecord", &record) ||
      !standin::resolve(get, "cuLaunchKernel", &launch) ||
      !standin::resolve(get, "cuModuleGetFunction", &function) ||
      !standin::resolve(get, "cuStreamSynchronize", &sync) ||
      !standin::resolve(get, "cuMemAlloc", &alloc) ||
      !standin::resolve(get, "cuMemsetD8Async", &memset8)) {
    return 1;
  }
  CUdeviceptr buffer;
  if (alloc(&buffer, 64) != CUDA_SUCCESS) return 6;

  const size_t sizes[1] = {4};
  CUfunction f[3];
  const char* names[3] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    standin_register_kernel(names[i], &kernel, 1, sizes);
    if (function(&f[i], nullptr, names[i]) != CUDA_SUCCESS) return 2;
  }
  int step = 0;
  void* params[] = {&step};
  auto run = [&](int k) { return launch(f[k], 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr); };
  if (one_kernel) {
    for (step = 0; step < 300; ++step) {
      if (run(0)) return 3;
    }
    return sync(nullptr) ? 3 : 0;
  }
  if (with_event) {
    CUevent ev;
    if (event_create(&ev, ipc ? CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING : 0)) return 7;
    for (step = 0; step < 8; ++step) {
      if (run(0) || run(1) || record(ev, nullptr) || run(2) || run(0) || sync(nullptr)) return 3;
    }
    return 0;
  }
  if (with_pause) {
    for (step = 0; step < 8; ++step) {
      for (int i = 0; i < 8; ++i) {
        if (i == 5) usleep(1000);
        if (run(i % 3)) return 3;
      }
      if (sync(nullptr)) return 3;
    }
    return 0;
  }
  for (step = 0; step < 6; ++step) {
    if (run(0) || run(1)) return 3;
    if (with_memset && memset8(buffer, static_cast<unsigned char>(step), 16, nullptr)) return 3;
    if (run(2) || run(0) || sync(nullptr)) return 3;
  }
  for (int i = 0; i < 10 && !with_memset; ++i) {
    if (run(1) || run(2)) return 4;
  }
  if (run(0) || run(1) || run(1) || run(0) || sync(nullptr)) return 5;
  return 0;
}
