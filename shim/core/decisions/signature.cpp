#include "decisions/signature.h"

#include <cstdio>

namespace pygraph {
namespace {

uint64_t fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

void SignatureBuilder::mix(uint64_t v) {
  // A stable mix (the value is written to files read by later runs and other builds).
  h_ ^= v + 0x9e3779b97f4a7c15ull + (h_ << 6) + (h_ >> 2);
  h_ *= 0xff51afd7ed558ccdull;
  h_ ^= h_ >> 33;
}

void SignatureBuilder::add_launch(const std::string& kernel_name, const uint32_t block[3],
                                  uint16_t op, uint64_t node_attrs, uint32_t stream_ordinal) {
  mix(1);
  mix(fnv(kernel_name));
  mix((uint64_t(block[0]) << 32) | block[1]);
  mix((uint64_t(block[2]) << 32) | op);
  mix(node_attrs);
  mix(stream_ordinal);
  ++count_;
}

void SignatureBuilder::add_memop(uint16_t op, uint32_t element_size, uint32_t src_kind,
                                 uint32_t stream_ordinal) {
  mix(2);
  mix((uint64_t(op) << 32) | element_size);
  mix((uint64_t(src_kind) << 32) | stream_ordinal);
  ++count_;
}

std::string SignatureBuilder::finish(bool periodic) const {
  char out[48];
  std::snprintf(out, sizeof out, "%c-%u-%016llx", periodic ? 'p' : 's', count_,
                static_cast<unsigned long long>(h_));
  return out;
}

}  // namespace pygraph
