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
         c.end <= tokens.size() && c.context == ctx && c.graph.usable() &&
         std::equal(tokens.begin() + c.start, tokens.begin() + c.end, tokens.begin() + start) &&
         !c.graph.has_node_of(NodeKind::kCopy);
}

}  // namespace

WindowGraph ChunkWindows::find(uint32_t start, uint32_t end, const std::vector<uint64_t>& tokens,
                               uint64_t shape, CUcontext ctx, uint64_t occurrence) {
  if (auto known = index_.find(Key{start, end, ctx}); known != index_.end()) {
    Chunk& c = chunks_[known->second];
    if (c.lender == Chunk::kOwnGraph) return {&c, !c.graph.usable(), false};
    // It borrowed before. Again in the next occurrence, or often: it recurs, its own graph
    // is built.
    const bool recurs = c.seen + 1 == occurrence || c.borrows >= kBorrowLimit;
    Chunk& lender = chunks_[c.lender];
    if (!recurs && lends(lender, start, end, tokens, shape, ctx)) {
      c.seen = occurrence;
      ++c.borrows;
      return {&lender, false, true};
    }
    c.lender = Chunk::kOwnGraph;
    --borrowers_;
    return {&c, true, false};
  }
  if (borrowers_ >= kMaxBorrowers || chunks_.size() >= kMaxWindows) compact();
  if (occurrence > 1 && end <= tokens.size()) {
    for (size_t i = 0; i < chunks_.size(); ++i) {
      if (!lends(chunks_[i], start, end, tokens, shape, ctx)) continue;
      Chunk* borrower = add(start, end, ctx);
      borrower->lender = static_cast<uint32_t>(i);
      borrower->borrows = 1;
      borrower->seen = occurrence;
      ++borrowers_;
      return {&chunks_[i], false, true};
    }
  }
  return {add(start, end, ctx), true, false};
}

Chunk* ChunkWindows::add(uint32_t start, uint32_t end, CUcontext ctx) {
  index_.emplace(Key{start, end, ctx}, static_cast<uint32_t>(chunks_.size()));
  chunks_.push_back(Chunk{start, end, {}, 0});
  chunks_.back().context = ctx;
  return &chunks_.back();
}

void ChunkWindows::compact() {
  // Borrowers hold no graph, nor do windows whose graph was evicted: they go, and the windows
  // with graphs move up, which only the borrowers' lender indices would have had to follow.
  std::erase_if(chunks_,
                [](const Chunk& c) { return c.lender != Chunk::kOwnGraph || !c.graph.built(); });
  index_.clear();
  for (size_t i = 0; i < chunks_.size(); ++i) {
    const Chunk& c = chunks_[i];
    index_.emplace(Key{c.start, c.end, c.context}, static_cast<uint32_t>(i));
  }
  borrowers_ = 0;
}

bool ChunkWindows::evict_least_recent(const DriverApi& api, const Chunk* keep, uint64_t before) {
  Chunk* victim = nullptr;
  for (Chunk& c : chunks_) {
    if (&c == keep || !c.graph.built() || c.replayed_in >= before) continue;
    if (!victim || c.last_used < victim->last_used) victim = &c;
  }
  if (!victim) return false;
  victim->graph.destroy(api);
  return true;
}

void ChunkWindows::clear() {
  chunks_.clear();
  index_.clear();
  borrowers_ = 0;
}

}  // namespace pygraph
