#include "graph/token.h"

#include <cstring>

namespace pygraph {
using token_detail::mix;

uint64_t memop_token(uint16_t op, uint32_t element_size, uint32_t source_kind, uint64_t stream) {
  return launch_token({0, {element_size, source_kind, 0}, stream, op, 0});
}

uint64_t attr_hash_add(uint64_t h, uint32_t id, const uint8_t* value) {
  h = mix(h, id);
  for (int w = 0; w < 64; w += 8) {
    uint64_t v;
    std::memcpy(&v, value + w, 8);
    h = mix(h, v);
  }
  return h;
}

}  // namespace pygraph
