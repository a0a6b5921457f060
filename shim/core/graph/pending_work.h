// The current chunk's recorded work, as graph mode's engine keeps it between recording a call
// and submitting the chunk (chunk_submit.h): one slot per launch, memop or event op, in program
// order, with its arguments and attributes in the engine's arenas.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "driver/memop_call.h"
#include "driver/memory_kinds.h"
#include "graph/graph_chunk.h"
#include "graph/program_calls.h"

namespace pygraph {

struct Pending {
  NodeKind kind;
  EngineLaunch launch;     // kernels: params, extra and attrs pointers cleared (not ours)
  MemopCall memop;         // memsets and copies; src is the snapshot when staged
  EventCall event;         // event records and waits
  ProgramGraphCall graph;  // the program's graph launches (child graph nodes)
  uint32_t args_offset;    // into the engine's argument arena
  uint32_t attrs_offset;   // into the engine's attribute arena
  uint32_t packed_size;    // kernels: >0, the arena holds a block for `extra` (layout unknown,
                           // or a block smaller than the parameters)
  MemKind src;             // memops: the source's memory (for the signature)
  uint32_t position;       // in the sequence (event ops issued at once leave gaps)
};

// Slots are reused from chunk to chunk and filled field by field: no allocation and no zeroing
// of a whole slot on the launch path.
class PendingList {
 public:
  Pending& add() {
    if (n_ == slots_.size()) slots_.emplace_back();
    return slots_[n_++];
  }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  void clear() { n_ = extra_weight_ = 0; }
  // Work beyond one launch per entry: a child graph's nodes but one (chunk_policy.h).
  void add_weight(size_t extra) { extra_weight_ += extra; }
  size_t extra_weight() const { return extra_weight_; }
  const Pending* begin() const { return slots_.data(); }
  Pending* data() { return slots_.data(); }
  const Pending* end() const { return slots_.data() + n_; }

 private:
  std::vector<Pending> slots_;
  size_t n_ = 0;
  size_t extra_weight_ = 0;
};

}  // namespace pygraph
