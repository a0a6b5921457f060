// What the generated-program binaries of the randomized differential tests share
// (random_program.cpp, random_loop_program.cpp): the digest of what the host observed, and one
// clear line and a failing exit for a driver call that fails.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace random_support {

struct Digest {  // FNV-1a
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
};

inline void ok_or_exit(CUresult r, const char* program, unsigned seed, const char* call) {
  if (r == CUDA_SUCCESS) return;
  std::fprintf(stderr, "%s: seed %u: %s failed\n", program, seed, call);
  std::exit(1);
}

}  // namespace random_support

// In a function with a `seed` in scope, in a file that defines kProgram.
#define OK(x) random_support::ok_or_exit((x), kProgram, seed, #x)
