// Which graph a chunk of a followed sequence replays. A chunk's window is where it starts and
// ends in the sequence; its plan keeps a graph per window (Chunk, chunk_submit.h).
//
// A window's own graph, built at its first replay, is the rule: the same window holds the same
// work every time, with arguments patched where they changed (graph_chunk.h). Where chunk ends
// vary from one occurrence to the next, that rule builds a graph for nearly every chunk: a
// flush that falls at another launch each time (PyTorch's allocator queries an event as it
// allocates, when the GPU is behind) starts the chunks after it at new places. Measured on the
// H200 (session 21): two-streams under torch.compile, 100 iterations between syncs followed as
// one segment of 3,300 positions, built 271 graphs in the suite's timed chunks and ran 11 %
// slower than without the shim.
//
// In a sequence that repeats itself inside (a loop's iterations between two syncs), such a
// window holds the same work as a window one or more iterations away: the same tokens (kernels,
// block shapes, attributes, streams, memop kinds: what a node cannot patch) and the same
// cross-stream shape, in the same context, with no copy (chunk_windows.cpp says why). After
// the sequence's first occurrence, a window with no graph of its own replays the graph of such
// a window (it borrows it) instead of building one. A window that borrows in two occurrences in
// a row, or kBorrowLimit times in all, is no accident of timing: it gets its own graph, so that
// windows that recur do not patch one graph back and forth for good (a transformer's layers
// are alike, their arguments are not; a schedule of cuts may repeat every second occurrence).
//
// A unit of its own so that the engine stays a coordinator and the tests call it directly.
// Called once per chunk submitted, never per launch.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "graph/chunk_submit.h"

namespace pygraph {

// Borrows after which a window gets its own graph. A borrowed replay patches what differs
// between the two windows; a graph is built once (NOTES.md, H100: instantiating 10 / 100 nodes
// 0.11 / 0.38 ms, a node's patch 0.37-0.74 us: a chunk of 32 nodes costs about 150 us to build,
// 12-24 us to patch whole; 4 borrows stay well below the build).
constexpr uint32_t kBorrowLimit = 4;

struct WindowGraph {
  Chunk* chunk = nullptr;  // whose graph replays the window (its own entry, or the lender's)
  bool fresh = false;      // build it first: a new window, or its graph is gone
  bool borrowed = false;   // another window's graph
};

// A plan's chunks, one per window seen in each context: those with a graph of their own and
// those that borrow. A graph replays in the context it was built in: kernel nodes run there
// (the same sequence may be followed in two contexts: the same layers on two devices).
class ChunkWindows {
 public:
  // Windows kept that only borrow, and windows kept in all, at most: past either, the windows
  // with no graph (borrowers, and those whose graph was evicted) are forgotten at once (seen
  // again, they borrow or build again). Where cuts vary for hours the windows seen grow without
  // end, and a new window looks for a lender among those kept.
  static constexpr size_t kMaxBorrowers = 1024;
  static constexpr size_t kMaxWindows = 4096;

  // The graph for the window [start, end) in context `ctx`. `tokens` are the followed
  // sequence's (positions index them), `shape` the chunk's StreamFork::shape(), `occurrence`
  // the plan's count of occurrences started, this one included. A new window is added
  // (pointers to chunks may move).
  WindowGraph find(uint32_t start, uint32_t end, const std::vector<uint64_t>& tokens,
                   uint64_t shape, CUcontext ctx, uint64_t occurrence);

  // Every window, for the graphs' owners: eviction, unloads, destroyed events.
  std::vector<Chunk>& all() { return chunks_; }
  const std::vector<Chunk>& all() const { return chunks_; }
  bool empty() const { return chunks_.empty(); }
  size_t borrowers() const { return borrowers_; }
  // Every window goes (their graphs destroyed first by the caller).
  void clear();
  // The graph replayed least recently (Chunk::last_used) among those last replayed before
  // occurrence `before` (counting those recorded as graphs: Chunk::replayed_in) is destroyed,
  // `keep`'s never: true if one was. Its window stays; seen again, it is built again.
  bool evict_least_recent(const DriverApi& api, const Chunk* keep, uint64_t before);

 private:
  struct Key {
    uint32_t start, end;
    CUcontext ctx;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(uint64_t(k.start) << 32 | k.end) ^
             (reinterpret_cast<uintptr_t>(k.ctx) * 0x9e3779b97f4a7c15ull);
    }
  };
  Chunk* add(uint32_t start, uint32_t end, CUcontext ctx);
  void compact();

  std::vector<Chunk> chunks_;
  std::unordered_map<Key, uint32_t, KeyHash> index_;  // a window: its chunk's index
  size_t borrowers_ = 0;
};

}  // namespace pygraph
