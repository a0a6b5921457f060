#include "graph/chunk_windows.h"

#include <algorithm>

namespace pygraph {

namespace {

// Whether chunk `c` has a graph of its own that can replay the window [start, end).
bool lends(const Chunk& c, uint32_t start, uint32_t end, const std::vector<uint64_t>& tokens,
           uint64_t shape) {
  return c.lender == Chunk::kOwnGraph && c.end - c.start == end - start && c.shape == shape &&
         c.end <= tokens.size() && c.graph.usable() &&
         std::equal(tokens.begin() + c.start, tokens.begin() + c.end, tokens.begin() + start);
}

}  // namespace

WindowGraph window_graph(std::vector<Chunk>& chunks, uint32_t start, uint32_t end,
                         const std::vector<uint64_t>& tokens, uint64_t shape, uint64_t occurrence) {
  auto known = std::find_if(chunks.begin(), chunks.end(),
                            [&](const Chunk& c) { return c.start == start && c.end == end; });
  if (known != chunks.end()) {
    Chunk& c = *known;
    if (c.lender == Chunk::kOwnGraph) return {&c, !c.graph.usable(), false};
    // It borrowed before. Again in the next occurrence: it recurs, its own graph is built.
    const bool recurs = c.seen + 1 == occurrence;
    Chunk& lender = chunks[c.lender];
    if (!recurs && lends(lender, start, end, tokens, shape)) {
      c.seen = occurrence;
      return {&lender, false, true};
    }
    c.lender = Chunk::kOwnGraph;
    return {&c, true, false};
  }
  if (occurrence > 1 && end <= tokens.size()) {
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (!lends(chunks[i], start, end, tokens, shape)) continue;
      Chunk borrower{start, end, {}, 0};
      borrower.lender = static_cast<uint32_t>(i);
      borrower.seen = occurrence;
      chunks.push_back(std::move(borrower));
      return {&chunks[i], false, true};
    }
  }
  chunks.push_back(Chunk{start, end, {}, 0});
  return {&chunks.back(), true, false};
}

}  // namespace pygraph
