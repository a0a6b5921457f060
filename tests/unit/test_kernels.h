// Stand-in kernels the engine tests share: small float updates whose results depend on the
// order of every launch before them (a missed or reordered launch changes the bytes compared).
#pragma once

#include <cuda.h>

namespace pygraph::test {

constexpr int kKernelFloats = 32;  // floats each kernel updates

inline void scale_kernel(const unsigned*, const unsigned*, void** p) {  // y = y * a + 1
  const float a = *static_cast<float*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kKernelFloats; ++i) y[i] = y[i] * a + 1.0f;
}

inline void add_kernel(const unsigned*, const unsigned*, void** p) {  // y += step * (i + 1)
  const int step = *static_cast<int*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kKernelFloats; ++i) y[i] += float(step * (i + 1));
}

// Four updates of kOrderFloats floats, each result depending on the order of every launch
// before it (loops and steps built from them: graph_loop_test, graph_sync_chunks_test).
constexpr int kOrderFloats = 16;

inline void order_k0(const unsigned*, const unsigned*, void** p) {
  const float a = *static_cast<float*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kOrderFloats; ++i) y[i] = y[i] * 0.5f + a;
}
inline void order_k1(const unsigned*, const unsigned*, void** p) {
  const float a = *static_cast<float*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kOrderFloats; ++i) y[i] = y[i] - a * float(i);
}
inline void order_k2(const unsigned*, const unsigned*, void** p) {
  const float a = *static_cast<float*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kOrderFloats; ++i) y[i] = y[(i + 1) % kOrderFloats] * 0.25f + y[i] * a;
}
inline void order_k3(const unsigned*, const unsigned*, void** p) {
  const float a = *static_cast<float*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kOrderFloats; ++i) y[i] = y[i] > a ? y[i] - a : y[i] + 1.0f;
}

}  // namespace pygraph::test
