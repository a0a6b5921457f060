#include "graph/period.h"

namespace pygraph {

size_t least_rotation(const uint64_t* t, size_t n) {
  // Two candidate starts i and j race; k tokens of both rotations agree so far. The loser of a
  // comparison cannot start the least rotation, nor can any start it passed over.
  size_t i = 0, j = 1, k = 0;
  while (i < n && j < n && k < n) {
    const uint64_t a = t[(i + k) % n], b = t[(j + k) % n];
    if (a == b) {
      ++k;
      continue;
    }
    if (a > b) {
      i += k + 1;
    } else {
      j += k + 1;
    }
    if (i == j) ++j;
    k = 0;
  }
  const size_t r = i < j ? i : j;
  return n < 2 ? 0 : r;
}

uint32_t period_unroll(size_t period, uint32_t min_length, uint32_t max_chunk,
                       uint32_t arg_period) {
  if (period == 0) return 1;
  const uint64_t m = arg_period ? arg_period : 1;
  const uint64_t unit = static_cast<uint64_t>(period) * m;
  uint32_t k = 1;
  while (unit * k * 2 <= max_chunk) k *= 2;
  while (unit * k < min_length) k *= 2;
  return static_cast<uint32_t>(m * k);
}

}  // namespace pygraph
