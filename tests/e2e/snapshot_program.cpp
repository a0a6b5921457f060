// A program that takes stats snapshots with pygraph_write_stats (shim/include/pygraph.h), on the
// stand-in driver. It runs its arguments in order:
//   loop            20 iterations of 8 launches of 4 kernels, no sync inside (a period graph
//                   mode replays; an iteration counter argument changes every time), then
//                   cuCtxSynchronize
//   write=PATH      pygraph_write_stats(PATH); `write` alone passes NULL
//   inner=PATH      a launch whose kernel calls pygraph_write_stats(PATH) from inside the driver
//                   (the stand-in runs kernels at submission: inside the shim's wrapper, which
//                   may hold the engine lock), then cuCtxSynchronize
//   move-stats=DEST renames the file PYGRAPH_STATS names to DEST (so that a snapshot written
//                   there survives the document the shim writes at exit)
// Prints "pid N" first and "write RESULT" per write ("write absent" when the process has no
// pygraph_write_stats: the shim is not preloaded). Exit 1: setup failed, 3: a driver call
// failed, 4: bad argument; killed by SIGALRM after 20 s (a deadlock).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime_bootstrap.h"
#include "standin.h"

namespace {

using WriteStats = int (*)(const char*);
WriteStats g_write_stats = nullptr;
std::string g_inner_path;

void body(const unsigned*, const unsigned*, void**) {}
void snap(const unsigned*, const unsigned*, void**) {
  std::printf("write %d\n", g_write_stats ? g_write_stats(g_inner_path.c_str()) : -2);
}

struct Driver {
  decltype(&cuLaunchKernel) launch = nullptr;
  decltype(&cuCtxSynchronize_v2) sync = nullptr;  // what the runtime gets for CUDA 13
  CUfunction kernels[4] = {};
  CUfunction snap_kernel = nullptr;

  // Set up at the first action that needs the driver: writes before it see an uninitialized
  // shim.
  bool ready() {
    if (launch) return true;
    standin::GetProcAddress get = standin::runtime_get_proc_address();
    decltype(&cuModuleGetFunction) function;
    if (!get || !standin::resolve(get, "cuLaunchKernel", &launch) ||
        !standin::resolve(get, "cuModuleGetFunction", &function) ||
        !standin::resolve(get, "cuCtxSynchronize", &sync)) {
      return false;
    }
    const size_t sizes[1] = {4};
    const char* names[4] = {"k0", "k1", "k2", "k3"};
    for (int k = 0; k < 4; ++k) {
      standin_register_kernel(names[k], &body, 1, sizes);
      if (function(&kernels[k], nullptr, names[k]) != CUDA_SUCCESS) return false;
    }
    standin_register_kernel("snap", &snap, 1, sizes);
    return function(&snap_kernel, nullptr, "snap") == CUDA_SUCCESS;
  }

  bool run(CUfunction f, int* arg) {
    void* params[] = {arg};
    return launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr) == CUDA_SUCCESS;
  }
};

}  // namespace

int main(int argc, char** argv) {
  alarm(20);
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // lines in order, also from inside a kernel
  g_write_stats = reinterpret_cast<WriteStats>(dlsym(RTLD_DEFAULT, "pygraph_write_stats"));
  std::printf("pid %d\n", static_cast<int>(getpid()));
  Driver d;
  int iteration = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "loop") {
      if (!d.ready()) return 1;
      // Kernels 0 1 2 3 0 2 1 3: every 4 launches in a row differ from the 4 before them, so
      // the loop's period is the whole iteration (graph mode graphs periods of 8 or more).
      static const int order[8] = {0, 1, 2, 3, 0, 2, 1, 3};
      for (int n = 0; n < 20; ++n, ++iteration) {
        for (int k : order) {
          if (!d.run(d.kernels[k], &iteration)) return 3;
        }
      }
      if (d.sync(nullptr) != CUDA_SUCCESS) return 3;
    } else if (a == "write" || a.rfind("write=", 0) == 0) {
      const char* path = a == "write" ? nullptr : argv[i] + 6;
      if (g_write_stats) {
        std::printf("write %d\n", g_write_stats(path));
      } else {
        std::printf("write absent\n");
      }
    } else if (a.rfind("inner=", 0) == 0) {
      if (!d.ready()) return 1;
      g_inner_path = a.substr(6);
      if (!d.run(d.snap_kernel, &iteration) || d.sync(nullptr) != CUDA_SUCCESS) return 3;
    } else if (a.rfind("move-stats=", 0) == 0) {
      const char* stats = std::getenv("PYGRAPH_STATS");
      if (!stats || std::rename(stats, argv[i] + 11) != 0) return 4;
    } else {
      std::fprintf(stderr, "snapshot_program: bad argument '%s'\n", argv[i]);
      return 4;
    }
  }
  return 0;
}
