#include "graph/chunk_windows.h"

#include <algorithm>

namespace pygraph {

namespace {

// Whether chunk `c` has a graph of its own that can replay the window [start, end) in `ctx`:
// built in that context (tokens do not name it: a kernel's handle and the legacy stream are the
// same in every context, and a program may run the same layers on two devices), and holding no
// copy (a copy's token does not say what memory its destination is: a patch to another kind may
// be refused, and a refused patch disables the sequence).
bool lends(const Chunk& c, uint32_t start, uint32_t end, const std::vector<uint64_t>& tokens,
           uint64_t shape, CUcontext ctx) {
  return c.lender == Chunk::kOwnGraph && c.end - c.start == end - start && c.shape == shape &&
         c.end <= tokens.size() && c.graph.usable() && c.graph.context() == ctx &&
         std::equal(tokens.begin() + c.start, tokens.begin() + c.end, tokens.begin() + start) &&
         !c.graph.has_node_of(NodeKind::kCopy);
}

}  // namespace

WindowGraph window_graph(std::vector<Chunk>& chunks, uint32_t start, uint32_t end,
                         const std::vector<uint64_t>& tokens, uint64_t shape, CUcontext ctx,
                         uint64_t occurrence) {
  auto known = std::find_if(chunks.begin(), chunks.end(),
                            [&](const Chunk& c) { return c.start == start && c.end == end; });
  if (known != chunks.end()) {
    Chunk& c = *known;
    if (c.lender == Chunk::kOwnGraph) return {&c, !c.graph.usable(), false};
    // It borrowed before. Again in the next occurrence, or often: it recurs, its own graph
    // is built.
    const bool recurs = c.seen + 1 == occurrence || c.borrows >= kBorrowLimit;
    Chunk& lender = chunks[c.lender];
    if (!recurs && lends(lender, start, end, tokens, shape, ctx)) {
      c.seen = occurrence;
      ++c.borrows;
      return {&lender, false, true};
    }
    c.lender = Chunk::kOwnGraph;
    return {&c, true, false};
  }
  if (occurrence > 1 && end <= tokens.size()) {
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (!lends(chunks[i], start, end, tokens, shape, ctx)) continue;
      Chunk borrower{start, end, {}, 0};
      borrower.lender = static_cast<uint32_t>(i);
      borrower.borrows = 1;
      borrower.seen = occurrence;
      chunks.push_back(std::move(borrower));
      return {&chunks[i], false, true};
    }
  }
  chunks.push_back(Chunk{start, end, {}, 0});
  return {&chunks.back(), true, false};
}

}  // namespace pygraph
