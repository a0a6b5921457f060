// The pinned staging ring on the driver stand-in: snapshots hold the bytes of the moment, spans
// never run past the end of the ring, and space comes back only once the event fencing it says
// the work that read it is done.
#include "graph/staging_ring.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "standin.h"
#include "standin_driver_api.h"

namespace pygraph {
namespace {

class StagingRingTest : public ::testing::Test {
 protected:
  void SetUp() override { test::fill_standin_driver_api(&api_); }
  DriverApi api_;
};

TEST_F(StagingRingTest, SnapshotsKeepTheBytesOfTheMoment) {
  StagingRing ring(&api_, 1024);
  std::vector<int> src(16, 7);
  void* slot = ring.stage(src.data(), src.size() * 4);
  ASSERT_NE(slot, nullptr);
  std::fill(src.begin(), src.end(), -1);
  EXPECT_EQ(static_cast<int*>(slot)[15], 7);
  EXPECT_TRUE(ring.unfenced());
  ring.fence(nullptr);
  EXPECT_FALSE(ring.unfenced());
  EXPECT_EQ(ring.staged_bytes(), 64u);
  EXPECT_EQ(ring.stage(src.data(), 0), nullptr);    // nothing to stage
  EXPECT_EQ(ring.stage(src.data(), 257), nullptr);  // over a quarter of the ring
}

TEST_F(StagingRingTest, SpaceInFlightIsNeverHandedOutAgain) {
  StagingRing ring(&api_, 1024);     // 16 spans of 64 bytes
  std::vector<uint8_t> src(100, 1);  // 128 bytes with alignment: 8 fit
  std::vector<uint8_t*> slots;
  standin_inject_failure("cuEventQuery", 1000, CUDA_ERROR_NOT_READY);
  for (int i = 0; i < 12; ++i) {
    auto* p = static_cast<uint8_t*>(ring.stage(src.data(), src.size()));
    if (!p) break;
    slots.push_back(p);
    ring.fence(nullptr);
  }
  EXPECT_EQ(slots.size(), 8u) << "the ring holds 8 spans while none is done";
  for (size_t i = 0; i < slots.size(); ++i) {
    for (size_t j = i + 1; j < slots.size(); ++j) {
      EXPECT_GE(std::abs(slots[i] - slots[j]), 128) << "overlapping spans";
    }
  }
  // Done: the oldest spans come back, in order, and no span runs past the end.
  standin_inject_failure("cuEventQuery", 0, CUDA_SUCCESS);
  std::vector<uint8_t> big(200, 2);  // 256 bytes: wraps at some point
  for (int i = 0; i < 40; ++i) {
    auto* p = static_cast<uint8_t*>(
        ring.stage(i % 2 ? big.data() : src.data(), i % 2 ? big.size() : src.size()));
    ASSERT_NE(p, nullptr) << i;
    EXPECT_LE(p + (i % 2 ? big.size() : src.size()), slots[0] + 1024) << i;
    EXPECT_GE(p, slots[0]) << i;
    ring.fence(nullptr);
  }
}

TEST_F(StagingRingTest, NoEventsMeansNoStaging) {
  DriverApi without = api_;
  without.event_create = nullptr;
  StagingRing ring(&without, 1024);
  int v = 3;
  EXPECT_EQ(ring.stage(&v, 4), nullptr);
  standin_inject_failure("cuEventRecord", 1, CUDA_ERROR_INVALID_HANDLE);
  StagingRing fenced(&api_, 1024);
  ASSERT_NE(fenced.stage(&v, 4), nullptr);
  fenced.fence(nullptr);  // cannot fence: the span is never reused, nor is the ring
  EXPECT_EQ(fenced.stage(&v, 4), nullptr);
}

// Counts the ring's pinned allocations; the context it reports as current is set by the test.
int g_allocs = 0;
uint64_t g_current = 0x1000;
decltype(DriverApi::mem_host_alloc) g_real_alloc = nullptr;
CUresult counting_alloc(void** p, size_t bytes, unsigned flags) {
  ++g_allocs;
  return g_real_alloc(p, bytes, flags);
}
CUresult current_ctx(CUcontext* c) {
  *c = reinterpret_cast<CUcontext>(g_current);
  return CUDA_SUCCESS;
}

TEST_F(StagingRingTest, AContextEndForgetsOnlyThatContextsMemory) {
  DriverApi api = api_;
  g_real_alloc = api.mem_host_alloc;
  api.mem_host_alloc = counting_alloc;
  api.ctx_get_current = current_ctx;
  g_allocs = 0;
  StagingRing ring(&api, 1024);
  int v = 5;
  ASSERT_NE(ring.stage(&v, 4), nullptr);  // allocated in context 0x1000
  ring.fence(nullptr);
  EXPECT_EQ(g_allocs, 1);
  ring.context_ends(0x2000);  // another context: the memory stays
  ASSERT_NE(ring.stage(&v, 4), nullptr);
  EXPECT_EQ(g_allocs, 1);
  ring.fence(nullptr);
  ring.context_ends(0x1000);  // its own: forgotten (the context frees it), allocated anew
  EXPECT_FALSE(ring.unfenced());
  g_current = 0x3000;
  void* p = ring.stage(&v, 4);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(g_allocs, 2);
  EXPECT_EQ(*static_cast<int*>(p), 5);
  ring.fence(nullptr);
  ring.context_ends(0);  // a primary-context reset: whose context is not known, so forgotten
  ASSERT_NE(ring.stage(&v, 4), nullptr);
  EXPECT_EQ(g_allocs, 3);
}

}  // namespace
}  // namespace pygraph
