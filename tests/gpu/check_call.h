// CHECK(x) for the GPU check's programs: a CUDA driver or runtime call that must succeed. Else
// the program names the call and its error number on stderr and exits 1 (scripts/gpu-check.sh
// reads the exit status).
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    const int r_ = static_cast<int>(x);                                                   \
    if (r_ != 0) {                                                                        \
      std::fprintf(stderr, "%s: %s failed: %d\n", program_invocation_short_name, #x, r_); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)
