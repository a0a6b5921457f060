// Which graph a chunk's window replays (ChunkWindows, chunk_windows.h), on the driver stand-in:
// its own, or, after the sequence's first occurrence, one built for a window with the same work
// in the same context and with no copy; a window that borrows in two occurrences in a row or
// kBorrowLimit times gets its own; windows that only borrow are kept up to a bound.
#include "graph/chunk_windows.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

class ChunkWindowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    const size_t sizes[2] = {4, 8};
    kernel_ = test::standin_kernel(&table_, "windows_k0", &test::order_k0, 2, sizes);
    ASSERT_NE(kernel_, nullptr);
    args_.assign(kernel_->arg_bytes, 0);
  }
  void TearDown() override {
    for (Chunk& c : windows_.all()) c.graph.destroy(api_);
  }

  // The graph a window gets, built there when it is fresh (one node: enough to be usable).
  WindowGraph get(uint32_t start, uint32_t end, uint64_t occurrence, uint64_t shape = 0,
                  CUcontext ctx = nullptr, bool copy = false) {
    WindowGraph g = windows_.find(start, end, tokens_, shape, ctx, occurrence);
    if (g.fresh) {
      RecordedNode n[2] = {{kernel_, {1, 1, 1}, {32, 1, 1}, 0, args_.data()}, {}};
      n[1].kind = NodeKind::kCopy;
      n[1].dst = reinterpret_cast<uint64_t>(dst_);
      n[1].src = reinterpret_cast<uint64_t>(src_);
      n[1].count = sizeof src_;
      EXPECT_EQ(g.chunk->graph.build(api_, n, copy ? 2 : 1, ctx), CUDA_SUCCESS);
      g.chunk->shape = shape;
    }
    return g;
  }
  size_t built() const {
    size_t n = 0;
    for (const Chunk& c : windows_.all()) n += c.graph.built();
    return n;
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  const FunctionInfo* kernel_ = nullptr;
  std::vector<uint8_t> args_;
  float src_[4] = {1, 2, 3, 4}, dst_[4] = {};
  // A sequence of 4 iterations of the same 5 launches (tokens 1..5), then one of its own.
  std::vector<uint64_t> tokens_ = {1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 9};
  ChunkWindows windows_;
};

TEST_F(ChunkWindowsTest, AWindowReplaysItsOwnGraph) {
  const WindowGraph first = get(0, 4, 1);
  EXPECT_TRUE(first.fresh);
  EXPECT_FALSE(first.borrowed);
  const WindowGraph again = get(0, 4, 2);
  EXPECT_FALSE(again.fresh);
  EXPECT_FALSE(again.borrowed);
  EXPECT_EQ(again.chunk, &windows_.all()[0]);
  EXPECT_EQ(built(), 1u);
}

TEST_F(ChunkWindowsTest, InTheFirstOccurrenceEveryWindowHasItsOwn) {
  // Windows of the same work in one occurrence: a transformer's layers are alike, their
  // arguments are not; a graph each, as always.
  get(0, 4, 1);
  const WindowGraph same_work = get(5, 9, 1);
  EXPECT_TRUE(same_work.fresh);
  EXPECT_FALSE(same_work.borrowed);
  EXPECT_EQ(built(), 2u);
}

TEST_F(ChunkWindowsTest, ANewWindowLaterBorrowsTheGraphOfTheSameWork) {
  get(0, 4, 1);
  get(4, 12, 1);
  // A cut moved the chunks: [10, 14) holds what [0, 4) holds, two iterations later.
  const WindowGraph moved = get(10, 14, 3);
  EXPECT_FALSE(moved.fresh);
  EXPECT_TRUE(moved.borrowed);
  EXPECT_EQ(moved.chunk->start, 0u);
  EXPECT_EQ(built(), 2u);
  // Other work ([11, 15): tokens 2..5), another length, or the end of the sequence: built.
  EXPECT_TRUE(get(11, 15, 3).fresh);
  EXPECT_TRUE(get(10, 13, 3).fresh);
  EXPECT_TRUE(get(17, 21, 3).fresh);  // 4, 5, 9 is no iteration
  EXPECT_EQ(built(), 5u);
}

TEST_F(ChunkWindowsTest, AnotherCrossStreamShapeIsNoLender) {
  get(0, 4, 1, /*shape=*/7);
  const WindowGraph g = get(5, 9, 2, /*shape=*/8);
  EXPECT_TRUE(g.fresh);
  EXPECT_FALSE(g.borrowed);
}

TEST_F(ChunkWindowsTest, AWindowThatBorrowsInTwoOccurrencesInARowGetsItsOwn) {
  get(0, 4, 1);
  EXPECT_TRUE(get(5, 9, 2).borrowed);
  // Not in occurrence 3; in 5 again: an accident of timing, it borrows.
  EXPECT_TRUE(get(5, 9, 5).borrowed);
  // In 6 too: it recurs, and would patch the graph of [0, 4) back and forth.
  const WindowGraph own = get(5, 9, 6);
  EXPECT_TRUE(own.fresh);
  EXPECT_FALSE(own.borrowed);
  EXPECT_EQ(own.chunk->start, 5u);
  EXPECT_EQ(built(), 2u);
  const WindowGraph after = get(5, 9, 7);
  EXPECT_FALSE(after.fresh);
  EXPECT_EQ(after.chunk, own.chunk);
  EXPECT_EQ(get(0, 4, 7).chunk, &windows_.all()[0]);
}

TEST_F(ChunkWindowsTest, AWindowThatBorrowsOftenGetsItsOwn) {
  // Cuts whose schedule repeats every second occurrence: never two in a row, but for good.
  get(0, 4, 1);
  for (uint32_t i = 0; i < kBorrowLimit; ++i) {
    EXPECT_TRUE(get(5, 9, 2 + 2 * i).borrowed) << i;
  }
  const WindowGraph own = get(5, 9, 2 + 2 * kBorrowLimit);
  EXPECT_TRUE(own.fresh);
  EXPECT_FALSE(own.borrowed);
  EXPECT_EQ(own.chunk->start, 5u);
}

TEST_F(ChunkWindowsTest, AGraphOfAnotherContextIsNoLender) {
  // Tokens do not name the context: the same layers may run on two devices.
  auto* a = reinterpret_cast<CUcontext>(0x100);
  auto* b = reinterpret_cast<CUcontext>(0x200);
  get(0, 4, 1, 0, a);
  const WindowGraph other = get(5, 9, 2, 0, b);
  EXPECT_TRUE(other.fresh);
  EXPECT_FALSE(other.borrowed);
  EXPECT_TRUE(get(10, 14, 2, 0, a).borrowed);
  EXPECT_TRUE(get(15, 19, 2, 0, b).borrowed);  // of [5, 9), built in b
}

TEST_F(ChunkWindowsTest, AWindowHasAGraphInEachContext) {
  // A graph's kernel nodes run in the context it was built in: the same window followed in
  // another context (the same layers on two devices) is a window of its own there. Before, its
  // graph of context a was replayed for context b (review of a33c6ca).
  auto* a = reinterpret_cast<CUcontext>(0x100);
  auto* b = reinterpret_cast<CUcontext>(0x200);
  const WindowGraph in_a = get(0, 4, 1, 0, a);
  EXPECT_TRUE(in_a.fresh);
  const WindowGraph in_b = get(0, 4, 1, 0, b);
  EXPECT_TRUE(in_b.fresh);
  EXPECT_NE(in_b.chunk, in_a.chunk);
  EXPECT_EQ(in_b.chunk->graph.context(), b);
  for (uint64_t occurrence = 2; occurrence < 6; ++occurrence) {
    const WindowGraph again_a = get(0, 4, occurrence, 0, a);
    const WindowGraph again_b = get(0, 4, occurrence, 0, b);
    EXPECT_FALSE(again_a.fresh || again_b.fresh);
    EXPECT_EQ(again_a.chunk->graph.context(), a);
    EXPECT_EQ(again_b.chunk->graph.context(), b);
  }
  EXPECT_EQ(built(), 2u);
}

TEST_F(ChunkWindowsTest, WindowsWithoutAGraphAreForgottenPastABound) {
  // Windows whose graphs were evicted keep no graph: past kMaxWindows they go with the
  // borrowers, and those with graphs stay where they are found.
  tokens_.resize(ChunkWindows::kMaxWindows + 64);
  for (size_t i = 0; i < tokens_.size(); ++i) tokens_[i] = 100 + i;  // no two windows alike
  get(0, 4, 1).chunk->last_used = 1u << 30;  // replayed last: never the one evicted
  for (uint32_t s = 8; s < ChunkWindows::kMaxWindows + 40; ++s) {
    const WindowGraph g = get(s, s + 2, 2);
    ASSERT_TRUE(g.fresh);
    if (s > 8) {
      EXPECT_TRUE(windows_.evict_least_recent(api_, g.chunk, ~0ull));  // s - 1's
    }
    EXPECT_LE(windows_.all().size(), ChunkWindows::kMaxWindows);
  }
  EXPECT_FALSE(get(0, 4, 3).fresh || built() > 2);
}

TEST_F(ChunkWindowsTest, AGraphWithACopyIsNoLender) {
  // A copy's token does not say what memory its destination is.
  get(0, 4, 1, 0, nullptr, /*copy=*/true);
  const WindowGraph g = get(5, 9, 2);
  EXPECT_TRUE(g.fresh);
  EXPECT_FALSE(g.borrowed);
}

TEST_F(ChunkWindowsTest, WindowsThatOnlyBorrowAreKeptUpToABound) {
  // Cuts that vary for hours: every window new, each the same work as a few with graphs.
  tokens_.assign(3 * ChunkWindows::kMaxBorrowers, 1);
  get(0, 4, 1);
  get(0, 8, 1);
  size_t borrowed = 0;
  for (uint32_t s = 1; s <= ChunkWindows::kMaxBorrowers + 10; ++s) {
    const WindowGraph g = get(s, s + (s % 2 ? 4 : 8), 2);
    borrowed += g.borrowed;
    ASSERT_TRUE(g.borrowed) << s;
    EXPECT_EQ(g.chunk->start, 0u);
    EXPECT_EQ(g.chunk->end - g.chunk->start, s % 2 ? 4u : 8u);  // the lender of its length
    EXPECT_LE(windows_.borrowers(), ChunkWindows::kMaxBorrowers);
  }
  EXPECT_EQ(borrowed, ChunkWindows::kMaxBorrowers + 10);
  EXPECT_EQ(built(), 2u);
  // The graphs of their own stay, where they were looked up.
  EXPECT_FALSE(get(0, 8, 3).fresh);
  EXPECT_FALSE(get(0, 4, 3).fresh);
  EXPECT_EQ(windows_.all().size(), 2 + windows_.borrowers());
}

TEST_F(ChunkWindowsTest, AWindowWhoseLenderIsGoneBuildsItsOwn) {
  get(0, 4, 1);
  EXPECT_TRUE(get(5, 9, 2).borrowed);
  windows_.all()[0].graph.destroy(api_);  // broken or gone
  const WindowGraph own = get(5, 9, 4);
  EXPECT_TRUE(own.fresh);
  EXPECT_EQ(own.chunk->start, 5u);
}

}  // namespace
}  // namespace pygraph
