// A program that loads and unloads modules as it runs (an autotuner's or a JIT compiler's way),
// on the driver stand-in, through cuGetProcAddress as the CUDA runtime reaches the driver:
//   16 rounds of a step of module B's kernels; in rounds 0..7 also a step of module A's;
//   after round 7 A is unloaded and a module C loaded, whose function gets the handle of one of
//   A's (the stand-in hands unloaded handles out again) for a kernel with another layout;
//   in rounds 8..15 also a step of C's kernel and B's.
// A step is 10 launches on one buffer, then a synchronous copy of it to the host; every step also
// makes the current context current again (compiled PyTorch code does, once per iteration).
// Prints what the host read after every step, and whether a handle came back.
#include <cstdint>
#include <cstdio>

#include "runtime_bootstrap.h"
#include "standin.h"

namespace {

constexpr int kN = 64;

void scale(const unsigned*, const unsigned*, void** p) {  // y = y * a + 1
  const float a = *static_cast<float*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kN; ++i) y[i] = y[i] * a + 1.0f;
}
void add(const unsigned*, const unsigned*, void** p) {  // y += s * (i + 1)
  const int s = *static_cast<int*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kN; ++i) y[i] += float(s * (i + 1));
}
void mix(const unsigned*, const unsigned*, void** p) {  // y -= k * (i % m)
  const long long k = *static_cast<long long*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  const int m = *static_cast<int*>(p[2]);
  for (int i = 0; i < kN; ++i) y[i] -= float(k * (i % m));
}

struct Api {
  decltype(&cuLaunchKernel) launch;
  decltype(&cuModuleLoadData) load;
  decltype(&cuModuleGetFunction) function;
  decltype(&cuModuleUnload) unload;
  decltype(&cuMemAlloc) alloc;
  decltype(&cuMemcpyDtoH) read;
  decltype(&cuMemsetD32) set;
  decltype(&cuCtxGetCurrent) get_context;
  decltype(&cuCtxSetCurrent) set_context;
};

enum class Kind { kScale, kAdd, kMix };
struct Kernel {
  CUfunction f;
  Kind kind;
};

// A step: `even` at even positions, `odd` at odd ones. Each position has its own block size, so
// that no loop is found inside a step.
bool step(const Api& cu, Kernel even, Kernel odd, CUdeviceptr y, int n) {
  CUcontext ctx;
  for (int i = 0; i < 10; ++i) {
    if (i == 5 && (cu.get_context(&ctx) || cu.set_context(ctx))) return false;
    float a = 0.5f;
    long long k = n;
    int m = 3;
    void* p_scale[] = {&a, &y};
    void* p_add[] = {&n, &y};
    void* p_mix[] = {&k, &y, &m};
    const Kernel& kernel = i % 2 ? odd : even;
    void** p = kernel.kind == Kind::kScale ? p_scale : kernel.kind == Kind::kAdd ? p_add : p_mix;
    if (cu.launch(kernel.f, 1, 1, 1, 32 + i, 1, 1, 0, nullptr, p, nullptr)) return false;
  }
  float host[kN];
  if (cu.read(host, y, sizeof host)) return false;
  double sum = 0;
  for (int i = 0; i < kN; ++i) sum += host[i] * (i + 1);
  std::printf("%d %.9g\n", n, sum);
  return true;
}

}  // namespace

int main() {
  standin::GetProcAddress get = standin::runtime_get_proc_address();
  Api cu;
  if (!get || !standin::resolve(get, "cuLaunchKernel", &cu.launch) ||
      !standin::resolve(get, "cuModuleLoadData", &cu.load) ||
      !standin::resolve(get, "cuModuleGetFunction", &cu.function) ||
      !standin::resolve(get, "cuModuleUnload", &cu.unload) ||
      !standin::resolve(get, "cuMemAlloc", &cu.alloc) ||
      !standin::resolve(get, "cuMemcpyDtoH", &cu.read) ||
      !standin::resolve(get, "cuMemsetD32", &cu.set) ||
      !standin::resolve(get, "cuCtxGetCurrent", &cu.get_context) ||
      !standin::resolve(get, "cuCtxSetCurrent", &cu.set_context)) {
    return 1;
  }
  const size_t two[2] = {4, 8}, three[3] = {8, 8, 4};
  standin_register_kernel("u_scale", &scale, 2, two);
  standin_register_kernel("u_add", &add, 2, two);
  standin_register_kernel("u_mix", &mix, 3, three);
  CUdeviceptr ya, yb, yc;
  if (cu.alloc(&ya, kN * 4) || cu.alloc(&yb, kN * 4) || cu.alloc(&yc, kN * 4)) return 2;
  if (cu.set(ya, 0, kN) || cu.set(yb, 0, kN) || cu.set(yc, 0, kN)) return 2;

  CUmodule ma, mb, mc;
  CUfunction a_scale, a_add, b_scale, b_add, c_mix;
  if (cu.load(&ma, "a") || cu.load(&mb, "b") || cu.function(&a_scale, ma, "u_scale") ||
      cu.function(&a_add, ma, "u_add") || cu.function(&b_scale, mb, "u_scale") ||
      cu.function(&b_add, mb, "u_add")) {
    return 3;
  }
  const Kernel as{a_scale, Kind::kScale}, aa{a_add, Kind::kAdd};
  const Kernel bs{b_scale, Kind::kScale}, ba{b_add, Kind::kAdd};
  for (int n = 0; n < 8; ++n) {
    if (!step(cu, as, aa, ya, n) || !step(cu, bs, ba, yb, n)) return 4;
  }
  if (cu.unload(ma) || cu.load(&mc, "c") || cu.function(&c_mix, mc, "u_mix")) return 5;
  std::printf("handle reused %d\n", c_mix == a_add || c_mix == a_scale);
  const Kernel cm{c_mix, Kind::kMix};
  for (int n = 8; n < 16; ++n) {
    if (!step(cu, cm, ba, yc, n) || !step(cu, bs, ba, yb, n)) return 6;
  }
  return 0;
}
