// Randomized differential testing of loops without syncs: generated CUDA driver programs on the
// stand-in whose launches repeat as a loop (a layer repeated inside an iteration, iterations
// repeated without any synchronization), broken by host reads at random launches (the loop goes
// on from there: another rotation of the same period) and by odd launches, with arguments that
// change every iteration, alternate every other iteration (double buffers) or stay. Prints a
// digest of everything the host observed; run without and under the shim, the digests must be
// equal for every seed (tests/e2e/random_loop_test.cpp).
//
//   random_loop_program FIRST_SEED COUNT   ->  one line per seed: "<seed> <digest>"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "random_support.h"
#include "runtime_bootstrap.h"
#include "standin.h"

namespace {

constexpr const char* kProgram = "random_loop_program";
using random_support::Digest;

constexpr int kBuffers = 3;
constexpr int kLen = 64;  // ints per buffer

// Kernels whose results depend on the order of every launch before them (wrapping arithmetic
// in unsigned: a signed overflow is undefined behaviour).
void k_axpy(const unsigned*, const unsigned*, void** p) {  // y = 3y + x + a
  const int a = *static_cast<int*>(p[0]);
  auto* x = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[2]));
  for (int i = 0; i < kLen; ++i) y[i] = int(unsigned(y[i]) * 3u + unsigned(x[i]) + unsigned(a));
}
void k_rotate(const unsigned*, const unsigned*, void** p) {  // y rotated by a, plus its index
  const int a = *static_cast<int*>(p[0]) & 15;
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  int tmp[kLen];
  for (int i = 0; i < kLen; ++i) tmp[i] = int(unsigned(y[(i + a) % kLen]) + unsigned(i));
  std::memcpy(y, tmp, sizeof tmp);
}
void k_xor(const unsigned*, const unsigned*, void** p) {  // y ^= a * golden ratio, once
  const int a = *static_cast<int*>(p[0]);
  auto* y = reinterpret_cast<int*>(*static_cast<CUdeviceptr*>(p[1]));
  y[unsigned(a) % kLen] ^= int(unsigned(a) * 2654435761u);
}

using random_support::Api;

// One launch (or memset) of an iteration. Its scalar: constant, the iteration number, one of
// two values taken every other iteration, or one of three in turn (a ring of three: the loop is
// then unrolled to a multiple of 3 iterations, arg_period.h); its buffers: fixed, or swapped
// every other iteration.
struct Op {
  int kind;  // 0..2 kernels, 3 memset
  int x, y, scalar;
  int varies;  // 0 constant, 1 iteration, 2 alternating, 3 every third iteration
  bool swap;   // buffers swap every other iteration
};

uint64_t run_seed(const Api& cu, CUfunction fn[3], unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  auto op = [&] {
    return Op{pick(4) == 0 ? 3 : pick(3), pick(kBuffers), pick(kBuffers),
              pick(1000) - 500,           pick(4),        pick(4) == 0};
  };
  // An iteration: a prefix, a layer of 1..6 ops repeated 1..8 times (or, one time in eight,
  // one op repeated 20..99 times: a run of one kernel, a loop of its own where it is long
  // enough, sequence_detector.h), a suffix.
  std::vector<Op> iteration;
  for (int i = pick(4); i > 0; --i) iteration.push_back(op());
  const bool run = pick(8) == 0;
  std::vector<Op> layer(run ? 1 : 1 + pick(6));
  for (Op& o : layer) o = op();
  for (int r = run ? 20 + pick(80) : 1 + pick(8); r > 0; --r)
    iteration.insert(iteration.end(), layer.begin(), layer.end());
  for (int i = pick(4); i > 0; --i) iteration.push_back(op());

  CUdeviceptr buf[kBuffers];
  for (int b = 0; b < kBuffers; ++b) {
    OK(cu.alloc(&buf[b], kLen * sizeof(int)));
    OK(cu.memset_async(buf[b], unsigned(seed + b * 977), kLen, nullptr));
  }
  std::vector<int> host(kLen);
  Digest d;
  const int iterations = 10 + pick(110);
  int breaks = pick(4);     // host reads per 100 iterations, at random launches
  const int odd = pick(3);  // odd launches (the loop goes elsewhere once) per 100
  // One seed in three reads the host on a schedule instead, as a timed benchmark does: after
  // every `every`-th iteration counted from `offset`, and syncs twice after every `chunk`-th.
  // The segments between syncs are then runs of whole iterations of several lengths that all
  // begin alike: the one followed at a segment's start may end before the program's
  // (loop_after_segment, session 49).
  const bool scheduled = pick(3) == 0;
  const int every = 2 + pick(9), chunk = 3 + pick(30), offset = pick(10);
  if (scheduled) breaks = 0;
  for (int it = 0; it < iterations; ++it) {
    for (const Op& o : iteration) {
      int scalar = o.varies == 0   ? o.scalar
                   : o.varies == 1 ? o.scalar + it
                   : o.varies == 2 ? o.scalar * (it & 1)
                                   : o.scalar * (it % 3);
      const bool swapped = o.swap && (it & 1);
      CUdeviceptr x = buf[swapped ? o.y : o.x], y = buf[swapped ? o.x : o.y];
      if (o.kind == 3) {
        OK(cu.memset_async(y + 4 * (o.x + 1), unsigned(scalar), kLen / 2, nullptr));
      } else if (o.kind == 0) {
        void* p[] = {&scalar, &x, &y};
        OK(cu.launch(fn[0], 1, 1, 1, 32, 1, 1, 0, nullptr, p, nullptr));
      } else {
        void* p[] = {&scalar, &y};
        OK(cu.launch(fn[o.kind], 1, 1, 1, 32, 1, 1, 0, nullptr, p, nullptr));
      }
      if (pick(100 * static_cast<int>(iteration.size())) < breaks) {
        // The host reads in the middle of an iteration; the loop goes on from the next launch.
        OK(pick(2) ? cu.stream_sync(nullptr) : cu.ctx_sync(nullptr));
        OK(cu.copy_dh(host.data(), y, kLen * sizeof(int)));
        d.add(host.data(), kLen * sizeof(int));
      }
      if (pick(100 * static_cast<int>(iteration.size())) < odd) {
        void* p[] = {&scalar, &x};
        OK(cu.launch(fn[2], 1, 1, 1, 64, 1, 1, 0, nullptr, p, nullptr));  // another block
      }
    }
    if (scheduled && (it + offset) % every == every - 1) {
      OK(cu.stream_sync(nullptr));
      OK(cu.copy_dh(host.data(), buf[it % kBuffers], kLen * sizeof(int)));
      d.add(host.data(), kLen * sizeof(int));
    }
    if (scheduled && it % chunk == chunk - 1) {
      OK(cu.ctx_sync(nullptr));
      OK(cu.ctx_sync(nullptr));
    }
  }
  OK(cu.ctx_sync(nullptr));
  for (int b = 0; b < kBuffers; ++b) {
    OK(cu.copy_dh(host.data(), buf[b], kLen * sizeof(int)));
    d.add(host.data(), kLen * sizeof(int));
    OK(cu.free(buf[b]));
  }
  return d.h;
}

}  // namespace

int main(int argc, char** argv) {
  static const size_t s3[3] = {4, 8, 8}, s2[2] = {4, 8};
  const random_support::Kernel kernels[3] = {
      {"axpy", &k_axpy, 3, s3}, {"rotate", &k_rotate, 2, s2}, {"xor", &k_xor, 2, s2}};
  Api cu;
  CUfunction fn[3];
  return random_support::run_seeds(
      argc, argv, kProgram, kernels, 3, fn, &cu,
      [&](const Api& api, unsigned seed) { return run_seed(api, fn, seed); });
}
