// The cross-stream shape of one chunk: which streams its work is on, and what each recorded node
// depends on (docs/design-graph-mode.md, "Several streams in one graph").
//
// A chunk begins on one stream (ordinal 0), the stream its graph goes out on, L, unless the
// legacy stream joins later: then L is that one (GraphEngine::may_join, ChunkWork::home).
// Another stream joins through a wait on an event recorded in the chunk (cuStreamWaitEvent(S, e)
// with e's latest record a node of this chunk), or with no edge where GraphEngine::may_join
// allows; from then on S's work is recorded too. Inside the chunk each node depends on the
// previous node of its stream and on the event records its stream waited for since that node:
// exactly the order the program asked for, no more. What the chunk cannot express (its streams'
// work issued before the chunk, their work after it) is ordered at the graph's launch by the
// engine: L waits for each side stream's earlier work, and each side stream's later work waits
// for the graph (fork and join).
//
// Pure bookkeeping, no driver calls: the engine feeds it the chunk's work in program order and
// builds the graph from deps().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pygraph {

class StreamFork {
 public:
  static constexpr uint32_t kNone = ~0u;

  void clear();
  bool empty() const { return streams_.empty(); }
  size_t streams() const { return streams_.size(); }  // ordinal 0: the chunk's first stream
  uint64_t stream(uint32_t ordinal) const { return streams_[ordinal].id; }
  uint32_t ordinal(uint64_t stream) const;  // kNone: not in the chunk
  bool holds_stream(uint64_t stream) const { return ordinal(stream) != kNone; }

  // A graph node (kernel, memset, copy) on `stream`, which must be in the chunk, or the chunk is
  // empty and it becomes L. Returns the node's index.
  uint32_t node(uint64_t stream) {
    // Inline: a chunk on one stream (the usual one) is a count.
    if (chain_ && !streams_.empty() && streams_[0].id == stream) {
      streams_[0].last = chain_nodes_;
      return chain_nodes_++;
    }
    return node_slow(stream);
  }
  // An event record on `stream`, as a node of its own; the event's latest record is now this one.
  uint32_t record(uint64_t stream, uint64_t event);
  // Whether `event`'s latest record is a node of this chunk.
  bool holds_event(uint64_t event) const { return record_of(event) != kNone; }
  // Whether a record of `event` on `stream` now would run after the event's latest record in
  // the chunk: a path of edges leads from that one to it (NCCL records one event on its
  // stream and on the program's in turn, each after a wait on the other). Then the graph
  // records the event in the program's order (and the engine has the earlier record record a
  // spare event: GraphEngine::spare_for).
  bool record_follows(uint64_t stream, uint64_t event) const;
  // `stream` waits for `event`, whose latest record must be in the chunk: its next node depends
  // on that record. A stream not yet in the chunk joins it (a side stream).
  void wait(uint64_t stream, uint64_t event);
  // The event was destroyed or recorded outside the chunk: no later wait names this record.
  void forget_event(uint64_t event);

  size_t nodes() const { return chain_ ? chain_nodes_ : node_stream_.size(); }
  // True while the chunk is one stream's chain with no event op: node i depends on node i - 1
  // alone, and nothing per node is kept (the launch path of a single-stream program).
  bool chain() const { return chain_; }
  // The nodes node `i` depends on (indices of earlier nodes). For a chain() the pointer is good
  // until the next call.
  const uint32_t* deps(size_t i, size_t* count) const;
  uint32_t node_stream(size_t i) const { return chain_ ? 0 : node_stream_[i]; }
  // A hash of the shape: nodes, their streams' ordinals and every edge. Two chunks with the same
  // shape build the same graph topology.
  uint64_t shape() const { return shape_; }

 private:
  struct Stream {
    uint64_t id;
    uint32_t last = kNone;        // its latest node in the chunk
    std::vector<uint32_t> waits;  // records waited for since `last`
  };
  struct Record {
    uint64_t event;
    uint32_t node;
  };
  uint32_t record_of(uint64_t event) const;
  uint32_t node_slow(uint64_t stream);
  uint32_t join(uint64_t stream);
  uint32_t add_node(uint32_t ordinal);
  void unchain();  // the chain's nodes kept one by one, from here on every node
  void mix(uint64_t v);

  std::vector<Stream> streams_;
  std::vector<Record> records_;  // the latest record of each event in the chunk
  std::vector<uint32_t> node_stream_;
  std::vector<uint32_t> dep_start_;  // node i's deps: deps_[dep_start_[i] .. dep_start_[i+1])
  std::vector<uint32_t> deps_;
  mutable std::vector<uint32_t> walk_;  // record_follows: nodes to visit, and those seen from
  mutable std::vector<uint8_t> seen_;   // the record on (capacities kept)
  uint64_t shape_ = 0;
  bool chain_ = true;
  uint32_t chain_nodes_ = 0;
  mutable uint32_t chain_dep_ = 0;  // deps() of a chain's node
};

}  // namespace pygraph
