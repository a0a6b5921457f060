// The GPU time of replays (gpu_timer.h) on the driver stand-in, whose kernels each advance a
// simulated GPU clock: timings read in the order taken, never before they completed, with the
// idle time before a chained one, at most kSlots - 1 in flight, lost where the driver errs or
// the context ends.
#include "graph/gpu_timer.h"

#include <gtest/gtest.h>

#include <vector>

#include "standin.h"
#include "standin_driver_api.h"
#include "test_kernels.h"

namespace pygraph {
namespace {

// The host's clock, moved by hand (a launch call that blocks: the test moves it).
uint64_t g_clock = 0;
uint64_t test_clock() {
  return g_clock;
}

class GpuTimerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::fill_standin_driver_api(&api_);
    test::take(&launch_, "cuLaunchKernel");
    test::take(&stream_create_, "cuStreamCreate");
    const size_t sizes[2] = {4, 8};
    scale_ = test::standin_kernel(&table_, "timer_scale", &test::scale_kernel, 2, sizes);
    ctx_ = standin_context_create();
    standin_set_kernel_ns(5'000);
  }
  void TearDown() override {
    standin_set_async(0);
    standin_set_timer_progress(0);
    standin_set_kernel_ns(1'000);
  }

  // `kernels` launches on `stream` timed under a tag that ends at `place`; false: not timed.
  bool timed(GpuTimer& t, CUstream stream, int kernels, uint32_t place, bool chained = false) {
    const CUevent start = t.begin(ctx_);
    if (!start) return false;
    EXPECT_EQ(api_.event_record(start, stream), CUDA_SUCCESS);
    for (int i = 0; i < kernels; ++i) launch(stream);
    return t.end(stream, GpuTimer::Tag{7, 1, 0, place, chained}, true);
  }
  void launch(CUstream stream) {
    float a = 1.5f;
    CUdeviceptr y = reinterpret_cast<CUdeviceptr>(y_);
    void* p[] = {&a, &y};
    ASSERT_EQ(launch_(reinterpret_cast<CUfunction>(scale_->handle), 1, 1, 1, 32, 1, 1, 0, stream, p,
                      nullptr),
              CUDA_SUCCESS);
  }
  std::vector<std::pair<uint32_t, uint64_t>> poll(GpuTimer& t,
                                                  std::vector<uint64_t>* idle = nullptr,
                                                  std::vector<uint64_t>* host = nullptr) {
    std::vector<std::pair<uint32_t, uint64_t>> got;
    t.poll([&](const GpuTimer::Tag& tag, uint64_t ns, uint64_t idle_ns, uint64_t host_ns) {
      EXPECT_EQ(tag.sequence, 7u);
      got.emplace_back(tag.end, ns);
      if (idle) idle->push_back(idle_ns);
      if (host) host->push_back(host_ns);
    });
    return got;
  }

  DriverApi api_;
  FunctionTable table_{&api_};
  decltype(&cuLaunchKernel) launch_ = nullptr;
  decltype(&cuStreamCreate) stream_create_ = nullptr;
  const FunctionInfo* scale_ = nullptr;
  CUcontext ctx_ = nullptr;
  float y_[test::kKernelFloats] = {};
};

TEST_F(GpuTimerTest, TheGpuTimeOfWhatRanBetweenTheEvents) {
  GpuTimer t(&api_, &test_clock);
  ASSERT_TRUE(timed(t, nullptr, 3, 1));
  ASSERT_TRUE(timed(t, nullptr, 1, 2));
  EXPECT_TRUE(t.busy());
  const auto got = poll(t);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(1u, uint64_t(15'000)));
  EXPECT_EQ(got[1], std::make_pair(2u, uint64_t(5'000)));
  EXPECT_FALSE(t.busy());
}

TEST_F(GpuTimerTest, TheHostsTimeFromTakingTheSlotToTheEndRecordRidesWithTheGpuTime) {
  // A launch call that blocks 250 us on the host (the clock moved between the two records):
  // the host time says so beside the GPU time, which the stand-in's GPU clock keeps apart.
  GpuTimer t(&api_, &test_clock);
  g_clock = 1'000'000;
  const CUevent start = t.begin(ctx_);
  ASSERT_NE(start, nullptr);
  ASSERT_EQ(api_.event_record(start, nullptr), CUDA_SUCCESS);
  g_clock += 250'000;
  launch(nullptr);
  ASSERT_TRUE(t.end(nullptr, GpuTimer::Tag{7, 1, 0, 1}, true));
  g_clock += 1'000'000;                  // after the end record: none of the chunk's
  ASSERT_TRUE(timed(t, nullptr, 2, 2));  // nothing blocks
  std::vector<uint64_t> host;
  const auto got = poll(t, nullptr, &host);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].second, 5'000u);
  EXPECT_EQ(host, (std::vector<uint64_t>{250'000, 0}));
}

TEST_F(GpuTimerTest, TheIdleTimeBeforeAChainedTiming) {
  // The simulated GPU idles 40 us between the two (the stand-in's clock, as while the host
  // pauses): the second, chained, gets it; one not chained gets none.
  GpuTimer t(&api_, &test_clock);
  ASSERT_TRUE(timed(t, nullptr, 2, 1));
  standin_gpu_idle(40'000);
  ASSERT_TRUE(timed(t, nullptr, 1, 2, true));
  ASSERT_TRUE(timed(t, nullptr, 1, 3, true));  // at once: no idle time
  standin_gpu_idle(40'000);
  ASSERT_TRUE(timed(t, nullptr, 1, 4));
  std::vector<uint64_t> idle;
  const auto got = poll(t, &idle);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1].second, 5'000u);  // the GPU time holds none of it
  EXPECT_EQ(idle, (std::vector<uint64_t>{GpuTimer::kLost, 40'000, 0, GpuTimer::kLost}));
}

TEST_F(GpuTimerTest, AtMostKSlotsLessOneInFlight) {
  // The slot before the oldest in flight keeps its end event for the idle time of the next.
  GpuTimer t(&api_, &test_clock);
  constexpr uint32_t kMost = GpuTimer::kSlots - 1;
  for (uint32_t i = 0; i < kMost; ++i) ASSERT_TRUE(timed(t, nullptr, 1, i, i > 0));
  EXPECT_FALSE(timed(t, nullptr, 1, 99));  // no free slot: not timed
  std::vector<uint64_t> idle;
  const auto got = poll(t, &idle);
  ASSERT_EQ(got.size(), kMost);
  for (uint32_t i = 0; i < kMost; ++i) EXPECT_EQ(got[i].first, i);  // in order
  for (uint32_t i = 1; i < kMost; ++i) EXPECT_EQ(idle[i], 0u);
  for (uint32_t i = 0; i < 2 * GpuTimer::kSlots; ++i) {  // around the ring, chained
    standin_gpu_idle(1'000);
    ASSERT_TRUE(timed(t, nullptr, 1, i, true));
    idle.clear();
    ASSERT_EQ(poll(t, &idle).size(), 1u);
    EXPECT_EQ(idle[0], 1'000u) << i;
  }
}

TEST_F(GpuTimerTest, ATimingStillRunningIsReadLaterAndHoldsUpTheOnesAfterIt) {
  standin_set_async(1);
  standin_set_timer_progress(1);
  CUstream s = nullptr;
  ASSERT_EQ(stream_create_(&s, 0), CUDA_SUCCESS);
  GpuTimer t(&api_, &test_clock);
  ASSERT_TRUE(timed(t, s, 2, 1));
  ASSERT_TRUE(timed(t, s, 1, 2));
  // Queued, not run: "not ready" (the stand-in runs a pending record once it answered so).
  EXPECT_TRUE(poll(t).empty());
  EXPECT_TRUE(t.busy());
  auto got = poll(t);  // the first, then "not ready" for the second: the poll stops there
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], std::make_pair(1u, uint64_t(10'000)));
  got = poll(t);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], std::make_pair(2u, uint64_t(5'000)));
  EXPECT_FALSE(t.busy());
}

TEST_F(GpuTimerTest, ADriverErrorLosesTheTiming) {
  GpuTimer t(&api_, &test_clock);
  ASSERT_TRUE(timed(t, nullptr, 1, 1));
  ASSERT_TRUE(timed(t, nullptr, 1, 2));
  standin_inject_failure("cuEventElapsedTime", 1, CUDA_ERROR_INVALID_HANDLE);
  const auto got = poll(t);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].second, GpuTimer::kLost);
  EXPECT_EQ(got[1].second, 5'000u);
}

TEST_F(GpuTimerTest, AFailedLaunchOrRecordIsNotInFlight) {
  GpuTimer t(&api_, &test_clock);
  ASSERT_NE(t.begin(ctx_), nullptr);
  EXPECT_FALSE(t.end(nullptr, GpuTimer::Tag{7, 1, 0, 1}, false));
  ASSERT_NE(t.begin(ctx_), nullptr);
  standin_inject_failure("cuEventRecord", 1, CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_FALSE(t.end(nullptr, GpuTimer::Tag{7, 1, 0, 1}, true));
  EXPECT_FALSE(t.busy());
}

TEST_F(GpuTimerTest, StartRecordsTheStartEventOrSaysNoTiming) {
  // Calls made now (an eager chunk, a lone launch): start() where the start event's record
  // fails says no timing, and nothing is in flight; where it succeeds, end() takes the slot.
  GpuTimer t(&api_, &test_clock);
  standin_inject_failure("cuEventRecord", 1, CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_FALSE(t.start(ctx_, nullptr));
  EXPECT_FALSE(t.busy());
  EXPECT_FALSE(t.start(standin_context_create(), nullptr));  // t is bound to ctx_ now
  ASSERT_TRUE(t.start(ctx_, nullptr));
  EXPECT_TRUE(t.end(nullptr, GpuTimer::Tag{7, 1, 0, 1}, true));
  EXPECT_TRUE(t.busy());
}

TEST_F(GpuTimerTest, OneContextOnlyAndNothingWithoutTheTimingCall) {
  GpuTimer t(&api_, &test_clock);
  ASSERT_NE(t.begin(ctx_), nullptr);
  EXPECT_EQ(t.begin(standin_context_create()), nullptr);
  EXPECT_EQ(t.begin(nullptr), nullptr);  // no context current: another one
  DriverApi old = api_;
  old.event_elapsed_time = nullptr;  // a driver without it
  GpuTimer none(&old, &test_clock);
  EXPECT_EQ(none.begin(ctx_), nullptr);
}

TEST_F(GpuTimerTest, AContextsEndLosesWhatIsInFlight) {
  GpuTimer t(&api_, &test_clock);
  ASSERT_TRUE(timed(t, nullptr, 1, 1));
  ASSERT_TRUE(timed(t, nullptr, 1, 2));
  std::vector<uint32_t> lost;
  t.forget([&](const GpuTimer::Tag& tag, uint64_t ns, uint64_t idle_ns, uint64_t host_ns) {
    EXPECT_EQ(ns, GpuTimer::kLost);
    EXPECT_EQ(idle_ns, GpuTimer::kLost);
    EXPECT_EQ(host_ns, GpuTimer::kLost);
    lost.push_back(tag.end);
  });
  EXPECT_EQ(lost, (std::vector<uint32_t>{1, 2}));
  EXPECT_FALSE(t.busy());
  const CUcontext next = standin_context_create();
  EXPECT_NE(t.begin(next), nullptr);  // bound to the next context that asks
}

}  // namespace
}  // namespace pygraph
