// The token of a launch: its shape, never its argument values. Two launches with equal tokens
// can be the same kernel node of a graph, with arguments (and grid and dynamic shared memory,
// which a kernel node can be updated for) patched between replays. Shared by the online engine
// and the offline analyzer, so both find the same sequences.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pygraph {

struct LaunchShape {
  uint32_t function_id;  // FunctionTable id (stable within a process and its trace)
  uint32_t block[3];
  uint64_t stream;
  uint16_t op;          // Op: launch kind
  uint64_t attrs_hash;  // launch attributes that shape the node; 0 for none
};

namespace token_detail {
// splitmix64 finalizer: cheap, and every input bit reaches every output bit.
inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}
}  // namespace token_detail

// Inline: on the launch path, one multiply-add per field, one full mix at the end (the
// multiplier is odd, so each step is a bijection of the running value; the mix spreads every bit).
inline uint64_t launch_token(const LaunchShape& s) {
  constexpr uint64_t k = 0x9e3779b97f4a7c15ull;
  uint64_t h = s.function_id;
  h = h * k + ((uint64_t(s.block[0]) << 32) | s.block[1]);
  h = h * k + ((uint64_t(s.block[2]) << 16) | s.op);
  h = h * k + s.stream;
  h = h * k + s.attrs_hash;
  h = token_detail::mix(0, h);
  return h ? h : 1;  // 0 is reserved for "no token"
}

// The token of a stream-ordered memset or 1-D copy (memop_call.h): its op, the element size of a
// memset, the memory kind a copy reads from (a copy node is patched only within its memory
// kinds; 0 when not known), and its stream. Addresses, sizes and values are patched.
uint64_t memop_token(uint16_t op, uint32_t element_size, uint32_t source_kind, uint64_t stream);

// LaunchShape::attrs_hash is built one attribute at a time, starting from 0:
//   h = attr_hash_add(h, id, value) with value the 64 bytes of a CUlaunchAttributeValue.
uint64_t attr_hash_add(uint64_t h, uint32_t id, const uint8_t* value);

// `n` bytes at `b` mixed into `h`, 8 at a time (the last few with their count).
uint64_t bytes_hash_add(uint64_t h, const uint8_t* b, size_t n);

}  // namespace pygraph
