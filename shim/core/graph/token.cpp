#include "graph/token.h"

#include <cstring>

namespace pygraph {
using token_detail::mix;

uint64_t memop_token(uint16_t op, uint32_t element_size, uint32_t source_kind, uint64_t stream) {
  return launch_token({0, {element_size, source_kind, 0}, stream, op, 0});
}

uint64_t attr_hash_add(uint64_t h, uint32_t id, const uint8_t* value) {
  return bytes_hash_add(mix(h, id), value, 64);
}

uint64_t bytes_hash_add(uint64_t h, const uint8_t* b, size_t n) {
  uint64_t w = 0;
  for (; n >= 8; b += 8, n -= 8) {
    std::memcpy(&w, b, 8);
    h = mix(h, w);
  }
  if (n) {
    w = 0;
    std::memcpy(&w, b, n);
    h = mix(h, w ^ (uint64_t(n) << 56));
  }
  return h;
}

}  // namespace pygraph
