// Loops without syncs: how a period found in the token stream becomes what graph mode follows.
//
//  - One identity per loop: a period is stored in its canonical rotation (the least rotation of
//    its tokens), so the same loop found again after a break, starting at another launch, is the
//    same sequence with the same plan and graphs (compiled code found a 60-launch period three
//    times at three rotations before this).
//  - Short periods are followed as multiples: a period of 2 launches (one fused layer of a
//    compiled model: a GEMV and a Triton kernel) or 5 (a CuPy loop) is unrolled to a chunk's
//    worth, so that one graph launch replaces many launches. The multiple is a power of two, so
//    that arguments alternating every 2, 4, ... periods (double buffers) patch no node; a
//    multiple of a loop's argument period where it has another (arg_period.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pygraph {

// Index of the first token of the least rotation of t[0..n) (0 for n < 2). O(n), no allocation.
size_t least_rotation(const uint64_t* t, size_t n);

// How many times a period of `period` launches is repeated in the unit graph mode follows:
// `arg_period` (the iterations after which its arguments come back, arg_period.h) times the
// largest power of two whose multiple fits in `max_chunk` launches, at least enough to reach
// `min_length` launches, at least once.
uint32_t period_unroll(size_t period, uint32_t min_length, uint32_t max_chunk,
                       uint32_t arg_period = 1);

}  // namespace pygraph
