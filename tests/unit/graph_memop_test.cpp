// Memsets and copies inside sequences, on the driver stand-in: a step of kernels interleaved with
// async memsets, device copies and copies from pageable and pinned host memory runs through the
// engine and, side by side, directly; after every step the host compares both arms' buffers bit
// for bit. The stand-in runs work at submission, so a copy node that read a pageable source at
// replay instead of its snapshot, or a memop issued out of order, shows as a difference.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "graph/graph_engine.h"
#include "standin.h"
#include "standin_driver_api.h"

namespace pygraph {
namespace {

constexpr int kN = 64;  // floats per buffer

void scale(const unsigned*, const unsigned*, void** p) {  // y = y * a + 1
  float a = *static_cast<float*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kN; ++i) y[i] = y[i] * a + 1.0f;
}
void addk(const unsigned*, const unsigned*, void** p) {  // y += step * (i + 1)
  int step = *static_cast<int*>(p[0]);
  auto* y = reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(p[1]));
  for (int i = 0; i < kN; ++i) y[i] += float(step * (i + 1));
}

using test::take;

// The exact counts below assume chunks of 8, 16, ... (the default first chunk is 2).
EngineOptions chunks_from_8() {
  EngineOptions o;
  o.first_chunk = 8;
  return o;
}

class GraphMemopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    take(&launch_, "cuLaunchKernel");
    take(&set8_, "cuMemsetD8Async");
    take(&set32_, "cuMemsetD32Async");
    take(&dtod_, "cuMemcpyDtoDAsync_v2");
    take(&htod_, "cuMemcpyHtoDAsync_v2");
    take(&dtoh_, "cuMemcpyDtoHAsync_v2");
    decltype(&cuMemAlloc_v2) alloc;
    decltype(&cuMemAllocHost_v2) alloc_host;
    take(&alloc, "cuMemAlloc_v2");
    take(&alloc_host, "cuMemAllocHost_v2");
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "m_scale", &scale, 2, sizes);
    addk_ = test::standin_kernel(&table_, "m_addk", &addk, 2, sizes);
    for (int arm = 0; arm < 2; ++arm) {
      ASSERT_EQ(alloc(&y_[arm], kN * 4), CUDA_SUCCESS);
      ASSERT_EQ(alloc(&t_[arm], kN * 4), CUDA_SUCCESS);
      ASSERT_EQ(alloc_host(reinterpret_cast<void**>(&pinned_[arm]), kN * 4), CUDA_SUCCESS);
      for (int i = 0; i < kN; ++i) {
        reinterpret_cast<float*>(y_[arm])[i] = float(i) * 0.25f;
        reinterpret_cast<float*>(t_[arm])[i] = 0.0f;
        pinned_[arm][i] = float(i);
      }
    }
    engine_ = &default_engine_;
  }

  // A kernel launch, through the engine (arm 0) and directly (arm 1).
  void kernel(const FunctionInfo* f, void* scalar) {
    for (int arm = 0; arm < 2; ++arm) {
      void* p[] = {scalar, &y_[arm]};
      if (arm == 0) {
        ASSERT_EQ(engine_->launch(test::engine_launch(
                      Op::LaunchKernel, reinterpret_cast<void*>(launch_), f, 1, 32, nullptr, p)),
                  CUDA_SUCCESS);
      } else {
        ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(f->handle), 1, 1, 1, 32, 1, 1, 0, nullptr, p,
                          nullptr),
                  CUDA_SUCCESS);
      }
    }
  }

  // A memop through the engine; the reference arm calls `eager` itself.
  CUresult memop(Op op, void* eager, uint64_t dst, uint64_t src, size_t count, uint32_t value) {
    return engine_->memop(MemopCall{op, eager, false, nullptr, dst, src, count, value});
  }
  void set32(int buf, size_t offset, float value, size_t count) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    ASSERT_EQ(memop(Op::MemsetD32Async, reinterpret_cast<void*>(set32_), at(buf, 0, offset), 0,
                    count, bits),
              CUDA_SUCCESS);
    ASSERT_EQ(set32_(at(buf, 1, offset), bits, count, nullptr), CUDA_SUCCESS);
  }
  void set8(int buf, size_t offset, unsigned char value, size_t count) {
    ASSERT_EQ(memop(Op::MemsetD8Async, reinterpret_cast<void*>(set8_), at(buf, 0, offset), 0, count,
                    value),
              CUDA_SUCCESS);
    ASSERT_EQ(set8_(at(buf, 1, offset), value, count, nullptr), CUDA_SUCCESS);
  }
  void copy_dd(int dst, size_t dst_off, int src, size_t src_off, size_t floats) {
    ASSERT_EQ(memop(Op::MemcpyDtoDAsync, reinterpret_cast<void*>(dtod_), at(dst, 0, dst_off),
                    at(src, 0, src_off), floats * 4, 0),
              CUDA_SUCCESS);
    ASSERT_EQ(dtod_(at(dst, 1, dst_off), at(src, 1, src_off), floats * 4, nullptr), CUDA_SUCCESS);
  }
  // From pageable memory the program overwrites right after the call, as it may.
  void copy_pageable(int dst, size_t dst_off, float value, size_t floats) {
    for (int arm = 0; arm < 2; ++arm) {
      std::vector<float> src(floats, value);
      if (arm == 0) {
        ASSERT_EQ(memop(Op::MemcpyHtoDAsync, reinterpret_cast<void*>(htod_), at(dst, 0, dst_off),
                        reinterpret_cast<uint64_t>(src.data()), floats * 4, 0),
                  CUDA_SUCCESS);
      } else {
        ASSERT_EQ(htod_(at(dst, 1, dst_off), src.data(), floats * 4, nullptr), CUDA_SUCCESS);
      }
      std::fill(src.begin(), src.end(), -1.0f);
    }
  }
  void copy_pinned(int dst, size_t dst_off, size_t src_off, size_t floats) {
    ASSERT_EQ(memop(Op::MemcpyHtoDAsync, reinterpret_cast<void*>(htod_), at(dst, 0, dst_off),
                    reinterpret_cast<uint64_t>(pinned_[0] + src_off), floats * 4, 0),
              CUDA_SUCCESS);
    ASSERT_EQ(htod_(at(dst, 1, dst_off), pinned_[1] + src_off, floats * 4, nullptr), CUDA_SUCCESS);
  }

  // The host reads after a stream sync: flush, compare both arms, end the segment.
  void host_read(const std::string& when) {
    ASSERT_EQ(engine_->before_op(Op::StreamSynchronize, nullptr, false), CUDA_SUCCESS);
    ASSERT_EQ(std::memcmp(ptr(0, 0), ptr(0, 1), kN * 4), 0) << "y " << when;
    ASSERT_EQ(std::memcmp(ptr(1, 0), ptr(1, 1), kN * 4), 0) << "t " << when;
    engine_->after_op(Op::StreamSynchronize, nullptr, false, CUDA_SUCCESS);
  }

  // 12 items: 6 kernels, 2 memsets (one value per step), 2 device copies, one pageable and one
  // pinned host-to-device copy, then the host reads.
  void step(int n) {
    float a = 0.5f;
    kernel(scale_, &a);
    set32(1, 0, float(n), kN / 2);
    kernel(addk_, &n);
    copy_dd(1, kN / 2, 0, 0, kN / 4);
    kernel(scale_, &a);
    copy_pageable(0, 8, float(n) * 3.0f, 8);
    kernel(addk_, &n);
    copy_dd(0, 16, 1, 0, 8);
    kernel(scale_, &a);
    set8(1, 48, static_cast<unsigned char>(n), 16);
    kernel(addk_, &n);
    copy_pinned(0, 40, size_t(n % 4), 8);
    host_read("after step " + std::to_string(n));
  }

  void expect_all_accounted() {
    ASSERT_TRUE(engine_->idle());
    const EngineStats& s = engine_->stats();
    EXPECT_EQ(s.launches, s.replayed + s.eager_total());
    EXPECT_EQ(s.memops, s.memops_replayed + s.memop_eager_total());
  }

  CUdeviceptr at(int buf, int arm, size_t float_offset) {
    return (buf == 0 ? y_[arm] : t_[arm]) + float_offset * 4;
  }
  void* ptr(int buf, int arm) { return reinterpret_cast<void*>(at(buf, arm, 0)); }

  DriverApi api_;
  FunctionTable table_{&api_};
  GraphEngine default_engine_{&api_, chunks_from_8()};
  GraphEngine* engine_ = nullptr;
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuMemsetD8Async) set8_ = nullptr;
  decltype(&cuMemsetD32Async) set32_ = nullptr;
  decltype(&cuMemcpyDtoDAsync_v2) dtod_ = nullptr;
  decltype(&cuMemcpyHtoDAsync_v2) htod_ = nullptr;
  decltype(&cuMemcpyDtoHAsync_v2) dtoh_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  const FunctionInfo* addk_ = nullptr;
  CUdeviceptr y_[2] = {}, t_[2] = {};
  float* pinned_[2] = {};
};

TEST_F(GraphMemopTest, MemsetsAndCopiesAreNodesOfTheReplayedGraphs) {
  const auto graphs_before = standin_graph_launches();
  for (int n = 1; n <= 10; ++n) step(n);
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.memops, 60u);
  // Steps 3..10 replay all 12 items in two chunks (8 + 4): no memop cuts them.
  EXPECT_EQ(s.memops_replayed, 8u * 6u);
  EXPECT_EQ(s.replayed, 8u * 6u);
  EXPECT_EQ(s.replays, 16u);
  EXPECT_EQ(standin_graph_launches() - graphs_before, 16u);
  EXPECT_EQ(s.graphs_built, 2u);
  EXPECT_EQ(s.flushes_total(), 0u);
  // Each replay's pageable copy read its own snapshot.
  EXPECT_EQ(s.staged_bytes, 8u * 8u * 4u);
  // Patched every step: the memset values, the snapshot addresses, the pinned source offset, the
  // step arguments.
  EXPECT_GE(s.patched_nodes, 7u * 6u);
  expect_all_accounted();
}

TEST_F(GraphMemopTest, ACopyCutShortByASyncEveryStepGoesOutAsItComesWithoutASnapshot) {
  // Each step: 8 kernels, then a pageable copy the host syncs right after (PyTorch's
  // torch.tensor(..., device="cuda")). The kernels replay (in 11 of the 12 steps) as one chunk of
  // 8 and the copy is a chunk of its own, cut short by the sync: deferred, snapshotted, then
  // sent out eagerly. After LoneStarts::kLimit such steps it goes out as it comes.
  for (int n = 1; n <= 12; ++n) {
    float a = 0.5f;
    for (int k = 0; k < 4; ++k) {
      kernel(scale_, &a);
      kernel(addk_, &n);
    }
    copy_pageable(0, 8, float(n) * 3.0f, 8);
    host_read("after step " + std::to_string(n));
  }
  const EngineStats& s = engine_->stats();
  EXPECT_EQ(s.replayed, 8u * 11u);
  EXPECT_EQ(s.memops_replayed, 0u);
  EXPECT_EQ(s.staged_bytes, LoneStarts::kLimit * 8u * 4u) << "snapshots after the copy was lone";
  expect_all_accounted();
}

TEST_F(GraphMemopTest, SnapshotsStillInFlightAreNeverOverwritten) {
  // A ring of 256 bytes holds 4 snapshots of 32 bytes (64 with alignment: a quarter each).
  EngineOptions o = chunks_from_8();
  o.staging_bytes = 256;
  GraphEngine small{&api_, o};
  engine_ = &small;
  for (int n = 1; n <= 4; ++n) step(n);
  // The GPU "has not finished" any replay: the ring fills, and pageable copies go out eagerly
  // (the driver takes its own snapshot) instead of overwriting a snapshot in flight.
  standin_inject_failure("cuEventQuery", 1000, CUDA_ERROR_NOT_READY);
  for (int n = 5; n <= 10; ++n) step(n);
  EXPECT_GT(small.stats().memop_eager[static_cast<int>(EagerReason::kStagingFull)], 0u);
  const uint64_t replays = small.stats().replays;
  standin_inject_failure("cuEventQuery", 0, CUDA_SUCCESS);
  // Once the work is done, the space is reused and whole steps replay again.
  for (int n = 11; n <= 16; ++n) step(n);
  EXPECT_GE(small.stats().replays - replays, 10u);
  expect_all_accounted();
}

TEST_F(GraphMemopTest, MemsetPatchOrBuildFailureFallsBackEagerly) {
  for (int n = 1; n <= 4; ++n) step(n);
  standin_inject_failure("cuGraphExecMemsetNodeSetParams", 1, CUDA_ERROR_INVALID_VALUE);
  for (int n = 5; n <= 7; ++n) step(n);
  EXPECT_EQ(engine_->stats().graph_failures, 1u);

  GraphEngine other{&api_, chunks_from_8()};
  engine_ = &other;
  for (int n = 1; n <= 2; ++n) step(n);
  standin_inject_failure("cuGraphAddMemsetNode", 1, CUDA_ERROR_NOT_SUPPORTED);
  for (int n = 3; n <= 5; ++n) step(n);
  EXPECT_EQ(other.stats().graph_failures, 1u);
  expect_all_accounted();
}

TEST_F(GraphMemopTest, MemopsNoNodeCanHoldStayEagerAndEndTheSequence) {
  std::vector<float> pageable(kN, 1.0f);
  for (int n = 1; n <= 4; ++n) {
    float a = 0.5f;
    for (int i = 0; i < 4; ++i) kernel(scale_, &a);
    // A memset of pageable host memory, a copy into it (the host would wait for it), an empty
    // copy: none can be a node.
    const auto host = reinterpret_cast<uint64_t>(pageable.data());
    ASSERT_EQ(memop(Op::MemsetD32Async, reinterpret_cast<void*>(set32_), host, 0, 4, 7),
              CUDA_SUCCESS);
    ASSERT_EQ(memop(Op::MemcpyDtoHAsync, reinterpret_cast<void*>(dtoh_), host, y_[0], kN * 4, 0),
              CUDA_SUCCESS);
    EXPECT_EQ(std::memcmp(pageable.data(), ptr(0, 1), kN * 4), 0)
        << "the copy into pageable memory ran after the launches before it";
    ASSERT_EQ(memop(Op::MemcpyDtoDAsync, reinterpret_cast<void*>(dtod_), t_[0], y_[0], 0, 0),
              CUDA_SUCCESS);
    for (int i = 0; i < 4; ++i) kernel(addk_, &n);
    host_read("after step " + std::to_string(n));
  }
  EXPECT_EQ(engine_->stats().memop_eager[static_cast<int>(EagerReason::kMemopOperands)], 12u);
  EXPECT_EQ(engine_->stats().memops_recorded, 0u);
  expect_all_accounted();
}

TEST_F(GraphMemopTest, SequencesMayBeginWithAMemopAfterACopyIntoPageableMemory) {
  // The shape of a decode step: launches, a copy of a result into pageable memory (no node can
  // hold it: it ends the segment), then an input copied up and more launches before the sync.
  // Both segments begin where the previous one ended; the second begins with a memop.
  std::vector<float> pageable(kN, 1.0f);
  for (int n = 1; n <= 10; ++n) {
    float a = 0.5f;
    for (int i = 0; i < 3; ++i) kernel(scale_, &a);
    ASSERT_EQ(memop(Op::MemcpyDtoHAsync, reinterpret_cast<void*>(dtoh_),
                    reinterpret_cast<uint64_t>(pageable.data()), y_[0], kN * 4, 0),
              CUDA_SUCCESS);
    copy_pageable(0, 8, float(n), 8);
    for (int i = 0; i < 3; ++i) kernel(addk_, &n);
    host_read("after step " + std::to_string(n));
  }
  const EngineStats& s = engine_->stats();
  // From the third step on, both segments replay: 6 launches and the input copy per step.
  EXPECT_EQ(s.replayed, 8u * 6u);
  EXPECT_EQ(s.memops_replayed, 8u);
  EXPECT_EQ(s.memop_eager[static_cast<int>(EagerReason::kMemopOperands)], 10u);
  expect_all_accounted();
}

}  // namespace
}  // namespace pygraph
