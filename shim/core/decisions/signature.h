// A sequence's name across runs, the key of its decision in the cache (decision_cache.h).
//
// Tokens (graph/token.h) identify launches within one process: they hash a kernel's process-local
// id and the stream's handle, which change from run to run. A signature hashes only what does
// not: kernel names, block shapes, the launch entry point, the attributes a node carries, memop
// kinds, and which of the sequence's streams each node is on (streams numbered in order of first
// use), never addresses, handles or argument values.
#pragma once

#include <cstdint>
#include <string>

namespace pygraph {

class SignatureBuilder {
 public:
  void add_launch(const std::string& kernel_name, const uint32_t block[3], uint16_t op,
                  uint64_t node_attrs, uint32_t stream_ordinal);
  void add_memop(uint16_t op, uint32_t element_size, uint32_t src_kind, uint32_t stream_ordinal);
  // "s" (segment) or "p" (period), the node count and a 64-bit hash, e.g. "p-80-0f3a...".
  std::string finish(bool periodic) const;

 private:
  void mix(uint64_t v);
  uint64_t h_ = 0x6a09e667f3bcc909ull;
  uint32_t count_ = 0;
};

}  // namespace pygraph
