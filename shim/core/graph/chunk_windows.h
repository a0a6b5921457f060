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
// cross-stream shape. After the sequence's first occurrence, a window with no graph of its own
// replays the graph of such a window (it borrows it) instead of building one. A window that
// borrows in two occurrences in a row is no accident of timing: it gets its own graph, so that
// two windows that recur in every occurrence do not patch one graph back and forth (a
// transformer's layers are alike, their arguments are not).
//
// A unit of its own so that the engine stays a coordinator and the tests call it directly.
// Called once per chunk submitted, never per launch.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/chunk_submit.h"

namespace pygraph {

struct WindowGraph {
  Chunk* chunk = nullptr;  // whose graph replays the window (its own entry, or the lender's)
  bool fresh = false;      // build it first: a new window, or its graph is gone
  bool borrowed = false;   // another window's graph
};

// The graph for the window [start, end) of a plan's `chunks`. `tokens` are the followed
// sequence's (positions index them), `shape` the chunk's StreamFork::shape(), `occurrence` the
// plan's count of occurrences started, this one included. A new window is added to `chunks`
// (pointers into it may move).
WindowGraph window_graph(std::vector<Chunk>& chunks, uint32_t start, uint32_t end,
                         const std::vector<uint64_t>& tokens, uint64_t shape, uint64_t occurrence);

}  // namespace pygraph
