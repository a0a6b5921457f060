#include "graph/token.h"

#include <cstring>

namespace pygraph {
namespace {

// splitmix64 finalizer: cheap, and every input bit reaches every output bit.
uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace

uint64_t launch_token(const LaunchShape& s) {
  // On the launch path: one multiply-add per field, one full mix at the end (the multiplier is
  // odd, so each step is a bijection of the running value; the mix spreads every bit).
  constexpr uint64_t k = 0x9e3779b97f4a7c15ull;
  uint64_t h = s.function_id;
  h = h * k + ((uint64_t(s.block[0]) << 32) | s.block[1]);
  h = h * k + ((uint64_t(s.block[2]) << 16) | s.op);
  h = h * k + s.stream;
  h = h * k + s.attrs_hash;
  h = mix(0, h);
  return h ? h : 1;  // 0 is reserved for "no token"
}

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
