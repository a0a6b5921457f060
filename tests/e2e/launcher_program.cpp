// A program for `pygraph run` tests, on the stand-in driver. It runs its arguments in order:
//   loop         20 iterations of 8 launches of 4 kernels, then cuCtxSynchronize (graph mode
//                replays most of it)
//   fork         forks; the child runs `loop` and exits 0, the parent waits for it
//   env=NAME     prints "NAME=value" ("NAME unset")
//   ready=PATH   creates PATH, then waits for a signal (killed by SIGALRM after 20 s)
//   exit=N       exits with status N (exit handlers run: the shim writes its stats)
//   signal=N     raises signal N
// Prints "done" at the end. Exit 1: setup failed, 3: a driver call failed, 4: bad argument.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime_bootstrap.h"
#include "standin.h"

namespace {

void body(const unsigned*, const unsigned*, void**) {}

int loop() {
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  decltype(&cuLaunchKernel) launch;
  decltype(&cuModuleGetFunction) function;
  decltype(&cuCtxSynchronize_v2) sync;
  if (!get || !standin::resolve(get, "cuLaunchKernel", &launch) ||
      !standin::resolve(get, "cuModuleGetFunction", &function) ||
      !standin::resolve(get, "cuCtxSynchronize", &sync)) {
    return 1;
  }
  const size_t sizes[1] = {4};
  const char* names[4] = {"k0", "k1", "k2", "k3"};
  CUfunction kernels[4];
  for (int k = 0; k < 4; ++k) {
    standin_register_kernel(names[k], &body, 1, sizes);
    if (function(&kernels[k], nullptr, names[k]) != CUDA_SUCCESS) return 1;
  }
  // Every 4 launches in a row differ from the 4 before them: the period is the iteration.
  static const int order[8] = {0, 1, 2, 3, 0, 2, 1, 3};
  for (int n = 0; n < 20; ++n) {
    for (int k : order) {
      void* params[] = {&n};
      if (launch(kernels[k], 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr) != CUDA_SUCCESS) {
        return 3;
      }
    }
  }
  return sync(nullptr) == CUDA_SUCCESS ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  alarm(20);
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "loop") {
      if (int r = loop()) return r;
    } else if (a == "fork") {
      const pid_t child = fork();
      if (child == 0) std::exit(loop());
      int status = 0;
      waitpid(child, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 3;
    } else if (a.rfind("env=", 0) == 0) {
      const char* v = std::getenv(argv[i] + 4);
      std::printf(v ? "%s=%s\n" : "%s unset\n", argv[i] + 4, v);
    } else if (a.rfind("ready=", 0) == 0) {
      if (FILE* f = std::fopen(argv[i] + 6, "w")) std::fclose(f);
      pause();
    } else if (a.rfind("exit=", 0) == 0) {
      std::exit(std::atoi(argv[i] + 5));
    } else if (a.rfind("signal=", 0) == 0) {
      raise(std::atoi(argv[i] + 7));
    } else {
      std::fprintf(stderr, "launcher_program: bad argument '%s'\n", argv[i]);
      return 4;
    }
  }
  std::printf("done\n");
  return 0;
}
